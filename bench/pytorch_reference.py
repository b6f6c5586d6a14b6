#!/usr/bin/env python3
"""The PyTorch side of CNN Studio's speed comparisons.

Builds the same network as a CNN Studio spec (a preset name such as `fer-cnn`, or a spec file),
trains it on random data and prints one JSON line per configuration: images per second of a full
training step (forward, backward, SGD-momentum update), the median of three timed runs after
warm-up. Its lines have the keys of `cnnstudio-bench`'s, so the two can be put side by side; run
both in one command on one machine.

  python3 bench/pytorch_reference.py --batch 256                        # fp32, tf32, bf16 (+ -cl)
  python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl --compile max-autotune
  python3 bench/pytorch_reference.py --device cpu --threads 16 --batch 64  # fp32, bf16 (+ -cl)
  torchrun --nproc-per-node 2 bench/pytorch_reference.py --ddp --batch 256   # batch per GPU

Modes: fp32 (strict: TF32 off), tf32, bf16 (autocast); a `-cl` suffix keeps activations
channels-last. On the CPU: fp32 and bf16 (autocast on the CPU: oneDNN's AMX or AVX512-BF16
kernels where the CPU has them), each also `-cl`; tf32 is a GPU mode. --compile MODE wraps the model in torch.compile (default, reduce-overhead,
max-autotune, max-autotune-no-cudagraphs): PyTorch at its fastest, not only eager.

The module's parameter and buffer names are those of CNN Studio's model.safetensors
("conv1_1.weight", "bn1_1.running_mean", "m1_sep1.depthwise.weight"), so our weights load into it
with load_state_dict_in_our_names (docs/interchange.md, "Weights outside CNN Studio").
"""
import argparse
import json
import os
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = Path(__file__).resolve().parent.parent / 'resources' / 'presets'


def pair(value):
    """A spec's n or [height, width] as (height, width)."""
    return tuple(value) if isinstance(value, list) else (value, value)


def conv_padding(params, kernel):
    padding = params.get('padding', 'valid')
    if padding == 'valid':
        return (0, 0)
    if padding == 'same':  # (kernel - 1) / 2 on each side, odd kernels
        return ((kernel[0] - 1) // 2, (kernel[1] - 1) // 2)
    return pair(padding)


class SeparableConv2d(nn.Module):
    """Depthwise (no bias) then 1x1 pointwise, as CNN Studio's SeparableConv2D."""

    def __init__(self, channels, filters, kernel, stride, padding, bias):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, kernel, stride, padding, groups=channels, bias=False)
        self.pointwise = nn.Conv2d(channels, filters, 1, bias=bias)

    def forward(self, x):
        return self.pointwise(self.depthwise(x))


class Concat(nn.Module):
    def forward(self, *inputs):
        return torch.cat(inputs, dim=1)


class Add(nn.Module):
    def forward(self, *inputs):
        total = inputs[0]
        for other in inputs[1:]:
            total = total + other
        return total


class GlobalAvgPool(nn.Module):
    def forward(self, x):
        return x.mean(dim=(2, 3))


def make_layer(node, in_shapes):
    """The torch module for one spec node and its output shape (channels, height, width) or (features,)."""
    kind, params = node['type'], node.get('params', {})
    shape = in_shapes[0] if in_shapes else None
    if kind in ('Conv2D', 'SeparableConv2D'):
        channels, height, width = shape
        kernel, stride = pair(params['kernel']), pair(params.get('stride', 1))
        padding = conv_padding(params, kernel)
        bias = params.get('bias', True)
        if kind == 'Conv2D':
            module = nn.Conv2d(channels, params['filters'], kernel, stride, padding,
                               groups=params.get('groups', 1), bias=bias)
        else:
            module = SeparableConv2d(channels, params['filters'], kernel, stride, padding, bias)
        out_h = (height + 2 * padding[0] - kernel[0]) // stride[0] + 1
        out_w = (width + 2 * padding[1] - kernel[1]) // stride[1] + 1
        return module, (params['filters'], out_h, out_w)
    if kind in ('MaxPool2D', 'AvgPool2D'):
        channels, height, width = shape
        kernel = pair(params.get('kernel', 2))
        stride = pair(params.get('stride', params.get('kernel', 2)))
        padding = pair(params.get('padding', 0))
        # Our average divides by the window's non-padding elements.
        module = (nn.MaxPool2d(kernel, stride, padding) if kind == 'MaxPool2D'
                  else nn.AvgPool2d(kernel, stride, padding, count_include_pad=False))
        out_h = (height + 2 * padding[0] - kernel[0]) // stride[0] + 1
        out_w = (width + 2 * padding[1] - kernel[1]) // stride[1] + 1
        return module, (channels, out_h, out_w)
    if kind == 'BatchNorm2D':
        return nn.BatchNorm2d(shape[0], eps=params.get('epsilon', 1e-5),
                              momentum=params.get('momentum', 0.1)), shape
    if kind == 'ReLU':
        return nn.ReLU(), shape
    if kind == 'LeakyReLU':
        return nn.LeakyReLU(params.get('alpha', 0.01)), shape
    if kind == 'ELU':
        return nn.ELU(params.get('alpha', 1.0)), shape
    if kind == 'SiLU':
        return nn.SiLU(), shape
    if kind == 'Dropout':
        return nn.Dropout(params.get('rate', 0.5)), shape
    if kind == 'Flatten':
        features = 1
        for size in shape:
            features *= size
        return nn.Flatten(), (features,)
    if kind == 'GlobalAvgPool':
        return GlobalAvgPool(), (shape[0],)
    if kind == 'Dense':
        return nn.Linear(shape[0], params['units'], bias=params.get('bias', True)), (params['units'],)
    if kind == 'Add':
        return Add(), shape
    if kind == 'Concat':
        return Concat(), (sum(s[0] for s in in_shapes),) + tuple(shape[1:])
    raise ValueError(f"node '{node['name']}': layer type {kind} has no PyTorch counterpart here")


class SpecNetwork(nn.Module):
    """A CNN Studio network spec (a DAG of named nodes) as one torch module."""

    def __init__(self, spec):
        super().__init__()
        nodes = {node['name']: node for node in spec['nodes']}
        self.order, shapes = [], {}
        self.layers = nn.ModuleDict()
        pending = list(spec['nodes'])
        while pending:  # topological order: a node once all its inputs are placed
            ready = [n for n in pending if all(i in shapes for i in n.get('inputs', []))]
            if not ready:
                raise ValueError('the spec has a cycle or an input that names no node')
            for node in ready:
                pending.remove(node)
                if node['type'] == 'Input':
                    p = node['params']
                    shapes[node['name']] = (p['channels'], p['height'], p['width'])
                    self.input_name, self.input_shape = node['name'], shapes[node['name']]
                    continue
                module, shapes[node['name']] = make_layer(node, [shapes[i] for i in node['inputs']])
                self.layers[node['name']] = module
                self.order.append((node['name'], list(node['inputs'])))
        consumed = {i for node in nodes.values() for i in node.get('inputs', [])}
        self.output_name = next(name for name in nodes if name not in consumed)
        self.classes = shapes[self.output_name][0]

    def forward(self, x):
        values = {self.input_name: x}
        for name, inputs in self.order:
            values[name] = self.layers[name](*[values[i] for i in inputs])
        return values[self.output_name]

    def state_dict_in_our_names(self):
        """The state dict with the `layers.` prefix ModuleDict adds taken off: model.safetensors' names."""
        return {key.removeprefix('layers.'): value for key, value in self.state_dict().items()
                if not key.endswith('num_batches_tracked')}

    def load_state_dict_in_our_names(self, tensors):
        """Loads model.safetensors' tensors (safetensors.torch.load_file), strictly: every one of ours
        and every parameter and buffer of the module. num_batches_tracked, a counter CNN Studio does
        not keep, stays as it is; it matters only to batch norms without a momentum."""
        state = {'layers.' + name: value for name, value in tensors.items()}
        state.update({key: value for key, value in self.state_dict().items() if key.endswith('num_batches_tracked')})
        self.load_state_dict(state, strict=True)


def load_spec(model):
    path = Path(model)
    if not path.exists():
        path = PRESETS / f'{model}.json'
    with open(path) as file:
        return json.load(file)


def measure(spec, device, batch, mode, steps, warmup, ddp=False, compile_mode=None):
    torch.manual_seed(0)
    model = SpecNetwork(spec).to(device)
    x = torch.randn(batch, *model.input_shape, device=device)
    y = torch.randint(0, model.classes, (batch,), device=device)
    if mode.endswith('-cl'):
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    if compile_mode:
        model = torch.compile(model, mode=None if compile_mode == 'default' else compile_mode)
    if ddp:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
    tf32 = mode.startswith('tf32')
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        optimiser.zero_grad(set_to_none=True)
        with torch.autocast(device.split(':')[0], dtype=torch.bfloat16, enabled=mode.startswith('bf16')):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimiser.step()

    on_gpu = device.startswith('cuda')
    synchronize = torch.cuda.synchronize if on_gpu else (lambda: None)
    for _ in range(warmup):
        step()
    synchronize()
    seconds = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        synchronize()
        seconds.append(time.perf_counter() - start)
    return batch * steps / sorted(seconds)[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--model', default='fer-cnn', help='a preset name or a spec file')
    parser.add_argument('--device', default='cuda')
    parser.add_argument('--batch', type=int, nargs='*', default=[64, 256, 1024])
    parser.add_argument('--modes', nargs='*',
                        help='default: fp32 tf32 tf32-cl bf16 bf16-cl on a GPU, fp32 fp32-cl bf16 bf16-cl on the CPU')
    parser.add_argument('--steps', type=int, default=40)
    parser.add_argument('--threads', type=int, default=0)
    parser.add_argument('--ddp', action='store_true', help='one process per GPU, under torchrun')
    parser.add_argument('--compile', default=None, help='torch.compile mode')
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True
    if args.threads:
        torch.set_num_threads(args.threads)
    device, rank, world = args.device, 0, 1
    if args.ddp:
        torch.distributed.init_process_group('nccl')
        rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
        torch.cuda.set_device(int(os.environ.get('LOCAL_RANK', 0)))
        device = 'cuda'
    on_gpu = device.startswith('cuda')
    spec = load_spec(args.model)
    modes = args.modes or (['fp32', 'tf32', 'tf32-cl', 'bf16', 'bf16-cl'] if on_gpu
                           else ['fp32', 'fp32-cl', 'bf16', 'bf16-cl'])
    if not on_gpu and any(mode.startswith('tf32') for mode in modes):
        parser.error('tf32 is a GPU mode: on the CPU use fp32 or bf16 (each also -cl)')
    steps = args.steps if on_gpu else max(2, args.steps // 10)
    warmup = (20 if args.compile else 5) if on_gpu else 1
    for mode in modes:
        for batch in args.batch:
            images_per_s = measure(spec, device, batch, mode, steps, warmup, args.ddp, args.compile)
            if rank == 0:
                print(json.dumps({
                    'impl': 'pytorch', 'version': torch.__version__, 'model': spec['name'],
                    'device': device, 'mode': mode + (f'+compile:{args.compile}' if args.compile else ''),
                    'batch_per_rank': batch, 'ranks': world, 'threads': torch.get_num_threads(),
                    'images_per_s': round(images_per_s * world, 1)}), flush=True)
    if args.ddp:
        torch.distributed.destroy_process_group()


if __name__ == '__main__':
    main()

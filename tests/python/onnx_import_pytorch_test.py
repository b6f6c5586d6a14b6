#!/usr/bin/env python3
"""A PyTorch model read by `cnnstudio-train import`.

fer-cnn as the in-repository PyTorch definition builds it (bench/pytorch_reference.py's
SpecNetwork), with random weights and batch-norm statistics, is exported by torch.onnx.export
(opset 13, eval mode: PyTorch folds each batch norm into its convolution and writes Dropout as
Identity), imported with `cnnstudio-train import`, and the same image files run through both:
`cnnstudio-train predict --logits` on the imported model folder (no normalisation: pixel / 255)
and the PyTorch module. Every logit agrees within 1e-4.

A model with an op CNN Studio has not (nn.Upsample: ONNX Resize) is refused naming the node and
the op.

Usage: onnx_import_pytorch_test.py CNNSTUDIO_TRAIN WORK_DIR
Exits 77 (ctest: skipped) where torch cannot be imported.
"""
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from safetensors_pytorch_test import REPOSITORY, skip, our_logits, write_grey_images  # noqa: E402

TOLERANCE = 1e-4  # fp32 on both sides; summation orders differ
SEED = 17


def randomised_fer_cnn(torch):
    sys.path.insert(0, str(REPOSITORY / 'bench'))
    from pytorch_reference import SpecNetwork
    torch.manual_seed(SEED)
    network = SpecNetwork(json.loads((REPOSITORY / 'resources' / 'presets' / 'fer-cnn.json').read_text()))
    for module in network.modules():
        # He initialisation keeps the logits of order 1 (PyTorch's default leaves them near 0.05,
        # where any difference would hide under the tolerance).
        if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
            torch.nn.init.kaiming_normal_(module.weight, nonlinearity='relu')
            if module.bias is not None:
                torch.nn.init.uniform_(module.bias, -0.1, 0.1)
        if isinstance(module, torch.nn.BatchNorm2d):
            channels = module.num_features
            module.running_mean.copy_(torch.randn(channels) * 0.1)
            module.running_var.copy_(torch.rand(channels) * 0.5 + 0.75)
            module.weight.data.copy_(torch.rand(channels) * 0.4 + 0.8)
            module.bias.data.copy_(torch.randn(channels) * 0.1)
    return network.eval()


def export(torch, module, shape, file):
    torch.onnx.export(module, torch.zeros(2, *shape), str(file), opset_version=13, input_names=['input'],
                      output_names=['logits'], dynamic_axes={'input': {0: 'N'}, 'logits': {0: 'N'}})


def import_succeeds(torch, cnnstudio_train, work, rng):
    network = randomised_fer_cnn(torch)
    export(torch, network, network.input_shape, work / 'fer-cnn.onnx')
    model = work / 'fer-cnn-imported'
    subprocess.run([cnnstudio_train, 'import', str(work / 'fer-cnn.onnx'), '--out', str(model)], check=True)
    images = write_grey_images(work / 'images', rng, 48, 48)
    ours = our_logits(cnnstudio_train, model, images)
    batch = torch.tensor([list(pixels) for _, pixels in images], dtype=torch.float32).reshape(len(images), 1, 48, 48)
    with torch.no_grad():
        theirs = network(batch / 255).tolist()
    difference = max(abs(a - b) for row_a, row_b in zip(ours, theirs) for a, b in zip(row_a, row_b))
    largest = max(abs(value) for row in theirs for value in row)
    print(f'fer-cnn from PyTorch: {len(images)} images x {len(ours[0])} logits, largest |logit| {largest:.4f}, '
          f'largest difference {difference:.2e} (tolerance {TOLERANCE:g})')
    if len(ours) != len(theirs) or difference > TOLERANCE:
        print(f'FAIL: imported {ours}\nPyTorch {theirs}')
        return False
    return True


def unsupported_op_is_named(torch, cnnstudio_train, work):
    module = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.Upsample(scale_factor=2),
                                 torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()).eval()
    export(torch, module, (1, 8, 8), work / 'upsample.onnx')
    result = subprocess.run([cnnstudio_train, 'import', str(work / 'upsample.onnx'), '--out', str(work / 'upsample')],
                            capture_output=True, text=True)
    print(f'upsample: exit {result.returncode}: {result.stderr.strip()}')
    if result.returncode == 0 or 'op Resize is not one CNN Studio has' not in result.stderr \
            or "node '" not in result.stderr:
        print('FAIL: the Resize node was not refused by name')
        return False
    return True


def main():
    cnnstudio_train, work = sys.argv[1], Path(sys.argv[2])
    try:
        import torch
    except ImportError as error:
        skip(f'torch cannot be imported ({error}); install python3-torch (Debian) or torch (PyPI)')
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    rng = random.Random(SEED)
    print(f'seed {SEED}')
    passed = import_succeeds(torch, cnnstudio_train, work, rng)
    passed &= unsupported_op_is_named(torch, cnnstudio_train, work)
    sys.exit(0 if passed else 1)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""model.safetensors read by PyTorch: CNN Studio's weights load, under their own names, into the
in-repository PyTorch definition of the network (bench/pytorch_reference.py) and give the same
logits as CNN Studio.

For lenet5 (one epoch on 1000 Fashion-MNIST images) and fer-cnn (one step on a small random data
set of 48x48 grey images, 7 classes), the test trains the model with cnnstudio-train, loads its
model.safetensors with safetensors.torch.load_file into SpecNetwork(spec.json) (strict, eval
mode) and runs the same image files through both: `cnnstudio-train predict --logits` on our side,
the pixels normalised as model.json says on PyTorch's. Every logit agrees within 1e-4.

Usage: safetensors_pytorch_test.py CNNSTUDIO_TRAIN WORK_DIR
       safetensors_pytorch_test.py --check-recorded WORK_DIR
The second form compares, on another machine (one with a newer PyTorch, say), what a run of the
first form left in WORK_DIR: each model folder, its images and CNN Studio's logits.
Exits 77 (ctest: skipped) where torch cannot be imported, or safetensors can neither be imported
nor installed from PyPI (pip install --target WORK_DIR/site-packages).
"""
import importlib
import json
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

SKIP = 77
TOLERANCE = 1e-4  # fp32 on both sides; sums of a few thousand products differ in the last bits
IMAGES_PER_MODEL = 4
SEED = 15
REPOSITORY = Path(__file__).resolve().parents[2]


def skip(why):
    print(f'SKIPPED: {why}')
    sys.exit(SKIP)


def import_torch_and_safetensors(work):
    try:
        import torch  # noqa: F401
    except ImportError as error:
        skip(f'torch cannot be imported ({error}); install python3-torch (Debian) or torch (PyPI)')
    site = work / 'site-packages'  # where an earlier run may have installed safetensors
    sys.path.insert(0, str(site))
    try:
        import safetensors.torch  # noqa: F401
    except ImportError:
        pip = [sys.executable, '-m', 'pip', 'install', '--quiet', '--root-user-action=ignore', '--upgrade',
               '--target', str(site), 'safetensors']
        if subprocess.run(pip).returncode != 0:
            skip('safetensors is not installed and pip could not install it from PyPI: ' + ' '.join(pip))
        importlib.invalidate_caches()
    sys.path.insert(0, str(REPOSITORY / 'bench'))


def write_idx(path, magic, dimensions, payload):
    path.write_bytes(struct.pack('>I', magic) + b''.join(struct.pack('>I', d) for d in dimensions) + payload)


def write_random_dataset(folder, rng, size, classes, train, test):
    """An IDX data set (as MNIST's files) of random grey images: enough for one training step."""
    folder.mkdir(parents=True)
    for prefix, count in (('train', train), ('t10k', test)):
        write_idx(folder / f'{prefix}-images-idx3-ubyte', 0x803, (count, size, size), rng.randbytes(count * size * size))
        write_idx(folder / f'{prefix}-labels-idx1-ubyte', 0x801, (count,),
                  bytes(rng.randrange(classes) for _ in range(count)))


def write_grey_images(folder, rng, height, width):
    """Binary PGM files, which OpenCV (our predict) reads as they are: no resizing, no colour."""
    folder.mkdir(parents=True)
    images = []
    for index in range(IMAGES_PER_MODEL):
        pixels = rng.randbytes(height * width)
        path = folder / f'image{index}.pgm'
        path.write_bytes(f'P5 {width} {height} 255\n'.encode() + pixels)
        images.append((path, pixels))
    return images


def train(cnnstudio_train, run_dir, arguments):
    command = [cnnstudio_train, *arguments, '--epochs', '1', '--threads', '2', '--run-dir', str(run_dir)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return run_dir / 'model'


def our_logits(cnnstudio_train, model, images):
    output = subprocess.run([cnnstudio_train, 'predict', str(model), '--logits', '--threads', '2',
                             *[str(path) for path, _ in images]], check=True, capture_output=True, text=True)
    return [json.loads(line)['logits'] for line in output.stdout.splitlines()]


def pytorch_logits(model, images):
    import torch
    from safetensors.torch import load_file
    from pytorch_reference import SpecNetwork

    spec = json.loads((model / 'spec.json').read_text())
    normalization = json.loads((model / 'model.json').read_text())['normalization']
    network = SpecNetwork(spec)
    network.load_state_dict_in_our_names(load_file(model / 'model.safetensors'))
    network.eval()
    channels, height, width = network.input_shape
    batch = torch.tensor([list(pixels) for _, pixels in images], dtype=torch.float32) / 255
    batch = batch.reshape(len(images), channels, height, width)
    mean = torch.tensor(normalization['mean']).reshape(1, channels, 1, 1)
    stddev = torch.tensor(normalization['stddev']).reshape(1, channels, 1, 1)
    with torch.no_grad():
        return network((batch - mean) / stddev).tolist()


def read_grey_images(folder):
    """The PGM files write_grey_images made, as (path, pixels)."""
    images = []
    for index in range(IMAGES_PER_MODEL):
        path = folder / f'image{index}.pgm'
        header, pixels = path.read_bytes().split(b'\n', 1)
        images.append((path, pixels))
    return images


def compare_logits(name, ours, model, images):
    theirs = pytorch_logits(model, images)
    difference = max(abs(a - b) for row_a, row_b in zip(ours, theirs) for a, b in zip(row_a, row_b))
    largest = max(abs(value) for row in ours for value in row)
    print(f'{name}: {len(images)} images x {len(ours[0])} logits, largest |logit| {largest:.4f}, '
          f'largest difference {difference:.2e} (tolerance {TOLERANCE:g})')
    if len(ours) != len(theirs) or difference > TOLERANCE:
        print(f'FAIL: {name}: CNN Studio {ours}\nPyTorch {theirs}')
        return False
    return True


def compare(name, cnnstudio_train, model, images):
    ours = our_logits(cnnstudio_train, model, images)
    (model.parent.parent / 'our_logits.json').write_text(json.dumps(ours))
    return compare_logits(name, ours, model, images)


def check_recorded(work):
    import torch
    print(f'torch {torch.__version__}')
    passed = True
    for name in ('lenet5', 'fer-cnn'):
        ours = json.loads((work / name / 'our_logits.json').read_text())
        passed &= compare_logits(name, ours, work / name / 'run' / 'model', read_grey_images(work / name / 'images'))
    sys.exit(0 if passed else 1)


def main():
    if sys.argv[1] == '--check-recorded':
        work = Path(sys.argv[2])
        import_torch_and_safetensors(work)
        check_recorded(work)
    cnnstudio_train, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    import_torch_and_safetensors(work)
    for stale in ('lenet5', 'fer-cnn'):
        shutil.rmtree(work / stale, ignore_errors=True)
    rng = random.Random(SEED)
    print(f'seed {SEED}')

    lenet5 = train(cnnstudio_train, work / 'lenet5' / 'run', ['--preset', 'lenet5', '--limit', '1000'])
    passed = compare('lenet5', cnnstudio_train, lenet5, write_grey_images(work / 'lenet5' / 'images', rng, 28, 28))

    faces = work / 'fer-cnn' / 'faces'
    write_random_dataset(faces, rng, size=48, classes=7, train=40, test=8)
    fer_cnn = train(cnnstudio_train, work / 'fer-cnn' / 'run',
                    ['--preset', 'fer-cnn', '--dataset', f'idx:{faces}', '--batch', '32'])
    passed &= compare('fer-cnn', cnnstudio_train, fer_cnn, write_grey_images(work / 'fer-cnn' / 'images', rng, 48, 48))
    sys.exit(0 if passed else 1)


if __name__ == '__main__':
    main()

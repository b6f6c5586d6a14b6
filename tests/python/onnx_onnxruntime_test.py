#!/usr/bin/env python3
"""Our ONNX export read by onnxruntime, a reader we did not write.

For every preset the test trains a model for one epoch (lenet5 on 1000 Fashion-MNIST images, the
48x48 presets on a small random data set of grey images, 7 classes), writes it with
`cnnstudio-train export MODEL_DIR --onnx`, and runs the same image files through both:
`cnnstudio-train predict --logits` on our side, an onnxruntime CPU session on the exported file
on the other, the pixels normalised as model.json says. Every logit agrees within 1e-4.

Usage: onnx_onnxruntime_test.py CNNSTUDIO_TRAIN WORK_DIR
Exits 77 (ctest: skipped) where onnxruntime can neither be imported nor installed from PyPI (pip install --target WORK_DIR/pydeps onnxruntime).
"""
import importlib
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from safetensors_pytorch_test import (  # noqa: E402  the shared data set and image writers
    skip, train, our_logits, write_grey_images, write_random_dataset)

TOLERANCE = 1e-4  # fp32 on both sides; summation orders differ
SEED = 13


def import_onnxruntime(work):
    # First on the path: the numpy pip installs with onnxruntime is the one it was built for.
    site = work / 'pydeps'  # where an earlier run may have installed onnxruntime
    sys.path.insert(0, str(site))
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        pip = [sys.executable, '-m', 'pip', 'install', '--quiet', '--root-user-action=ignore',
               '--target', str(site), 'onnxruntime']
        if subprocess.run(pip).returncode != 0:
            skip('onnxruntime is not installed and pip could not install it from PyPI: ' + ' '.join(pip))
        importlib.invalidate_caches()
        try:
            import onnxruntime  # noqa: F401,F811
        except ImportError as error:
            skip(f'onnxruntime was installed into {site} but cannot be imported here ({error})')


def export(cnnstudio_train, model, onnx_file):
    subprocess.run([cnnstudio_train, 'export', str(model), '--onnx', str(onnx_file)], check=True,
                   stdout=subprocess.DEVNULL)


def onnxruntime_logits(model, onnx_file, images):
    import numpy
    import onnxruntime

    spec = json.loads((model / 'spec.json').read_text())
    normalization = json.loads((model / 'model.json').read_text())['normalization']
    input_node = next(node for node in spec['nodes'] if node['type'] == 'Input')['params']
    shape = (len(images), input_node['channels'], input_node['height'], input_node['width'])
    batch = numpy.frombuffer(b''.join(pixels for _, pixels in images), dtype=numpy.uint8)
    batch = batch.astype(numpy.float32).reshape(shape) / 255
    mean = numpy.array(normalization['mean'], dtype=numpy.float32).reshape(1, -1, 1, 1)
    stddev = numpy.array(normalization['stddev'], dtype=numpy.float32).reshape(1, -1, 1, 1)
    session = onnxruntime.InferenceSession(str(onnx_file), providers=['CPUExecutionProvider'])
    (logits,) = session.run(['logits'], {'input': ((batch - mean) / stddev).astype(numpy.float32)})
    return logits.tolist()


def compare(name, cnnstudio_train, model, images, onnx_file):
    export(cnnstudio_train, model, onnx_file)
    ours = our_logits(cnnstudio_train, model, images)
    theirs = onnxruntime_logits(model, onnx_file, images)
    difference = max(abs(a - b) for row_a, row_b in zip(ours, theirs) for a, b in zip(row_a, row_b))
    largest = max(abs(value) for row in ours for value in row)
    print(f'{name}: {len(images)} images x {len(ours[0])} logits, largest |logit| {largest:.4f}, '
          f'largest difference {difference:.2e} (tolerance {TOLERANCE:g})')
    if len(ours) != len(theirs) or difference > TOLERANCE:
        print(f'FAIL: {name}: CNN Studio {ours}\nonnxruntime {theirs}')
        return False
    return True


def main():
    cnnstudio_train, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    import_onnxruntime(work)
    rng = random.Random(SEED)
    print(f'seed {SEED}')
    passed = True

    shutil.rmtree(work / 'lenet5', ignore_errors=True)
    lenet5 = train(cnnstudio_train, work / 'lenet5' / 'run', ['--preset', 'lenet5', '--limit', '1000'])
    passed &= compare('lenet5', cnnstudio_train, lenet5,
                      write_grey_images(work / 'lenet5' / 'images', rng, 28, 28), work / 'lenet5.onnx')

    faces = work / 'faces'
    shutil.rmtree(faces, ignore_errors=True)
    write_random_dataset(faces, rng, size=48, classes=7, train=40, test=8)
    for preset in ('fer-cnn', 'mini-xception', 'vgg-fer'):
        shutil.rmtree(work / preset, ignore_errors=True)
        model = train(cnnstudio_train, work / preset / 'run',
                      ['--preset', preset, '--dataset', f'idx:{faces}', '--batch', '32'])
        passed &= compare(preset, cnnstudio_train, model,
                          write_grey_images(work / preset / 'images', rng, 48, 48), work / f'{preset}.onnx')
    sys.exit(0 if passed else 1)


if __name__ == '__main__':
    main()

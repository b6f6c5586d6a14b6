#!/usr/bin/env bash
# Issue #17, 2026-12-02: the cudnn backend's bf16 input layer (fer-cnn's conv1_1, one grey
# channel) on our direct kernels (kernels/cuda/small_input_conv.cu) instead of cuDNN on
# zero-padded copies, beside the build before it, then ours beside PyTorch in one command.
# Run on the GPU machine from the repository root, with .device/ packed from this build
# (tools/pack-device.sh) and .device/before/lib holding the earlier build's libcnnbackends.so
# and cnnstudio/plugins/libcnngpu.so. Logs in $OUT.
set -uo pipefail
out=${OUT:-/tmp/out}
# GPU tests; compute-sanitizer memcheck and racecheck over the convolution conformance cases of
# cudnn bf16, our small-input kernels only; conv_bench of fer-cnn's convolutions in cudnn bf16,
# this build and "before" interleaved
bash tools/device-session.sh tests
SANITIZE_TOOLS="memcheck racecheck" SANITIZE_SUITES=engine_tests SANITIZE_FILTER='*Conv*/cudnn_bf16' \
  SANITIZE_KERNELS=kns=smallInputConv bash tools/device-session.sh sanitize
CONV_BACKEND=cudnn CONV_PRECISION=bf16 bash tools/device-session.sh conv-before-after
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=.device/bin
{ for round in 1 2; do
    "$bin/cnnstudio-bench" --backend cudnn --mode bf16 --batch 256
    LD_LIBRARY_PATH=$PWD/.device/before/lib:$LD_LIBRARY_PATH "$bin/cnnstudio-bench" --backend cudnn --mode bf16 --batch 256 |
      sed "s/^{/{\"build\": \"before\", /"
  done
  "$bin/cnnstudio-bench" --backend cudnn --mode fp32 --batch 256
  "$bin/cnnstudio-bench" --backend cuda --mode fp32 --batch 256
  python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl fp32
  python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl --compile max-autotune 2> "$out/compile.txt"
} 2>&1 | tee "$out/ours_and_pytorch.txt" | grep '^{' > "$out/side_by_side_pytorch.jsonl"
cat "$out/side_by_side_pytorch.jsonl"

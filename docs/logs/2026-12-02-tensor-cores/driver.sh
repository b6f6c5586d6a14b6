#!/usr/bin/env bash
# Issue #17, 2026-12-02: the cuda backend's GEMM core on TF32 tensor cores (3xTF32, fp32
# accuracy) beside the FFMA core it replaced, then ours beside PyTorch in one command.
# Run on the GPU machine from the repository root, with .device/ packed from this build
# (tools/pack-device.sh) and, for each earlier build in BUILDS, .device/NAME/lib holding its
# libcnnbackends.so and cnnstudio/plugins/libcnngpu.so. Logs in $OUT.
#   before  the FFMA core (71048b7)
#   a-rows  the tensor-core GEMM with row-major A tiles, before the tiled fp32 pooling (9ad1307)
set -uo pipefail
out=${OUT:-/tmp/out}
builds=${BUILDS:-before a-rows}
# GPU tests, and conv_bench of fer-cnn's convolutions with this build and "before", interleaved
bash tools/device-session.sh tests conv-before-after
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=.device/bin
{ "$bin/cnnstudio-bench" --backend cudnn --mode bf16 fp32 --batch 256
  "$bin/cnnstudio-bench" --backend cuda --mode fp32 --batch 256
  for build in $builds; do
    LD_LIBRARY_PATH=$PWD/.device/$build/lib:$LD_LIBRARY_PATH "$bin/cnnstudio-bench" --backend cuda --mode fp32 --batch 256 |
      sed "s/^{/{\"build\": \"$build\", /"
  done
  python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl fp32
  python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl --compile max-autotune 2> "$out/compile.txt"
} 2>&1 | tee "$out/ours_and_pytorch.txt" | grep '^{' > "$out/side_by_side_pytorch.jsonl"
cat "$out/side_by_side_pytorch.jsonl"

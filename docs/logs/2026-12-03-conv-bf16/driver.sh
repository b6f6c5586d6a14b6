#!/usr/bin/env bash
# fer-cnn's convolutions alone in bf16 (2026-12-03, one H200): our tensor-core kernels (cuda)
# beside cuDNN (cudnn), interleaved over two rounds, batch 256, the figures the header of
# kernels/cuda/tensor_core_conv.cu records. Needs .device from tools/pack-device.sh.
# Usage: OUT=DIR bash driver.sh
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
for xz in .device/lib/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for round in 1 2; do
  for backend in cuda cudnn; do
    echo "--- $backend, round $round"
    timeout 120 .device/bin/conv_bench --backend $backend --precision bf16 --batch 256 --repeats 20
  done
done 2>&1 | tee "$OUT/conv_bf16.log"

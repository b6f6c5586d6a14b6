#!/usr/bin/env bash
# CPU training on the lent GPU machine's 16 cores: fer-cnn's step on the cpu backend (fp32 and bf16
# with bf16 channels-last activations) beside PyTorch 2.11 on the same CPU (fp32, bf16 autocast,
# bf16 channels-last), at 16 threads and batch 256, interleaved over two rounds; JSON lines
# in $OUT/cpu_side_by_side.jsonl, each with "round", the whole output and the CPU's description in
# $OUT/cpu_driver.log. Set-up here: tools/pack-device.sh for the build.
# Usage: OUT=DIR bash docs/logs/2026-12-05-gpu-host-cpu/driver.sh   (from the repository root there)
set -uo pipefail
bash tools/device-session.sh > /dev/null 2>&1  # unpacks the carried libraries (no step named)
lib=$PWD/.device/lib
{ lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|L2|L3'
  lscpu | grep -o -E 'amx_bf16|avx512_bf16|avx512f' | sort -u | tr '\n' ' '; echo
  python3 -c 'import torch; print("PyTorch", torch.__version__, torch.backends.mkldnn.is_available())'
} > "$OUT/cpu_driver.log" 2>&1
tag() { sed "s/^{/{\"round\": $1, /"; }
for round in 1 2; do
  LD_LIBRARY_PATH=$lib timeout 120 .device/bin/cnnstudio-bench --backend cpu --mode fp32 bf16 --threads 16 \
    --batch 256 --no-save-copy 2>>"$OUT/cpu_driver.log" | grep '^{' | tag $round
  timeout 150 python3 bench/pytorch_reference.py --device cpu --threads 16 --batch 256 \
    --modes fp32 bf16 bf16-cl 2>>"$OUT/cpu_driver.log" | grep '^{' | tag $round
done | tee "$OUT/cpu_side_by_side.jsonl" | cut -c1-170
cat "$OUT/cpu_driver.log" | head -12

#!/usr/bin/env bash
# CPU training speed on the development machine (2 cores of a Xeon with AMX, no GPU): fer-cnn's
# step at batch 64 on the cpu backend of main (16629a6: bf16 with fp32 NCHW activations, staged
# into oneDNN's bf16 layouts at every convolution) and of this branch (bf16 channels-last
# activations), fp32 and bf16 each, beside PyTorch 2.11 on the CPU (bf16 autocast, also
# channels-last), at 1 and 2 threads, interleaved over ROUNDS rounds (default 3); JSON lines in
# $OUT/side_by_side.jsonl, each with "round" (ours also with "build"), the whole output in
# $OUT/driver.log, with the load average before each program (others may share the cores).
# Usage: BEFORE=BUILD_DIR CURRENT=BUILD_DIR PYTHON=PYTHON_WITH_TORCH OUT=DIR \
#          bash docs/logs/2026-12-05-cpu-bf16-nhwc/driver.sh        (from the repository root)
set -uo pipefail
mkdir -p "$OUT"
lscpu | grep -E 'Model name|^CPU\(s\)' | tee "$OUT/driver.log"
"$PYTHON" -c 'import torch; print("PyTorch", torch.__version__)' | tee -a "$OUT/driver.log"
tag() { sed "s/^{/{$1, /"; }
load() { echo "round $round, $threads threads, before $1: load average $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/driver.log"; }
for round in $(seq "${ROUNDS:-3}"); do
  for threads in 1 2; do
    load before
    "$BEFORE/app/cnnstudio-bench" --backend cpu --mode fp32 bf16 --threads $threads --batch 64 --no-save-copy \
      2>>"$OUT/driver.log" | grep '^{' | tag "\"build\": \"before\", \"round\": $round"
    load current
    "$CURRENT/app/cnnstudio-bench" --backend cpu --mode fp32 bf16 --threads $threads --batch 64 --no-save-copy \
      2>>"$OUT/driver.log" | grep '^{' | tag "\"build\": \"current\", \"round\": $round"
    load pytorch
    "$PYTHON" bench/pytorch_reference.py --device cpu --threads $threads --batch 64 \
      --modes bf16 bf16-cl 2>>"$OUT/driver.log" | grep '^{' | tag "\"round\": $round"
  done
done | tee "$OUT/side_by_side.jsonl" | cut -c1-150

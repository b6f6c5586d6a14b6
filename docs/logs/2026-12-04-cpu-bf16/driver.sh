#!/usr/bin/env bash
# CPU training speed on the development machine (2 cores of a Xeon with AMX, no GPU): fer-cnn's
# step at batch 64 on the cpu backend of the session's start (01cea1a: fp32 only, the batch
# norm, ReLU and pooling as separate ops) and of this build (fp32 and bf16, the chains fused),
# beside PyTorch 2.11 on the CPU (fp32, bf16 autocast, each also channels-last), at 1 and 2
# threads, interleaved over ROUNDS rounds (default 3); JSON lines in $OUT/side_by_side.jsonl,
# each with "round" (ours also with "build"), the whole output in $OUT/driver.log.
# Usage: BEFORE=BUILD_DIR CURRENT=BUILD_DIR PYTHON=PYTHON_WITH_TORCH OUT=DIR \
#          bash docs/logs/2026-12-04-cpu-bf16/driver.sh        (from the repository root)
set -uo pipefail
mkdir -p "$OUT"
lscpu | grep -E 'Model name|^CPU\(s\)' | tee "$OUT/driver.log"
"$PYTHON" -c 'import torch; print("PyTorch", torch.__version__)' | tee -a "$OUT/driver.log"
tag() { sed "s/^{/{$1, /"; }
for round in $(seq "${ROUNDS:-3}"); do
  for threads in 1 2; do
    "$BEFORE/app/cnnstudio-bench" --backend cpu --mode fp32 --threads $threads --batch 64 --no-save-copy \
      2>>"$OUT/driver.log" | grep '^{' | tag "\"build\": \"before\", \"round\": $round"
    "$CURRENT/app/cnnstudio-bench" --backend cpu --mode fp32 bf16 --threads $threads --batch 64 --no-save-copy \
      2>>"$OUT/driver.log" | grep '^{' | tag "\"build\": \"current\", \"round\": $round"
    "$PYTHON" bench/pytorch_reference.py --device cpu --threads $threads --batch 64 \
      --modes fp32 fp32-cl bf16 bf16-cl 2>>"$OUT/driver.log" | grep '^{' | tag "\"round\": $round"
  done
done | tee "$OUT/side_by_side.jsonl" | cut -c1-150

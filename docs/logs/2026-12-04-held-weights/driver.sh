#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: the training step holds its weights from the forward pass to
# the end of the backward pass (Backend::beginWeightsHeld), and the cudnn backend in bf16 reads
# the bf16 copies it staged for the forward convolutions and dense layers again in their backward
# data passes instead of staging them anew. GPU suites; fer-cnn at batch 256 beside main at
# de4384c (before) and at 1faecc2 (gate: the batch-norm changes before this one), interleaved
# over two rounds (tools/device-session.sh bench-before-after); this build's cudnn bf16 step
# under ncu, kernel by kernel.
# Usage: OUT=DIR bash docs/logs/2026-12-04-held-weights/driver.sh
set -uo pipefail
bin=$PWD/.device/bin
mkdir -p $OUT/tests
OUT=$OUT/tests timeout 300 bash tools/device-session.sh tests > /dev/null 2>&1
grep -hE '^\[  (PASSED|FAILED) |tests ran' $OUT/tests/*.log
OUT=$OUT timeout 420 bash tools/device-session.sh bench-before-after > /dev/null 2> /tmp/bench.err
tail -3 /tmp/bench.err
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        d = json.loads(line); print(d["build"], d["round"], d["backend"], d["mode"], d["images_per_s"])' $OUT/bench_before_after.jsonl
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
timeout 200 /usr/local/cuda/bin/ncu --clock-control none --cache-control none \
  --metrics gpu__time_duration.sum --csv --print-units base --log-file $OUT/ncu_step.csv \
  $bin/cnnstudio-bench --backend cudnn --mode bf16 --batch 256 --steps 3 --warmup 1 --repeats 1 \
  --no-save-copy > /tmp/ncu_bench.log 2>&1
echo "ncu rc=$?"
python3 docs/logs/2026-12-04-filter-pass/step/step_kernels.py $OUT/ncu_step.csv > $OUT/step_kernels.md
grep -E 'kernels,|transpose|narrow' $OUT/step_kernels.md
sed 's|/[^ ]*/\.device/|.device/|g' $OUT/ncu_step.csv | xz -9 > $OUT/ncu_step.csv.xz && rm $OUT/ncu_step.csv
ls $OUT

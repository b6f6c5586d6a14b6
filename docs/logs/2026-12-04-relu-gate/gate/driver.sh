#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: batch norm + ReLU on our kernels in both GPU backends.
# The unpooled pair's backward recomputes the ReLU's gate from x instead of reading y (five
# tensor passes where it made seven), and the cudnn backend in bf16 runs that pair on our kernels
# instead of cuDNN's persistent BN_ACTIVATION kernels. GPU suites; fer-cnn at batch 256 beside
# main at de4384c (.device/before), interleaved over two rounds (tools/device-session.sh
# bench-before-after); every kernel of one cudnn bf16 step under ncu (step_kernels.py).
# Usage: OUT=DIR bash docs/logs/2026-12-04-relu-gate/gate/driver.sh
set -uo pipefail
bin=$PWD/.device/bin
mkdir -p $OUT/tests
OUT=$OUT/tests timeout 300 bash tools/device-session.sh tests > $OUT/tests.out 2>&1
grep -E 'PASSED|FAILED|SKIPPED|tests ran' $OUT/tests/*.log | sort | uniq -c
OUT=$OUT timeout 420 bash tools/device-session.sh bench-before-after > /dev/null 2> $OUT/bench.err
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        d = json.loads(line); print(d["build"], d["round"], d["backend"], d["mode"], d["images_per_s"])' $OUT/bench_before_after.jsonl
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
timeout 300 /usr/local/cuda/bin/ncu --clock-control none --cache-control none \
  --metrics gpu__time_duration.sum --csv --print-units base --log-file $OUT/ncu_step.csv \
  $bin/cnnstudio-bench --backend cudnn --mode bf16 --batch 256 --steps 3 --warmup 1 --repeats 1 \
  --no-save-copy > $OUT/ncu_bench.log 2>&1
echo "ncu rc=$?"
python3 docs/logs/2026-12-04-filter-pass/step/step_kernels.py $OUT/ncu_step.csv > $OUT/step_kernels.md
head -40 $OUT/step_kernels.md
xz -9 $OUT/ncu_step.csv
ls $OUT $OUT/tests

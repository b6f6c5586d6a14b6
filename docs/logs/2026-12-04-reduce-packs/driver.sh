#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: the batch norms' reduction kernels (statistics, gradient sums,
# pooled gradient sums) on 8-byte packs of 4 channels at four blocks a multiprocessor, beside
# the same build with them on 16-byte packs of 8 at two (.device/before: main at 9109511's GPU
# plugin). fer-cnn at batch 256, interleaved over two rounds (tools/device-session.sh
# bench-before-after); this build's cudnn bf16 step under ncu, its batch-norm launches listed.
# Usage: OUT=DIR bash docs/logs/2026-12-04-reduce-packs/driver.sh
set -uo pipefail
bin=$PWD/.device/bin
OUT=$OUT timeout 300 bash tools/device-session.sh bench-before-after > /dev/null 2> /tmp/bench.err
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
head -1 $OUT/step_kernels.md
python3 docs/logs/2026-12-04-relu-gate/bn_launches.py $OUT/ncu_step.csv 92 | tee $OUT/bn_launches.txt
sed 's|/[^ ]*/\.device/|.device/|g' $OUT/ncu_step.csv | xz -9 > $OUT/ncu_step.csv.xz && rm $OUT/ncu_step.csv

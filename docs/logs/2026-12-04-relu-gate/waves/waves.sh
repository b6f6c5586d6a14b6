#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200, the second call: the batch-norm kernels' elementwise passes
# in one wave of resident blocks (they ran four waves of 1056 blocks, paying each thread's
# coefficient loads in every wave) and at least 16 pixels a split (bn3_2's pooled sums ran 144
# blocks), beside main at de4384c; variant run4: the same with four pixels a thread and step in
# the unpooled backward (two before). GPU suites; fer-cnn at batch 256, interleaved over two
# rounds (tools/device-session.sh bench-before-after); each build's cudnn bf16 step under ncu,
# its batch-norm launches listed by bn_launches.py.
# Usage: OUT=DIR bash docs/logs/2026-12-04-relu-gate/waves/waves.sh
set -uo pipefail
bin=$PWD/.device/bin
here=docs/logs/2026-12-04-relu-gate
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
for build in current run4; do
  plugins=$PWD/.device/lib/cnnstudio/plugins
  [ $build = run4 ] && plugins=$PWD/.device/variant-run4
  CNNSTUDIO_PLUGIN_DIR=$plugins timeout 200 /usr/local/cuda/bin/ncu --clock-control none --cache-control none \
    --metrics gpu__time_duration.sum --csv --print-units base --log-file $OUT/ncu_$build.csv \
    $bin/cnnstudio-bench --backend cudnn --mode bf16 --batch 256 --steps 3 --warmup 1 --repeats 1 \
    --no-save-copy > /tmp/ncu_bench_$build.log 2>&1
  echo "--- $build: ncu rc=$?"
  python3 $here/bn_launches.py $OUT/ncu_$build.csv | tee $OUT/bn_launches_$build.txt
done
python3 docs/logs/2026-12-04-filter-pass/step/step_kernels.py $OUT/ncu_current.csv > $OUT/step_kernels.md
head -3 $OUT/step_kernels.md
cat $OUT/ncu_current.csv $OUT/ncu_run4.csv | xz -9 > $OUT/ncu_steps.csv.xz
rm $OUT/ncu_current.csv $OUT/ncu_run4.csv
ls $OUT

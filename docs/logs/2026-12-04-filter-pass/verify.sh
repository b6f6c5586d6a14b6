#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: the input block's backward in one pass over dy and y.
# The filter kernels summed 9 rows a pass, so a 3x3 grey layer with its bias row (10 rows) read
# dy (and, masked, y) twice; now 10 rows a pass. And the forward keeps the patch moments in c's
# room, so the backward no longer sums them again. Two forms of the filter kernel:
#   current   2 pixels a lane per iteration, a ring of 3 stages (ptxas: 56 bytes spilled, masked)
#   variantB  1 pixel a lane per iteration, a ring of 5 stages (no spill)
# GPU suites on current; fer-cnn at batch 256 (bf16: fp32 runs the ops as before) beside main at
# 614da2a, interleaved over two rounds; the block's kernels under ncu in both forms, the forward
# convolution's and filter pass's sections; breakdowns.
# Usage: OUT=DIR bash docs/logs/2026-12-04-filter-pass/verify.sh
set -uo pipefail
bash tools/device-session.sh > /dev/null  # unpacks the libraries
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
unxz() { python3 -c 'import lzma, sys; open(sys.argv[1][:-3], "wb").write(lzma.open(sys.argv[1]).read())' "$1"; }
unxz .device/before/lib/cnnstudio/plugins/libcnngpu.so.xz
unxz .device/variantB/libcnngpu.so.xz
{ timeout 150 "$bin/kernels_tests" --gtest_brief=1; echo "kernels_tests rc=$?"
  timeout 90 "$bin/engine_tests" --gtest_filter='*cuda*:*cudnn*:Network*' --gtest_brief=1; echo "engine_tests rc=$?"
} > $OUT/tests.log 2>&1
grep -E 'rc=|FAILED|PASSED' $OUT/tests.log | sort | uniq -c
# The environment each build runs in: before has its own programs and libraries; variantB is
# this build with its own GPU plugin.
environment_of() {
  case $1 in
    before) echo LD_LIBRARY_PATH=$PWD/.device/before/lib:$LD_LIBRARY_PATH ;;
    variantB) echo CNNSTUDIO_PLUGIN_DIR=$PWD/.device/variantB ;;
    current) echo CNNSTUDIO_BUILD=current ;;
  esac
}
for round in 1 2; do
  for build in before current variantB; do
    programs=$bin; [ $build = before ] && programs=$PWD/.device/before/bin
    for backend in cudnn cuda; do
      line=$(env $(environment_of $build) timeout 120 "$programs/cnnstudio-bench" --backend $backend --mode bf16 --batch 256 --no-save-copy | grep '^{')
      echo "$line" | sed "s/^{/{\"build\": \"$build\", \"round\": $round, /"
    done
  done
done 2> $OUT/bench.err | tee $OUT/bench_before_after.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    if line.strip():
        d = json.loads(line); print(d["build"], d["round"], d["backend"], d["mode"], d["images_per_s"])'
for build in current variantB; do
  env $(environment_of $build) timeout 100 ncu --kernel-name regex:'patchMoments|inputBlock|smallInput|finishSplit' \
    --launch-count 12 --metrics gpu__time_duration.sum --csv "$bin/cnnstudio-bench" --backend cudnn --mode bf16 \
    --batch 256 --no-save-copy > $OUT/ncu_$build.csv 2> $OUT/ncu_$build.err
  grep -v '^==' $OUT/ncu_$build.csv | python3 -c '
import csv, sys
for row in csv.DictReader(sys.stdin):
    if row.get("Metric Value"): print(sys.argv[1], row["Kernel Name"].split("(")[0][-45:], row["Metric Value"])' $build
done
# Where the forward convolution (67 us for writing 75 MB) and the filter pass wait.
timeout 100 ncu --kernel-name regex:'smallInputConvForward|smallInputConvFilterPartials' --launch-count 2 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section MemoryWorkloadAnalysis "$bin/cnnstudio-bench" --backend cudnn --mode bf16 --batch 256 \
  --no-save-copy > $OUT/ncu_sections.txt 2>&1
for config in "cuda bf16" "cudnn bf16"; do
  timeout 60 "$bin/cnnstudio-bench" --config "$config batch=256" --no-save-copy \
    --report "$OUT/report_${config// /_}.json" >> $OUT/report.out 2>&1
done
ls $OUT

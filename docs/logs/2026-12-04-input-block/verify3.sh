#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200, third build: the ReLU's output comes through the filter
# kernel's cp.async ring with dy (verify2.sh's build loaded it one iteration ahead in registers:
# 192 us a call under ncu). kernels_tests, the conformance tests of the input block and of the
# filter gradients (whose kernel this changes too) 20 times, fer-cnn at
# batch 256 beside main at 05e96d0 interleaved over two rounds (as verify.sh), each kernel of the
# input block under ncu, and the step breakdowns.
# Usage: OUT=DIR bash docs/logs/2026-12-04-input-block/verify3.sh
set -uo pipefail
bash tools/device-session.sh > /dev/null  # unpacks the libraries
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
{ timeout 150 "$bin/kernels_tests" --gtest_brief=1; echo "kernels_tests rc=$?"
  timeout 100 "$bin/engine_tests" --gtest_filter='*ConvBatchNormRelu*cud*:*ConvBackwardFilter*cud*' --gtest_repeat=20 --gtest_brief=1
  echo "engine_tests rc=$?"
} > $OUT/tests.log 2>&1
grep -E 'rc=|FAILED|PASSED' $OUT/tests.log | sort | uniq -c
python3 -c 'import lzma, sys; open(sys.argv[1][:-3], "wb").write(lzma.open(sys.argv[1]).read())' \
  .device/before/lib/cnnstudio/plugins/libcnngpu.so.xz
for round in 1 2; do
  for build in before current; do
    programs=$PWD/.device/bin libraries=$LD_LIBRARY_PATH
    if [ $build = before ]; then programs=$PWD/.device/before/bin libraries=$PWD/.device/before/lib:$LD_LIBRARY_PATH; fi
    for backend in cudnn cuda; do
      line=$(LD_LIBRARY_PATH=$libraries timeout 180 "$programs/cnnstudio-bench" --backend $backend --mode bf16 fp32 --batch 256 --no-save-copy | grep '^{')
      echo "$line" | sed "s/^{/{\"build\": \"$build\", \"round\": $round, /"
    done
  done
done 2> $OUT/bench.err | tee $OUT/bench_before_after.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    if line.strip():
        d = json.loads(line); print(d["build"], d["round"], d["backend"], d["mode"], d["images_per_s"])'
timeout 120 ncu --kernel-name regex:'patchMoments|inputBlock|smallInput|finishSplit' --launch-count 14 \
  --metrics gpu__time_duration.sum --csv "$bin/cnnstudio-bench" --backend cudnn --mode bf16 --batch 256 \
  --no-save-copy > $OUT/ncu_input_block.csv 2> $OUT/ncu.err
grep -v '^==' $OUT/ncu_input_block.csv | python3 -c '
import csv, sys
for row in csv.DictReader(sys.stdin):
    if row.get("Metric Value"): print(row["Kernel Name"].split("(")[0][-45:], row["Metric Value"])'
for config in "cuda bf16" "cudnn bf16"; do
  timeout 60 "$bin/cnnstudio-bench" --config "$config batch=256" --no-save-copy \
    --report "$OUT/report_${config// /_}.json" >> $OUT/report.out 2>&1
done
ls $OUT

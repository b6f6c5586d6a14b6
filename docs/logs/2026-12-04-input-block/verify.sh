#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200, first call: the build with the input block (fer-cnn's conv1_1 ->
# bn1_1 -> ReLU as one op each way, its statistics from the moments of the input's patches;
# packed by tools/pack-device.sh), the GPU test suites, then the input block's conformance test
# 20 times more, then fer-cnn at batch 256 beside main at 05e96d0 (.device/before: its
# cnnstudio-bench, libraries and GPU plugin), interleaved over two rounds, bf16 and fp32 on cudnn
# and cuda, then the step breakdowns (cnnstudio-bench --report) of cuda bf16 and cudnn bf16.
# Usage: OUT=DIR bash docs/logs/2026-12-04-input-block/verify.sh
set -uo pipefail
OUT=$OUT/tests bash tools/device-session.sh tests
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=.device/bin
{ timeout 100 "$bin/engine_tests" --gtest_filter='*ConvBatchNormReluTraining*cud*' --gtest_repeat=20 --gtest_brief=1
  echo "engine_tests rc=$?"
} > $OUT/repeat.log 2>&1
grep -E 'rc=|FAILED' $OUT/repeat.log | sort | uniq -c
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
done 2> $OUT/bench.err | tee $OUT/bench_before_after.jsonl | cut -c1-120
for config in "cuda bf16" "cudnn bf16"; do
  timeout 60 "$bin/cnnstudio-bench" --config "$config batch=256" --no-save-copy \
    --report "$OUT/report_${config// /_}.json" >> $OUT/report.out 2>&1
done
ls $OUT

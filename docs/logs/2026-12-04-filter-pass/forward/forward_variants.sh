#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: the input convolution's forward kernel, which ncu found at 25%
# occupancy (109 registers: 4 pixels x 16 channels of sums a thread) and 67 us for writing 75 MB
# (verify/ncu_sections.txt), in three forms beside the build of this stop (current):
#   variantC  __launch_bounds__(256, 3): at most 85 registers (ptxas: 112 bytes spilled)
#   variantD  8 channels a thread (64 registers)
#   variantE  2 pixels a thread (64 registers)
# Each form is the current build with its own GPU plugin. First the input block's conformance
# test on the GPU (it gained a grey geometry whose c is too small to keep the moments), then
# fer-cnn at batch 256 in bf16 interleaved over two rounds, then the forward kernel under ncu.
# Usage: OUT=DIR bash docs/logs/2026-12-04-filter-pass/forward/forward_variants.sh
set -uo pipefail
bash tools/device-session.sh > /dev/null 2>&1  # unpacks the libraries and the GPU plugin
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
for v in C D E; do
  python3 -c 'import lzma, sys; open(sys.argv[1][:-3], "wb").write(lzma.open(sys.argv[1]).read())' .device/variant$v/libcnngpu.so.xz
done
timeout 60 "$bin/engine_tests" --gtest_filter='*ConvBatchNormReluTraining*' 2>&1 | grep -E '^\[ +(OK|FAILED|PASSED|SKIPPED) ' | tee $OUT/conformance.log
plugin_of() { [ $1 = current ] && echo $PWD/.device/lib/cnnstudio/plugins || echo $PWD/.device/$1; }
for round in 1 2; do
  for build in current variantC variantD variantE; do
    for backend in cudnn cuda; do
      line=$(CNNSTUDIO_PLUGIN_DIR=$(plugin_of $build) timeout 60 "$bin/cnnstudio-bench" --backend $backend --mode bf16 --batch 256 --no-save-copy | grep '^{')
      echo "$line" | sed "s/^{/{\"build\": \"$build\", \"round\": $round, /"
    done
  done
done 2> $OUT/forward_bench.err | tee $OUT/forward_variants.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    if line.strip():
        d = json.loads(line); print(d["build"], d["round"], d["backend"], d["images_per_s"])'
for build in current variantC variantD variantE; do
  echo "== $build"
  CNNSTUDIO_PLUGIN_DIR=$(plugin_of $build) timeout 60 ncu --kernel-name regex:'smallInputConvForward' --launch-count 3 \
    --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread \
    "$bin/cnnstudio-bench" --backend cudnn --mode bf16 --batch 256 --no-save-copy 2>&1 | grep -E 'smallInputConvForward|duration|warps_active|registers'
done > $OUT/forward_ncu.txt
grep -E '==|duration' $OUT/forward_ncu.txt

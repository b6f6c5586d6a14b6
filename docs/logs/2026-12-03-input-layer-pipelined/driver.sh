#!/usr/bin/env bash
# One H200: the GPU test suites, then the input layer's kernels of this build (the grey 3x3 forward
# with its weights in registers; the filter gradient's loads running ahead through cp.async) beside
# the closing check's build (.device/before: its cnnstudio-bench, libcnnbackends and GPU plugin):
# conv_bench of fer-cnn's convolutions on cudnn bf16, then fer-cnn's training step on cudnn bf16,
# each interleaved over two rounds.
# Usage: OUT=DIR bash docs/logs/2026-12-03-input-layer-pipelined/driver.sh
set -uo pipefail
OUT=$OUT/tests bash tools/device-session.sh tests
CONV_BACKEND=cudnn CONV_PRECISION=bf16 bash tools/device-session.sh conv-before-after > /dev/null
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
for round in 1 2; do
  for build in before current; do
    programs=$PWD/.device/bin libraries=$LD_LIBRARY_PATH
    if [ $build = before ]; then programs=$PWD/.device/before/bin libraries=$PWD/.device/before/lib:$LD_LIBRARY_PATH; fi
    LD_LIBRARY_PATH=$libraries timeout 60 "$programs/cnnstudio-bench" --backend cudnn --mode bf16 --batch 256 --no-save-copy |
      grep '^{' | sed "s/^{/{\"build\": \"$build\", \"round\": $round, /"
  done
done 2> $OUT/bench.err | tee $OUT/bench_before_after.jsonl | cut -c1-150
grep -E '^---|conv1_1' $OUT/conv_before_after.log

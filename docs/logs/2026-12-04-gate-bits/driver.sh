#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: the input block's backward gates dy with bits its forward kept
# in c's room instead of reading y (kernels/cuda/small_input_conv.cu). GPU suites on this build,
# then fer-cnn's step at batch 256 (cudnn bf16, cuda bf16) with this build's GPU plugin
# ("current") and main's (.device/variant-main, aad67f2), interleaved over three rounds.
# Usage: OUT=DIR bash docs/logs/2026-12-04-gate-bits/driver.sh
set -uo pipefail
bin=$PWD/.device/bin
mkdir -p $OUT/tests
OUT=$OUT/tests timeout 330 bash tools/device-session.sh tests > /dev/null 2>&1
grep -hE '^\[  (PASSED|FAILED) |tests ran|FAILED  \]' $OUT/tests/*.log
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
for round in 1 2 3; do
  for build in main current; do
    plugins=$PWD/.device/lib/cnnstudio/plugins
    [ $build = current ] || plugins=$PWD/.device/variant-$build
    for backend in cudnn cuda; do
      CNNSTUDIO_PLUGIN_DIR=$plugins timeout 60 $bin/cnnstudio-bench --backend $backend --mode bf16 \
        --batch 256 --no-save-copy 2>/dev/null |
        sed "s/^{/{\"build\": \"$build\", \"round\": $round, /" | tee -a $OUT/bench.jsonl |
        python3 -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["build"], d["round"], d["backend"], d["images_per_s"])'
    done
  done
done

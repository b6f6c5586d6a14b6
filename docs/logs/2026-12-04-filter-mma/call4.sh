#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200, the closing call of the kept build: the tensor-core filter
# partials (2 stages, 640 splits, five blocks a multiprocessor), the CUDA-core form reduced to a
# channel a lane, strict fp32 without FFT algorithms. GPU suites; the cudnn fp32 test that failed
# once, 10 times over; fer-cnn at batch 256 (cudnn bf16, cuda bf16, cudnn fp32), this build
# ("current") beside main (.device/variant-main, aad67f2), one round.
# Usage: OUT=DIR bash docs/logs/2026-12-04-filter-mma/call4.sh
set -uo pipefail
bin=$PWD/.device/bin
mkdir -p $OUT/tests
OUT=$OUT/tests timeout 330 bash tools/device-session.sh tests > /dev/null 2>&1
grep -hE '^\[  (PASSED|FAILED) |tests ran|FAILED  \]' $OUT/tests/*.log
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
timeout 200 $bin/engine_tests --gtest_filter='*ConvWeightsHeldFromForwardToBackwardAndNoLonger/cudnn_fp32' \
  --gtest_repeat=10 > $OUT/fp32_repeat.log 2>&1
echo "fp32 repeats: $(grep -c '^\[       OK \]' $OUT/fp32_repeat.log) passed, $(grep -c '^\[  FAILED  \] Avail' $OUT/fp32_repeat.log) failed"
for round in 1; do
  for build in main current; do
    plugins=$PWD/.device/lib/cnnstudio/plugins
    [ $build = current ] || plugins=$PWD/.device/variant-$build
    for config in "cudnn bf16" "cuda bf16" "cudnn fp32"; do
      set -- $config
      CNNSTUDIO_PLUGIN_DIR=$plugins timeout 60 $bin/cnnstudio-bench --backend $1 --mode $2 \
        --batch 256 --no-save-copy 2>/dev/null |
        sed "s/^{/{\"build\": \"$build\", \"round\": $round, /" | tee -a $OUT/bench.jsonl |
        python3 -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["build"], d["round"], d["backend"], d["mode"], d["images_per_s"])'
    done
  done
done


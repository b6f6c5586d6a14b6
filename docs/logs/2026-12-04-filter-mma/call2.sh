#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200, the second call: the tensor-core filter partials (4 stages,
# 384 splits, the gate from y) and strict fp32 without FFT and Winograd algorithms
# (kernels/cudnn/conv.cpp). GPU suites; the cudnn fp32 test that failed once, 20 times over;
# fer-cnn at batch 256 (cudnn bf16, cuda bf16, cudnn fp32), this build ("current") beside main
# (.device/variant-main), three interleaved rounds; then where the tensor-core kernel waits (ncu).
# Usage: OUT=DIR bash docs/logs/2026-12-04-filter-mma/call2.sh
set -uo pipefail
bin=$PWD/.device/bin
mkdir -p $OUT/tests
OUT=$OUT/tests timeout 330 bash tools/device-session.sh tests > /dev/null 2>&1
grep -hE '^\[  (PASSED|FAILED) |tests ran|FAILED  \]' $OUT/tests/*.log
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
timeout 200 $bin/engine_tests --gtest_filter='*ConvWeightsHeldFromForwardToBackwardAndNoLonger/cudnn_fp32' \
  --gtest_repeat=20 > $OUT/fp32_repeat.log 2>&1
echo "fp32 repeats: $(grep -c '^\[       OK \]' $OUT/fp32_repeat.log) passed, $(grep -c '^\[  FAILED  \] Avail' $OUT/fp32_repeat.log) failed"
for round in 1 2 3; do
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
timeout 120 /usr/local/cuda/bin/ncu --kernel-name regex:'FilterPartialsMma' --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section SchedulerStats --section MemoryWorkloadAnalysis --section SourceCounters \
  $bin/cnnstudio-bench --backend cudnn --mode bf16 --batch 256 --steps 2 --warmup 1 --repeats 1 \
  --no-save-copy > $OUT/ncu_sections.txt 2>&1
grep -E "Duration|Throughput|Warp Cycles|Stall|stall|Issued Warp|No Eligible|Active Warps|Registers|Theoretical Occ" $OUT/ncu_sections.txt | head -40

#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: our kernels launched as programmatic dependent launches
# (launchDependentKernel, kernels/runtime/launch.cuh). GPU suites on this build, then fer-cnn's
# step at batch 256 (cudnn bf16, cuda bf16) with this build's GPU plugin ("current") and with each
# plugin in .device/variant-NAME (build NAME), interleaved over three rounds.
#   call 1: current = the batch norm's channels-last kernels dependent; variant-main = main at cd3e3ae
#   call 2: current = those and the input block's (small_input_conv.cu, filterFinishKernel);
#           variant-bn-only = call 1's build; variant-main as before
#   call 3 (call3.sh, which then runs the side-by-side with PyTorch): current = also the kernels of
#           kernels/cuda/{layout,bf16_convert,activation,dropout,elementwise,loss,optimizer}.cu;
#           variant-bn-and-input-block = call 2's current (f737e1c); variant-main as before
# Usage: OUT=DIR bash docs/logs/2026-12-04-dependent-launch/driver.sh
set -uo pipefail
bin=$PWD/.device/bin
mkdir -p $OUT/tests
OUT=$OUT/tests timeout 330 bash tools/device-session.sh tests > /dev/null 2>&1
grep -hE '^\[  (PASSED|FAILED) |tests ran|FAILED  \]' $OUT/tests/*.log
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
variants=$(for folder in .device/variant-*/; do [ -d "$folder" ] && basename "$folder"; done)
for round in 1 2 3; do
  for build in ${variants//variant-/} current; do
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

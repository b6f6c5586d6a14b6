#!/usr/bin/env bash
# Issue #17, 2026-12-04 (stop 43), one H200: in one process the training step updates the
# parameters slice by slice during the backward pass, each slice (at least 1 Mi parameters) as
# soon as its gradients are enqueued, and the GPU backends run those updates on the side stream
# beside the rest of the pass (engine/src/optim/training_step.cpp, kernels/cuda/optimizer.cu).
# GPU suites on this build, then fer-cnn's step at batch 256, cudnn bf16 and cuda bf16, three
# interleaved rounds: main (719318f, .device/before-main), the held copies staged ahead
# (cc43e25, .device/before-staged) and this build ("current"); each earlier build with its own
# programs and libraries (the Backend interface changed).
# The change is not in main: it gained nothing (README.md); updates-beside.patch holds it.
# Usage: OUT=DIR bash docs/logs/2026-12-04-updates-beside/driver.sh (on a build with the patch)
set -uo pipefail
mkdir -p $OUT/tests
OUT=$OUT/tests timeout 330 bash tools/device-session.sh tests > /dev/null 2>&1
sed -i "s#$PWD/##g" $OUT/tests/*.log
grep -hE '^\[  (PASSED|FAILED) |tests ran|FAILED  \]' $OUT/tests/*.log
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
for round in 1 2 3; do
  for build in main staged current; do
    programs=$PWD/.device/bin libraries=$LD_LIBRARY_PATH plugins=$PWD/.device/lib/cnnstudio/plugins
    if [ $build != current ]; then
      folder=$PWD/.device/before-$build
      programs=$folder/bin libraries=$folder/lib:$LD_LIBRARY_PATH plugins=$folder/lib/cnnstudio/plugins
    fi
    for backend in cudnn cuda; do
      LD_LIBRARY_PATH=$libraries CNNSTUDIO_PLUGIN_DIR=$plugins timeout 60 $programs/cnnstudio-bench \
        --backend $backend --mode bf16 --batch 256 --no-save-copy 2>/dev/null |
        sed "s/^{/{\"build\": \"$build\", \"round\": $round, /" | tee -a $OUT/bench.jsonl |
        python3 -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["build"], d["round"], d["backend"], d["mode"], d["images_per_s"])'
    done
  done
done

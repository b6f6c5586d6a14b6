#!/usr/bin/env bash
# Issue #17, 2026-12-04 (stop 43), one H200: the side stream (weight gradients, staging ahead) at
# the device's greatest stream priority (.device/variant-sidefirst, this build's plugin with
# cudaStreamCreateWithPriority) beside this build ("current", both streams at the default
# priority) and main's (719318f, .device/before-main). fer-cnn at batch 256, cudnn bf16 and cuda
# bf16, three interleaved rounds.
# Usage: OUT=DIR bash docs/logs/2026-12-04-staged-ahead/priority.sh
set -uo pipefail
bash tools/device-session.sh > /dev/null 2>&1  # no step: unpacks the packed libraries only
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
for round in 1 2 3; do
  for build in main current sidefirst; do
    programs=$PWD/.device/bin libraries=$LD_LIBRARY_PATH plugins=$PWD/.device/lib/cnnstudio/plugins
    case $build in
      main) programs=$PWD/.device/before-main/bin libraries=$PWD/.device/before-main/lib:$LD_LIBRARY_PATH
            plugins=$PWD/.device/before-main/lib/cnnstudio/plugins ;;
      current) ;;
      *) plugins=$PWD/.device/variant-$build ;;
    esac
    for backend in cudnn cuda; do
      LD_LIBRARY_PATH=$libraries CNNSTUDIO_PLUGIN_DIR=$plugins timeout 60 $programs/cnnstudio-bench \
        --backend $backend --mode bf16 --batch 256 --no-save-copy 2>/dev/null |
        sed "s/^{/{\"build\": \"$build\", \"round\": $round, /" | tee -a $OUT/bench.jsonl |
        python3 -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["build"], d["round"], d["backend"], d["mode"], d["images_per_s"])'
    done
  done
done

#!/usr/bin/env bash
# Issue #17, 2026-12-04 (stop 43), one H200: the cudnn backend's held bf16 weight copies staged
# again as a hold begins, on the side stream beside the input layer's ops, instead of in front
# of each layer that reads one (kernels/cudnn/held_weights.h). GPU suites on this build, then
# fer-cnn's step at batch 256 (cudnn bf16) with this build ("current") and main's (719318f,
# .device/before-main: its own programs and libraries, the Backend interface changed),
# interleaved over three rounds.
# call1 ran it whole, but main's folder had been packed in the wrong place (no main lines);
# call2 ran the rounds again with the suites left out.
# Usage: OUT=DIR [SKIP_TESTS=1] bash docs/logs/2026-12-04-staged-ahead/driver.sh
set -uo pipefail
if [ -n "${SKIP_TESTS:-}" ]; then  # (call2: the suites had passed in call1)
  bash tools/device-session.sh > /dev/null 2>&1  # no step: unpacks the packed libraries only
else
  mkdir -p $OUT/tests
  OUT=$OUT/tests timeout 330 bash tools/device-session.sh tests > /dev/null 2>&1
  sed -i "s#$PWD/##g" $OUT/tests/*.log
  grep -hE '^\[  (PASSED|FAILED) |tests ran|FAILED  \]' $OUT/tests/*.log
fi
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
for round in 1 2 3; do
  for build in main current; do
    programs=$PWD/.device/bin libraries=$LD_LIBRARY_PATH plugins=$PWD/.device/lib/cnnstudio/plugins
    if [ $build = main ]; then
      programs=$PWD/.device/before-main/bin libraries=$PWD/.device/before-main/lib:$LD_LIBRARY_PATH
      plugins=$PWD/.device/before-main/lib/cnnstudio/plugins
    fi
    LD_LIBRARY_PATH=$libraries CNNSTUDIO_PLUGIN_DIR=$plugins timeout 60 $programs/cnnstudio-bench \
      --backend cudnn --mode bf16 --batch 256 --no-save-copy 2>/dev/null |
      sed "s/^{/{\"build\": \"$build\", \"round\": $round, /" | tee -a $OUT/bench.jsonl |
      python3 -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["build"], d["round"], d["backend"], d["mode"], d["images_per_s"])'
  done
done

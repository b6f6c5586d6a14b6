#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: upper bounds before building. Each variant plugin removes one
# piece of the step's work (its results are wrong; timing only), so the step's speed-up with it
# is the most that making that piece free could give. Patches beside this script:
#   no-restage          HeldWeights::find ignores the hold: bf16 weight copies staged once, never again
#   no-flatten          the Flatten's two NHWC<->NCHW transposes not launched
#   no-sgd              the SGD update not launched
#   no-filter-partials  the input block's masked filter sums not launched
#   all-four            all of them
# fer-cnn, batch 256, cudnn bf16, main's plugin ("current") and each variant, interleaved, 3 rounds.
# Usage: OUT=DIR bash docs/logs/2026-12-04-bounds/driver.sh
set -uo pipefail
bin=$PWD/.device/bin
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
variants=$(for folder in .device/variant-*/; do [ -d "$folder" ] && basename "$folder"; done)
for round in 1 2 3; do
  for build in current ${variants//variant-/}; do
    plugins=$PWD/.device/lib/cnnstudio/plugins
    [ $build = current ] || plugins=$PWD/.device/variant-$build
    CNNSTUDIO_PLUGIN_DIR=$plugins timeout 60 $bin/cnnstudio-bench --backend cudnn --mode bf16 \
      --batch 256 --no-save-copy 2>/dev/null |
      sed "s/^{/{\"build\": \"$build\", \"round\": $round, /" | tee -a $OUT/bench.jsonl |
      python3 -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["build"], d["round"], d["backend"], d["images_per_s"])'
  done
done

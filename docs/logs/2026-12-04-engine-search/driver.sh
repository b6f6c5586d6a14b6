#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: how wide should the cudnn backend's bf16 convolution engine
# search be? An experiment plugin (main at cd3e3ae with engine_search_experiment.patch applied to
# kernels/cudnn/conv_engine.cpp, packed by tools/pack-device.sh; the candidate list read from
# CNNSTUDIO_X_MODES: A, B, F = cuDNN heuristics modes A, B, fallback, E = every engine with its
# default knobs; CNNSTUDIO_X_CANDIDATES per heuristics query; CNNSTUDIO_X_LOG prints each timed
# candidate) runs conv_bench and fer-cnn's cudnn bf16 step with each list, interleaved. The
# default (A, 12) is main's search.
# The engine_tests line replays the seed of the closing call's tolerance failure first.
# Usage: OUT=DIR bash docs/logs/2026-12-04-engine-search/driver.sh
set -uo pipefail
bin=$PWD/.device/bin
bash tools/device-session.sh > /dev/null 2>&1  # unpacks the libraries
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
CNNSTUDIO_TEST_SEED=10276847059161050820 timeout 120 $bin/engine_tests \
  --gtest_filter='*ConvBatchNormReluTraining*' 2>&1 | grep -E '^\[  (PASSED|FAILED) |FAILED  \]|tests ran'
for search in "A 12" "AB 32" "ABFE 64"; do
  set -- $search
  echo "=== conv_bench modes=$1 candidates=$2"
  CNNSTUDIO_X_MODES=$1 CNNSTUDIO_X_CANDIDATES=$2 CNNSTUDIO_X_LOG=1 timeout 150 \
    $bin/conv_bench --backend cudnn --precision bf16 --batch 256 --repeats 20 \
    > $OUT/conv_$1.jsonl 2> $OUT/conv_$1.engines
  echo "rc=$? $(grep -c '^chosen' $OUT/conv_$1.engines) searches"
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        d = json.loads(line); print("%-8s %-16s %.4f" % (d["layer"], d["op"], d["ms"]))' $OUT/conv_$1.jsonl
done
for round in 1 2; do
  for search in "A 12" "AB 32" "ABFE 64"; do
    set -- $search
    CNNSTUDIO_X_MODES=$1 CNNSTUDIO_X_CANDIDATES=$2 timeout 120 $bin/cnnstudio-bench --backend cudnn \
      --mode bf16 --batch 256 --no-save-copy 2>/dev/null |
      sed "s/^{/{\"search\": \"$1 $2\", \"round\": $round, /" | tee -a $OUT/bench.jsonl |
      python3 -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["search"], d["round"], d["images_per_s"])'
  done
done

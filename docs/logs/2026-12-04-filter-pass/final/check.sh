#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: the stop's final build (2cca7ae: the kept moments copied by one
# block-wide helper, the cuda kernels' alignment checks through isAligned) through the GPU suites,
# then fer-cnn at batch 256 on both GPU backends in bf16.
# Usage: OUT=DIR bash docs/logs/2026-12-04-filter-pass/final/check.sh
set -uo pipefail
OUT=$OUT bash tools/device-session.sh tests > /dev/null 2>&1
grep -hE '^\[  (PASSED|FAILED) |tests ran' $OUT/kernels_tests.log $OUT/engine_tests.log
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
for backend in cudnn cuda; do
  timeout 60 .device/bin/cnnstudio-bench --backend $backend --mode bf16 --batch 256 --no-save-copy | grep '^{'
done | tee $OUT/bench.jsonl | cut -c1-150

#!/usr/bin/env bash
# Issue #17, pending a GPU run: the cudnn backend's dense weight gradients beside the backward
# pass (this branch) against main. One call on one H200: the GPU suites on this build
# (DenseBackwardWeightsInAnOverlapIsWholeAfterTheAwait is new), then fer-cnn's step at batch 256,
# cudnn bf16 and fp32, main and this build interleaved over three rounds
# (tools/device-session.sh bench-before-after, which prints each build's rounds and means).
# Set-up here: tools/pack-device.sh for this build; main's bench, libraries and plugin in
# .device/before-main (bin/cnnstudio-bench, lib/libcnn*.so, lib/cnnstudio/plugins/libcnngpu.so.xz).
# Usage: OUT=DIR bash docs/logs/pending-dense-beside/driver.sh
set -uo pipefail
mkdir -p "$OUT/tests"
OUT=$OUT/tests timeout 240 bash tools/device-session.sh tests > /dev/null 2>&1
sed -i "s#$PWD/##g" "$OUT"/tests/*.log
grep -hE '^\[  (PASSED|FAILED|SKIPPED) \]|tests ran|FAILED  \]' "$OUT"/tests/*.log
BENCH_BUILDS="main current" BENCH_CONFIGS="cudnn:bf16,fp32" BENCH_ROUNDS=3 OUT=$OUT \
  timeout 200 bash tools/device-session.sh bench-before-after 2>&1 | grep -v '^{' | tail -8

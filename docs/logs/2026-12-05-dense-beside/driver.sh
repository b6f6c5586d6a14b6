#!/usr/bin/env bash
# Issue #17, pending a GPU run: the cudnn backend's dense weight gradients beside the backward
# pass (this build) against main (68f6613). One call on one H200: the GPU suites on this build
# (DenseBackwardWeightsInAnOverlapIsWholeAfterTheAwait is new), then fer-cnn's step at batch 256,
# cudnn bf16 and fp32, main and this build interleaved over three rounds
# (tools/device-session.sh bench-before-after, which prints each build's rounds and means), then
# issue #17's side-by-side with PyTorch on this build (into sbs/).
# Set-up here: tools/pack-device.sh for this build (Fashion-MNIST left out: no step here reads
# it); main's bench, libraries and plugin in .device/before-main (bin/cnnstudio-bench,
# lib/libcnn*.so, lib/cnnstudio/plugins/libcnngpu.so.xz).
# Usage: OUT=DIR bash docs/logs/2026-12-05-dense-beside/driver.sh
set -uo pipefail
mkdir -p "$OUT/tests" "$OUT/sbs"
SECONDS=0
OUT=$OUT/tests timeout 220 bash tools/device-session.sh tests > /dev/null 2>&1
sed -i "s#$PWD/##g" "$OUT"/tests/*.log
grep -hE '^\[  (PASSED|FAILED|SKIPPED) \]|tests ran|FAILED  \]' "$OUT"/tests/*.log
echo "tests done at ${SECONDS} s"
BENCH_BUILDS="main current" BENCH_CONFIGS="cudnn:bf16,fp32" BENCH_ROUNDS=3 OUT=$OUT \
  timeout 170 bash tools/device-session.sh bench-before-after 2>&1 | grep -v '^{' | tail -8
echo "bench done at ${SECONDS} s"
OUT=$OUT/sbs timeout $((585 - SECONDS)) bash tools/device-session.sh side-by-side 2>&1 | tail -12
echo "side-by-side rc=$? at ${SECONDS} s"

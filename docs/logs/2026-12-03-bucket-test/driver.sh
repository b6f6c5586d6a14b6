#!/usr/bin/env bash
# One H200: FerCnnTraining.GradientBucketsReadTheirWeightGradientsWhole (every GPU backend and
# precision, fer-cnn at batch 64, a gradient bucket per layer) 5 times with this build, then 5
# times with this build's libcnnengine replaced by one whose GradientSync does not await the
# weight gradients before each bucket (.device/noawait/libcnnengine.so): the test must pass with
# the first and should fail with the second.
# Usage: OUT=DIR bash docs/logs/2026-12-03-bucket-test/driver.sh
set -uo pipefail
bash tools/device-session.sh > /dev/null  # unpacks the libraries
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
filter='*GradientBucketsReadTheirWeightGradientsWhole*'
timeout 250 .device/bin/kernels_tests --gtest_filter="$filter" --gtest_repeat=5 > $OUT/with_await.log 2>&1
echo "with the await: rc=$? passed=$(grep -c '^\[       OK' $OUT/with_await.log) failed=$(grep -c '^\[  FAILED  \] Every' $OUT/with_await.log)"
LD_LIBRARY_PATH=$PWD/.device/noawait:$LD_LIBRARY_PATH timeout 250 .device/bin/kernels_tests --gtest_filter="$filter" \
  --gtest_repeat=5 > $OUT/without_await.log 2>&1
echo "without the await: rc=$? passed=$(grep -c '^\[       OK' $OUT/without_await.log) failed=$(grep -c '^\[  FAILED  \] Every' $OUT/without_await.log)"

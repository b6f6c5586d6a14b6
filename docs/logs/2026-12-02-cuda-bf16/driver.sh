#!/usr/bin/env bash
# The cuda backend's bf16 precision (our own kernels on bf16 channels-last activations) on one
# H200, in one command: the cuda backend's GPU tests (fp32 and bf16), then fer-cnn training steps
# of cuda bf16 beside cudnn bf16 (cut to what the session's device time allowed).
# Needs .device from tools/pack-device.sh.  Usage: OUT=DIR bash driver.sh
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
for xz in .device/lib/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader
timeout 50 "$bin/kernels_tests" --gtest_filter='*Cuda*:*Layout*:*FerCnn*:*SmallInput*' > $OUT/kernels_tests.log 2>&1; echo "kernels_tests rc=$?"; tail -3 $OUT/kernels_tests.log
timeout 70 "$bin/engine_tests" --gtest_filter='*cuda*' > $OUT/engine_tests.log 2>&1; echo "engine_tests rc=$?"
grep -E "FAILED|PASSED|tests ran" $OUT/engine_tests.log | head -30
{ timeout 25 "$bin/cnnstudio-bench" --backend cuda --mode bf16 --batch 256
  timeout 25 "$bin/cnnstudio-bench" --backend cudnn --mode bf16 --batch 256
} > $OUT/bench.jsonl 2> $OUT/bench.err
cut -c1-260 $OUT/bench.jsonl; tail -3 $OUT/bench.err

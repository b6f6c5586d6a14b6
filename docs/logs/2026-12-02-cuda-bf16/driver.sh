#!/usr/bin/env bash
# The cuda backend's bf16 precision (our own kernels on bf16 channels-last activations) on one
# H200, in one command: the GPU tests (kernels_tests whole, engine_tests' cuda and cudnn
# instances), the bf16 tests again under compute-sanitizer memcheck, then fer-cnn training steps
# of cuda bf16 beside cudnn bf16, cuda fp32 and PyTorch's eager bf16 channels-last.
# Needs .device from tools/pack-device.sh.  Usage: OUT=DIR bash driver.sh
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
logs=$(mktemp -d)
for xz in .device/lib/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader
timeout 150 "$bin/kernels_tests" > $logs/kernels_tests.log 2>&1; echo "kernels_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $logs/kernels_tests.log | head -30
timeout 200 "$bin/engine_tests" --gtest_filter='*cuda*:*cudnn*' > $logs/engine_tests.log 2>&1; echo "engine_tests rc=$?"
grep -E "^\[  FAILED|PASSED|tests ran" $logs/engine_tests.log | head -30
sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [ -x $sanitizer ]; then
  timeout 120 $sanitizer --tool memcheck --error-exitcode 9 "$bin/kernels_tests" \
    --gtest_filter='*Bf16*:*cuda_bf16*:LayoutTest.*' > $logs/memcheck.log 2>&1; echo "memcheck rc=$?"
  grep -E "ERROR SUMMARY|PASSED|FAILED" $logs/memcheck.log | head; grep -m5 -A6 "Invalid" $logs/memcheck.log
fi
{ timeout 40 "$bin/cnnstudio-bench" --backend cuda --mode bf16 fp32 --batch 256
  timeout 40 "$bin/cnnstudio-bench" --backend cudnn --mode bf16 --batch 256
  timeout 90 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl
} > $logs/bench.jsonl 2> $logs/bench.err
cut -c1-300 $logs/bench.jsonl; tail -5 $logs/bench.err
tar -C $logs -czf $OUT/logs.tgz .

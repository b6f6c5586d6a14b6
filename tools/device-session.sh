#!/usr/bin/env bash
# Runs on the lent GPU machine, from the repository root, with .device/ carried (see
# pack-device.sh). Each step named on the command line runs in order; logs go to $OUT.
#   tests   GPU test suites (conformance of cuda and cudnn against cpu-ref, kernels tests)
#   bench   cnnstudio-bench beside pytorch_reference.py (GPU at batch 256, CPU at 16 threads)
#   train   fer-cnn on Fashion-MNIST on the GPU
#   sanitize  compute-sanitizer memcheck over the GPU tests
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device/lib:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
bin=$PWD/.device/bin
reference=$PWD/.device/pytorch_reference.py
for packed in .device/lib/*.gz; do [ -e "${packed%.gz}" ] || gunzip -k "$packed"; done
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv,noheader

for step in "$@"; do
  echo "=== $step"
  case $step in
  tests)
    "$bin/kernels_tests" 2>&1 | tee "$out/kernels_tests.log" | tail -5
    "$bin/engine_tests" --gtest_filter='*cuda*:*cudnn*:Network*' 2>&1 | tee "$out/engine_tests.log" | grep -E "FAILED|PASSED|tests ran" ;;
  bench)
    { "$bin/cnnstudio-bench" --backend cudnn --mode fp32 tf32 bf16 --batch 256
      "$bin/cnnstudio-bench" --backend cuda --mode fp32 --batch 256
      python3 "$reference" --batch 256
    } 2>&1 | tee "$out/bench_gpu.jsonl" ;;
  bench-cpu)
    { "$bin/cnnstudio-bench" --backend cpu --threads 16 --batch 64
      python3 "$reference" --device cpu --threads 16 --batch 64
      "$bin/cnnstudio-bench" --backend cpu --threads 1 --batch 64
      "$bin/cnnstudio-bench" --backend cpu-ref --threads 1 --batch 64 --steps 1
    } 2>&1 | tee "$out/bench_cpu.jsonl" ;;
  train)
    "$bin/cnnstudio-train" --preset fer-cnn --dataset idx:.device/fashion-mnist --backend cudnn \
      --precision bf16 --epochs ${EPOCHS:-15} --batch 256 --optimizer sgd --lr 0.1 --schedule cosine \
      --augment crop=2,flip --run-dir "$out/run" --log-every 100 2>&1 | tail -40 | tee "$out/train.log" ;;
  sanitize)
    compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/kernels_tests" 2>&1 | tail -5 | tee "$out/sanitizer.log"
    compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/engine_tests" --gtest_filter='*cuda*fp32*:*cudnn*fp32*' 2>&1 | tail -5 | tee -a "$out/sanitizer.log" ;;
  *) echo "unknown step $step" ;;
  esac
done

#!/usr/bin/env bash
# Runs on the lent GPU machine, from the repository root, with .device/ carried (see
# pack-device.sh). Each step named on the command line runs in order; logs go to $OUT.
#   tests   GPU test suites (conformance of cuda and cudnn against cpu-ref, kernels tests)
#   bench   cnnstudio-bench beside pytorch_reference.py (GPU at batch 256, CPU at 16 threads)
#   train   fer-cnn on Fashion-MNIST on the GPU
#   sanitize  compute-sanitizer memcheck over the GPU tests
#   bench-before-after  this build beside an earlier one (.device/before: bin/cnnstudio-bench
#             and the libraries it was built with), interleaved, two rounds
#   scaling-ours  cnnstudio-bench on one GPU and on every GPU of this machine (mpirun, NCCL)
#   reference  bench/pytorch_reference.py at batch 256 (fp32 and bf16 channels-last)
#   augment  augment_bench (Backend::augmentImages per batch of 256 fer images, every transform)
#            beside cnnstudio-bench's step at the same batch, cudnn bf16 and fp32 and cuda fp32
set -uo pipefail
# The plugin folder too: kernels_tests links the GPU plugin directly.
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
bin=$PWD/.device/bin
reference=$PWD/bench/pytorch_reference.py
for packed in .device/lib/*.gz; do [ -e "${packed%.gz}" ] || gunzip -k "$packed"; done
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv,noheader
ldd "$bin"/* .device/lib/*.so .device/lib/cnnstudio/plugins/*.so | grep "not found" | sort -u

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
      # the naive baseline, one thread each, at a batch small enough for plain loops
      "$bin/cnnstudio-bench" --backend cpu --threads 1 --batch 8 --steps 2
      "$bin/cnnstudio-bench" --backend cpu-ref --threads 1 --batch 8 --steps 1
    } 2>&1 | tee "$out/bench_cpu.jsonl" ;;
  train)
    start=$(date +%s)
    "$bin/cnnstudio-train" --preset fer-cnn --dataset idx:.device/fashion-mnist --backend ${BACKEND:-cudnn} \
      --precision ${PRECISION:-bf16} --epochs ${EPOCHS:-15} --batch 256 --optimizer sgd --lr 0.1 \
      --momentum 0.9 --weight-decay 5e-4 --schedule cosine --augment crop=2,flip --threads 16 \
      --run-dir "$out/run" --log-every 100 2>&1 | tail -25 | tee "$out/train.log"
    echo "wall time $(( $(date +%s) - start )) s" | tee -a "$out/train.log" ;;
  train-gpus)
    # the trainer itself on every GPU of this machine (it starts mpirun)
    gpus=$(nvidia-smi -L | wc -l)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    "$bin/cnnstudio-train" --gpus "$gpus" --preset fer-cnn --dataset idx:.device/fashion-mnist \
      --backend cudnn --precision bf16 --epochs 3 --batch 256 --optimizer sgd --lr 0.1 --momentum 0.9 \
      --schedule cosine --run-dir "$out/run-gpus" --log-every 100 2>&1 | tail -8 ;;
  compare)
    # the same short run on the CPU and on the GPU: both should land at the same accuracy
    for backend in cpu cudnn; do
      "$bin/cnnstudio-train" --preset fer-cnn --dataset idx:.device/fashion-mnist --backend $backend \
        --epochs 2 --limit 20000 --batch 256 --optimizer sgd --lr 0.1 --momentum 0.9 --schedule cosine \
        --threads 0 --seed 7 --run-dir "$out/compare-$backend" 2>&1 | grep -E "TEST ACCURACY|finished after"
    done ;;
  sanitize)
    timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/kernels_tests" > "$out/sanitizer.log" 2>&1
    grep -E "^=========" "$out/sanitizer.log" | head -40
    timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/engine_tests" --gtest_filter='*cuda*:*cudnn*' 2>&1 | tail -3 | tee -a "$out/sanitizer.log" ;;
  scaling)
    # data parallel on every GPU of this machine against PyTorch DDP, 256 images per GPU
    gpus=$(nvidia-smi -L | wc -l)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    { "$bin/cnnstudio-bench" --backend cudnn --mode fp32 bf16 --batch 256
      mpirun -np "$gpus" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
        "$bin/cnnstudio-bench" --backend cudnn --mode fp32 bf16 --batch 256
      python3 "$reference" --batch 256 --modes fp32 tf32-cl bf16
      torchrun --nproc-per-node "$gpus" "$reference" --ddp --batch 256 --modes fp32 tf32-cl bf16
    } 2>&1 | grep -v Warning | tee "$out/scaling.jsonl" ;;
  bench-before-after)
    for round in 1 2; do
      for build in before current; do
        programs=$bin libraries=$LD_LIBRARY_PATH
        if [ $build = before ]; then programs=$PWD/.device/before/bin libraries=$PWD/.device/before/lib:$LD_LIBRARY_PATH; fi
        { LD_LIBRARY_PATH=$libraries "$programs/cnnstudio-bench" --backend cudnn --mode fp32 tf32 bf16 --batch 256
          LD_LIBRARY_PATH=$libraries "$programs/cnnstudio-bench" --backend cuda --mode fp32 --batch 256
        } | sed "s/^{/{\"build\": \"$build\", \"round\": $round, /"
      done
    done 2>&1 | tee "$out/bench_before_after.jsonl" ;;
  scaling-ours)
    gpus=$(nvidia-smi -L | wc -l)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    { "$bin/cnnstudio-bench" --backend cudnn --mode fp32 bf16 --batch 256
      mpirun -np "$gpus" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
        "$bin/cnnstudio-bench" --backend cudnn --mode fp32 bf16 --batch 256
    } 2>&1 | grep -v Warning | tee "$out/scaling_ours.jsonl" ;;
  augment)
    { for mode in bf16 fp32; do
        "$bin/augment_bench" --backend cudnn --mode $mode --batch 256 --steps 200
        "$bin/cnnstudio-bench" --backend cudnn --mode $mode --batch 256
      done
      "$bin/augment_bench" --backend cuda --mode fp32 --batch 256 --steps 200
      "$bin/augment_bench" --backend cpu --threads 16 --batch 256
    } 2>&1 | tee "$out/augment_gpu.log" ;;
  reference)
    python3 "$reference" --batch 256 --modes fp32 bf16-cl 2>&1 | grep -v Warning | tee "$out/reference.jsonl" ;;
  *) echo "unknown step $step" ;;
  esac
done

#!/usr/bin/env bash
# The pooled batch-norm chain with its backward kernels at one window a step (no register spills),
# on one H200:
# the GPU test suites of this build; fer-cnn at batch 256, cudnn and cuda bf16, this build beside
# the first version of the chain (.device/before: main at cea9070, bin/cnnstudio-bench and its libraries),
# interleaved, two rounds; then ours beside PyTorch 2.11 eager (bf16 channels-last, fp32) and
# bf16 channels-last under torch.compile(mode="max-autotune"), ours again after PyTorch; then the
# step's breakdown by layer of both bf16 paths (cnnstudio-bench --report).
# Needs .device from tools/pack-device.sh.   Usage: OUT=DIR bash docs/logs/2026-12-03-pooled-chain-tuned/driver.sh
set -uo pipefail
OUT=$OUT/tests bash tools/device-session.sh tests
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
logs=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee $logs/gpu.txt
for round in 1 2; do
  for build in before current; do
    programs=$bin libraries=$LD_LIBRARY_PATH
    if [ $build = before ]; then programs=$PWD/.device/before/bin libraries=$PWD/.device/before/lib:$LD_LIBRARY_PATH; fi
    for backend in cudnn cuda; do
      LD_LIBRARY_PATH=$libraries timeout 60 "$programs/cnnstudio-bench" --backend $backend --mode bf16 --batch 256 |
        sed "s/^{/{\"build\": \"$build\", \"round\": $round, /"
    done
  done
done 2> $logs/before_after.err | tee $logs/bench_before_after.jsonl | cut -c1-200
ours() {
  timeout 60 "$bin/cnnstudio-bench" --backend cudnn --mode bf16 fp32 --batch 256
  timeout 60 "$bin/cnnstudio-bench" --backend cuda --mode bf16 fp32 --batch 256
}
{ ours
  timeout 120 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl fp32
  timeout 300 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl --compile max-autotune 2> $logs/compile.txt
  ours | sed 's/^{/{"round": 2, /'
} 2> $logs/bench.err | tee $logs/ours_and_pytorch.txt | grep '^{' > $logs/side_by_side_pytorch.jsonl
cut -c1-200 $logs/side_by_side_pytorch.jsonl
tar -C $logs -czf $OUT/logs.tgz .
for config in "cuda bf16" "cudnn bf16"; do
  timeout 60 "$bin/cnnstudio-bench" --config "$config batch=256" --report "$logs/report_${config// /_}.json" \
    >> $logs/report.out 2>&1
done
tar -C $logs -czf $OUT/logs.tgz .

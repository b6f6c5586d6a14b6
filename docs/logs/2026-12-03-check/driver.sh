#!/usr/bin/env bash
# The closing check of 2026-12-03's third stop on one H200, the build of its final code (packed by
# tools/pack-device.sh): the GPU test suites; fusion_bench, whose graph-API descriptors are now the
# cudnn backend's own (kernels/cudnn/backend_descriptor.h); then fer-cnn at batch 256 of ours
# beside PyTorch 2.11 eager (bf16 channels-last, fp32) and bf16 channels-last under
# torch.compile(mode="max-autotune"), ours again after PyTorch.
# Usage: OUT=DIR bash docs/logs/2026-12-03-check/driver.sh
set -uo pipefail
OUT=$OUT/tests bash tools/device-session.sh tests
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
timeout 120 "$bin/fusion_bench" --batch 256 --candidates 6 --runs 20 > $OUT/fusion_bench.log 2>&1
echo "fusion_bench rc=$?" | tee -a $OUT/fusion_bench.log
ours() {
  timeout 60 "$bin/cnnstudio-bench" --backend cudnn --mode bf16 fp32 --batch 256
  timeout 60 "$bin/cnnstudio-bench" --backend cuda --mode bf16 fp32 --batch 256
}
{ ours
  timeout 120 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl fp32
  timeout 300 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl --compile max-autotune 2> $OUT/compile.txt
  ours | sed 's/^{/{"round": 2, /'
} 2> $OUT/bench.err | tee $OUT/ours_and_pytorch.txt | grep '^{' > $OUT/side_by_side_pytorch.jsonl
cut -c1-200 $OUT/side_by_side_pytorch.jsonl

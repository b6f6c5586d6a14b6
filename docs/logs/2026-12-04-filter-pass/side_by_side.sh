#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200, the call after tests.sh: the final build's fer-cnn at
# batch 256 beside PyTorch 2.11 eager (bf16 channels-last, fp32) and bf16 channels-last under
# torch.compile(mode="max-autotune"), then ours again after PyTorch (lines with "round": 2).
# Usage: OUT=DIR bash docs/logs/2026-12-04-filter-pass/side_by_side.sh
set -uo pipefail
bash tools/device-session.sh > /dev/null  # unpacks the libraries
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=.device/bin
ours() {
  timeout 60 "$bin/cnnstudio-bench" --backend cudnn --mode bf16 fp32 --batch 256 --no-save-copy
  timeout 60 "$bin/cnnstudio-bench" --backend cuda --mode bf16 fp32 --batch 256 --no-save-copy
}
{ ours
  timeout 120 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl fp32
  timeout 300 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl --compile max-autotune 2> $OUT/compile.txt
  ours | sed 's/^{/{"round": 2, /'
} 2> $OUT/side_by_side.err | tee $OUT/ours_and_pytorch.txt | grep '^{' > $OUT/side_by_side_pytorch.jsonl
cut -c1-200 $OUT/side_by_side_pytorch.jsonl

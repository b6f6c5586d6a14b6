#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200: every kernel of fer-cnn's training step on cudnn bf16 at batch
# 256 under Nsight Compute, the final build of this stop, for step_kernels.py (the last whole
# step, kernel by kernel). As in ../../2026-12-03-breakdown/: cuDNN's convolutions are chosen by
# timing, which ncu's interception distorts, so their rows rank rather than measure.
# Usage: OUT=DIR bash docs/logs/2026-12-04-filter-pass/step/driver.sh
set -uo pipefail
bash tools/device-session.sh > /dev/null 2>&1  # unpacks the libraries and the GPU plugin
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
timeout 400 /usr/local/cuda/bin/ncu --clock-control none --cache-control none \
  --metrics gpu__time_duration.sum --csv --print-units base --log-file $OUT/ncu_step.csv \
  .device/bin/cnnstudio-bench --backend cudnn --mode bf16 --batch 256 --steps 3 --warmup 1 --repeats 1 \
  --no-save-copy > $OUT/ncu_bench.log 2>&1
echo "ncu rc=$?"
python3 docs/logs/2026-12-04-filter-pass/step/step_kernels.py $OUT/ncu_step.csv | tee $OUT/step_kernels.md
xz -9 $OUT/ncu_step.csv

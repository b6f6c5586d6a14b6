#!/usr/bin/env bash
# Issue #17: what cuDNN's runtime-fusion engines charge for batch-norm work fused into fer-cnn's
# convolutions on one H200 (bench/fusion_bench.cpp; its build carried in build-fusion/).
#   OUT=$OUT bash docs/logs/2026-12-03-fusion/driver.sh
# fusion_bench.log: the table; cudnn_errors.log: cuDNN's own reasons for any graph or engine it
# refused (CUDNN_LOGLEVEL_DBG=1, errors only).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
start=$(date +%s)
CUDNN_LOGLEVEL_DBG=1 CUDNN_LOGDEST_DBG=$OUT/cudnn_errors.log \
  build-fusion/fusion_bench --batch 256 --candidates 6 --runs 20 2>&1 | tee $OUT/fusion_bench.log
echo "fusion_bench rc=${PIPESTATUS[0]} wall=$(( $(date +%s) - start )) s" | tee -a $OUT/fusion_bench.log
[ -s $OUT/cudnn_errors.log ] && gzip $OUT/cudnn_errors.log
ls -la $OUT

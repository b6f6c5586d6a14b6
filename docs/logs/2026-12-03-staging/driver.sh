#!/usr/bin/env bash
# One H200: the GPU test suites, then this build (cuDNN's engines chosen among heuristics modes A,
# B and the fallback list; small images transposed whole in shared memory) beside main at 44a0743
# (.device/before: its cnnstudio-bench, libcnnbackends and GPU plugin; the other libraries are the
# same), interleaved over two rounds, fer-cnn at batch 256 with each invocation's wall time (the
# engine search included); then Nsight Compute's kernel durations over this build's training steps
# (cudnn bf16), as docs/logs/2026-12-03-verify did for the build before.
# Usage: OUT=DIR bash docs/logs/2026-12-03-staging/driver.sh
set -uo pipefail
OUT=$OUT/tests bash tools/device-session.sh tests
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
for round in 1 2; do
  for build in before current; do
    programs=$PWD/.device/bin libraries=$LD_LIBRARY_PATH
    if [ $build = before ]; then programs=$PWD/.device/before/bin libraries=$PWD/.device/before/lib:$LD_LIBRARY_PATH; fi
    for backend in cudnn cuda; do
      start=$EPOCHREALTIME
      line=$(LD_LIBRARY_PATH=$libraries timeout 120 "$programs/cnnstudio-bench" --backend $backend --mode bf16 --batch 256 --no-save-copy | grep '^{')
      wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
      echo "$line" | sed "s/^{/{\"build\": \"$build\", \"round\": $round, \"wall_s\": $wall, /"
    done
  done
done 2>&1 | tee $OUT/bench_before_after.jsonl | cut -c1-160
timeout 300 /usr/local/cuda/bin/ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum \
  --csv --print-units base --log-file $OUT/ncu_raw.csv \
  .device/bin/cnnstudio-bench --backend cudnn --mode bf16 --batch 256 --steps 3 --warmup 1 --repeats 1 \
  --no-save-copy > $OUT/ncu_bench.log 2>&1
echo "ncu rc=$?"; xz -9 $OUT/ncu_raw.csv

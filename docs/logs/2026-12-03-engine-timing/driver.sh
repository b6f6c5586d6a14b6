#!/usr/bin/env bash
# One H200: the GPU test suites, then this build beside main at 44a0743 (.device/before: its
# cnnstudio-bench, libcnnbackends and GPU plugin; the other libraries are the same), interleaved
# over two rounds, fer-cnn at batch 256, each invocation's wall time with it. This build: cuDNN's
# engine candidates timed back to back between one pair of events (the host's work between them
# no longer counted), small images transposed whole, and the loss's forward kernel on a group of
# lanes per sample. Then Nsight Compute's kernel durations over this build's replayed steps, the
# engine search and the warm-up left unprofiled (the first 2000 launches; 1117 came before the
# first replay with the engine search of 44a0743, which ran each candidate 4 times instead of 6).
# Usage: OUT=DIR bash docs/logs/2026-12-03-engine-timing/driver.sh
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
done 2> $OUT/bench.err | tee $OUT/bench_before_after.jsonl | cut -c1-150
timeout 300 /usr/local/cuda/bin/ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum \
  --launch-skip 2000 --csv --print-units base --log-file $OUT/ncu_current.csv \
  .device/bin/cnnstudio-bench --backend cudnn --mode bf16 --batch 256 --steps 10 --warmup 1 --repeats 1 \
  --no-save-copy > $OUT/ncu_bench_current.log 2>&1
echo "ncu rc=$?"; xz -9 $OUT/ncu_current.csv

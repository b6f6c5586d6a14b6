#!/usr/bin/env bash
# One H200: Nsight Compute's kernel durations over fer-cnn's graph-replayed training steps (cudnn
# bf16, batch 256) of main at 44a0743 (.device/before) and of this build (small images transposed
# whole), kernel launches before the replays left unprofiled: under a profiled launch the engine
# search's timing includes the profiler's replay, and cuDNN's engines then differ from an ordinary
# run's (docs/logs/2026-12-03-verify and -staging profiled every launch). 1117 launches come before
# the first replay in both builds (the engine search and the warm-up step).
# Usage: OUT=DIR bash docs/logs/2026-12-03-breakdown/driver.sh
set -uo pipefail
bash tools/device-session.sh  # unpacks the compressed libraries
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
for build in before current; do
  programs=$PWD/.device/bin libraries=$LD_LIBRARY_PATH
  if [ $build = before ]; then programs=$PWD/.device/before/bin libraries=$PWD/.device/before/lib:$LD_LIBRARY_PATH; fi
  LD_LIBRARY_PATH=$libraries timeout 240 /usr/local/cuda/bin/ncu --clock-control none --cache-control none \
    --metrics gpu__time_duration.sum --launch-skip 1117 --csv --print-units base --log-file $OUT/ncu_$build.csv \
    "$programs/cnnstudio-bench" --backend cudnn --mode bf16 --batch 256 --steps 3 --warmup 1 --repeats 1 \
    --no-save-copy > $OUT/ncu_bench_$build.log 2>&1
  echo "$build ncu rc=$?"; xz -9 $OUT/ncu_$build.csv
done

#!/usr/bin/env bash
# Where oneDNN's time goes in the cpu backend's bf16 step: fer-cnn, batch 64, one thread, the
# warm-up step and two timed steps of one repeat under ONEDNN_VERBOSE=1, summed per primitive
# kind and implementation (milliseconds, calls). Usage: BUILD=DIR bash onednn_verbose.sh
ONEDNN_VERBOSE=1 "$BUILD/app/cnnstudio-bench" --backend cpu --mode bf16 --threads 1 --batch 64 --steps 2 \
    --warmup 1 --repeats 1 --no-save-copy 2>&1 |
  awk -F, '/^onednn_verbose,exec/ {key = $4 "," $5 "," $6; time[key] += $NF; calls[key]++}
           END {for (key in time) printf "%9.1f ms %4d  %s\n", time[key], calls[key], key}' | sort -rn

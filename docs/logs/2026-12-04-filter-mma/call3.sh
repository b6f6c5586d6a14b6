#!/usr/bin/env bash
# Issue #17, 2026-12-04, one H200, the third call: the tensor-core filter partials' pipeline
# depth against occupancy: this build ("current": 4 stages, 384 splits, 73.7 KB of shared memory
# a block, 3 blocks a multiprocessor) beside variant-s3-512 (3 stages, 512 splits, 4 blocks) and
# variant-s2-640 (2 stages, 640 splits, 5 blocks), and main (.device/variant-main); every build
# but main's leaves FFT algorithms out of strict fp32 (kernels/cudnn/conv.cpp). fer-cnn at batch
# 256: cudnn bf16 and cudnn fp32, three interleaved rounds; then the kernel's GPU time under ncu.
# Usage: OUT=DIR bash docs/logs/2026-12-04-filter-mma/call3.sh
set -uo pipefail
bin=$PWD/.device/bin
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
variants=$(for folder in .device/variant-*/; do [ -d "$folder" ] && basename "$folder"; done)
for round in 1 2 3; do
  for build in current ${variants//variant-/}; do
    plugins=$PWD/.device/lib/cnnstudio/plugins
    [ $build = current ] || plugins=$PWD/.device/variant-$build
    for mode in bf16 fp32; do
      CNNSTUDIO_PLUGIN_DIR=$plugins timeout 60 $bin/cnnstudio-bench --backend cudnn --mode $mode \
        --batch 256 --no-save-copy 2>/dev/null |
        sed "s/^{/{\"build\": \"$build\", \"round\": $round, /" | tee -a $OUT/bench.jsonl |
        python3 -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["build"], d["round"], d["backend"], d["mode"], d["images_per_s"])'
    done
  done
done
for build in current ${variants//variant-/}; do
  plugins=$PWD/.device/lib/cnnstudio/plugins
  [ $build = current ] || plugins=$PWD/.device/variant-$build
  CNNSTUDIO_PLUGIN_DIR=$plugins timeout 100 /usr/local/cuda/bin/ncu --clock-control none \
    --kernel-name regex:'FilterPartials' --launch-count 3 --metrics gpu__time_duration.sum --csv \
    $bin/cnnstudio-bench --backend cudnn --mode bf16 --batch 256 --steps 2 --warmup 1 --repeats 1 \
    --no-save-copy 2>/dev/null | grep -v -e '^==' -e '^{' | python3 -c '
import csv, sys
for row in csv.DictReader(sys.stdin):
    if row.get("Metric Value"): print(sys.argv[1], row["Kernel Name"].split("(")[0][-50:], row["Metric Value"])' $build
done | tee $OUT/ncu_times.txt

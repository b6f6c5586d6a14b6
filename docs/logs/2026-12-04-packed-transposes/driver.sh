#!/usr/bin/env bash
# Issue #17, 2026-12-04 (stop 43), one H200: the whole-image transposes (kernels/cuda/layout.cu:
# fer-cnn's Flatten both ways, the filters' KCRS <-> KRSC staging) in 16-byte packs and pairs.
# GPU suites on this build, then fer-cnn's step at batch 256, cudnn bf16 and cuda bf16, three
# interleaved rounds: main (719318f, .device/before-main), 1bcd131 (the held copies staged ahead,
# .device/before-staged) and this build ("current"), each earlier build with its own programs and
# libraries; then the transposes' GPU time under ncu in 1bcd131 and in this build.
# Usage: OUT=DIR bash docs/logs/2026-12-04-packed-transposes/driver.sh
set -uo pipefail
mkdir -p $OUT/tests
OUT=$OUT/tests timeout 330 bash tools/device-session.sh tests > /dev/null 2>&1
sed -i "s#$PWD/##g" $OUT/tests/*.log
grep -hE '^\[  (PASSED|FAILED) |tests ran|FAILED  \]' $OUT/tests/*.log
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
# Sets programs, libraries and plugins to build $1's.
use_build() {
  programs=$PWD/.device/bin libraries=$LD_LIBRARY_PATH plugins=$PWD/.device/lib/cnnstudio/plugins
  if [ $1 != current ]; then
    local folder=$PWD/.device/before-$1
    programs=$folder/bin libraries=$folder/lib:$LD_LIBRARY_PATH plugins=$folder/lib/cnnstudio/plugins
  fi
}
for round in 1 2 3; do
  for build in main staged current; do
    use_build $build
    for backend in cudnn cuda; do
      LD_LIBRARY_PATH=$libraries CNNSTUDIO_PLUGIN_DIR=$plugins timeout 60 $programs/cnnstudio-bench \
        --backend $backend --mode bf16 --batch 256 --no-save-copy 2>/dev/null |
        sed "s/^{/{\"build\": \"$build\", \"round\": $round, /" | tee -a $OUT/bench.jsonl |
        python3 -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["build"], d["round"], d["backend"], d["mode"], d["images_per_s"])'
    done
  done
done
for build in staged current; do
  use_build $build
  LD_LIBRARY_PATH=$libraries CNNSTUDIO_PLUGIN_DIR=$plugins timeout 100 /usr/local/cuda/bin/ncu \
    --clock-control none --kernel-name regex:'transpose' --launch-count 14 \
    --metrics gpu__time_duration.sum --csv $programs/cnnstudio-bench --backend cudnn --mode bf16 \
    --batch 256 --steps 2 --warmup 1 --repeats 1 --no-save-copy 2>/dev/null |
    grep -v -e '^==' -e '^{' | python3 -c '
import csv, sys
for row in csv.DictReader(sys.stdin):
    if row.get("Metric Value"): print(sys.argv[1], row["Kernel Name"].split("(")[0][-70:], row.get("Grid Size", ""), row["Metric Value"])' $build
done | tee $OUT/ncu_transposes.txt

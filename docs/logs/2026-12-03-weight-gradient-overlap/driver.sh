#!/usr/bin/env bash
# One H200: the GPU test suites, then this build beside main at e7afbae (.device/before: its
# cnnstudio-bench, libcnnbackends and GPU plugin) and beside a variant of this build whose two
# streams have one priority (.device/samepriority: its GPU plugin), interleaved over two rounds,
# fer-cnn at batch 256 on cudnn and cuda in bf16 and fp32. This build: convolution weight
# gradients run on a second, lower-priority stream during the backward pass, forked from the
# step's stream at each call and joined before the optimiser. Then, if the machine has Nsight
# Systems, the GPU trace of a few replayed steps of this build (how much the streams overlap).
# Usage: OUT=DIR bash docs/logs/2026-12-03-weight-gradient-overlap/driver.sh
set -uo pipefail
OUT=$OUT/tests bash tools/device-session.sh tests
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
# The two other builds' GPU plugins travel compressed (the carried tree may hold 64 MiB).
for packed in .device/before/lib/cnnstudio/plugins/*.xz .device/samepriority/lib/cnnstudio/plugins/*.xz; do
  python3 -c 'import lzma, sys; open(sys.argv[1][:-3], "wb").write(lzma.open(sys.argv[1]).read())' "$packed"
done
for round in 1 2; do
  for build in before current samepriority; do
    programs=$PWD/.device/bin libraries=$LD_LIBRARY_PATH
    if [ $build = before ]; then programs=$PWD/.device/before/bin libraries=$PWD/.device/before/lib:$LD_LIBRARY_PATH; fi
    if [ $build = samepriority ]; then libraries=$PWD/.device/samepriority/lib:$LD_LIBRARY_PATH; fi
    for backend in cudnn cuda; do
      start=$EPOCHREALTIME
      line=$(LD_LIBRARY_PATH=$libraries timeout 180 "$programs/cnnstudio-bench" --backend $backend --mode bf16 fp32 --batch 256 --no-save-copy | grep '^{')
      wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
      echo "$line" | sed "s/^{/{\"build\": \"$build\", \"round\": $round, \"wall_s\": $wall, /"
    done
  done
done 2> $OUT/bench.err | tee $OUT/bench_before_after.jsonl | cut -c1-150
nsys=$(ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${nsys:-none}"
if [ -n "$nsys" ]; then
  timeout 240 "$nsys" profile --trace cuda --cuda-graph-trace node --output $OUT/overlap \
    .device/bin/cnnstudio-bench --backend cudnn --mode bf16 --batch 256 --steps 10 --warmup 1 --repeats 1 \
    --no-save-copy > $OUT/nsys_bench.log 2>&1
  echo "nsys rc=$?"
  timeout 120 "$nsys" stats --report cuda_gpu_trace --format csv --output $OUT/overlap $OUT/overlap.nsys-rep > /dev/null 2>&1
  xz -9 $OUT/overlap_cuda_gpu_trace.csv 2>/dev/null; rm -f $OUT/overlap.sqlite $OUT/overlap.nsys-rep; ls $OUT
fi

#!/usr/bin/env bash
# Issue #17's final one-command comparison (2026-12-03, one H200): fer-cnn training steps at
# batch 256 of every backend and precision of ours beside PyTorch 2.11's eager fp32 and bf16
# channels-last and its bf16 channels-last under torch.compile(mode="max-autotune"); ours ran
# again after PyTorch to show the drift within the call. Then the step's breakdown by layer
# (cnnstudio-bench --report) of both bf16 paths and, where Nsight Systems is installed, the cuda
# bf16 step's kernels. Needs .device from tools/pack-device.sh.  Usage: OUT=DIR bash driver.sh
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
logs=$(mktemp -d)
for xz in .device/lib/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee $logs/gpu.txt
ours() {
  timeout 60 "$bin/cnnstudio-bench" --backend cudnn --mode bf16 fp32 --batch 256
  timeout 60 "$bin/cnnstudio-bench" --backend cuda --mode bf16 fp32 --batch 256
}
{ ours
  timeout 120 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl fp32
  timeout 300 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl --compile max-autotune 2> $logs/compile.txt
  ours | sed 's/^{/{"round": 2, /'
} 2> $logs/bench.err | tee $logs/ours_and_pytorch.txt | grep '^{' > $logs/side_by_side_pytorch.jsonl
cut -c1-220 $logs/side_by_side_pytorch.jsonl
tar -C $logs -czf $OUT/logs.tgz .
for config in "cuda bf16" "cudnn bf16"; do
  timeout 60 "$bin/cnnstudio-bench" --config "$config batch=256" --report "$logs/report_${config// /_}.json" \
    >> $logs/report.out 2>&1
done
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$nsys" ]; then
  timeout 120 "$nsys" profile -o $logs/cuda_bf16 --cuda-graph-trace=node -t cuda \
    "$bin/cnnstudio-bench" --config "cuda bf16 batch=256" --steps 10 --repeats 1 --no-save-copy > $logs/nsys.out 2>&1
  timeout 90 "$nsys" stats -r cuda_gpu_kern_sum $logs/cuda_bf16.nsys-rep > $logs/kernel_summary.txt 2>&1
  rm -f $logs/*.nsys-rep $logs/*.sqlite
else
  echo "no nsys on this machine" > $logs/kernel_summary.txt
fi
tar -C $logs -czf $OUT/logs.tgz .

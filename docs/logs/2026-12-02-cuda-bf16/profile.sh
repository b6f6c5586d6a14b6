set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin; logs=$(mktemp -d)
for xz in .device/lib/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
which nsys ncu; ls /usr/local/cuda/bin | tr '\n' ' '
timeout 60 $bin/cnnstudio-bench --config "cuda bf16 batch=256" --report $logs/cuda_bf16.json > $logs/b1.out 2>&1
timeout 60 $bin/cnnstudio-bench --config "cudnn bf16 batch=256" --report $logs/cudnn_bf16.json > $logs/b2.out 2>&1
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$nsys" ]; then
  timeout 150 $nsys profile -o $logs/cuda_bf16 --cuda-graph-trace=node -t cuda $bin/cnnstudio-bench --config "cuda bf16 batch=256" --steps 10 --repeats 1 --no-save-copy > $logs/nsys.out 2>&1
  timeout 100 $nsys stats -r cuda_gpu_kern_sum $logs/cuda_bf16.nsys-rep > $logs/kern_sum.txt 2>&1
  rm -f $logs/*.nsys-rep $logs/*.sqlite; head -60 $logs/kern_sum.txt | cut -c1-250
fi
tar -C $logs -czf $OUT/logs.tgz .

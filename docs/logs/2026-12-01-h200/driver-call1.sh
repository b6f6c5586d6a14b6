#!/usr/bin/env bash
# Session-only driver for the two-GPU call: the project's device-session.sh steps, the trainer's
# throughput beside cnnstudio-bench on the same network and batch, everything packed into one archive.
set -uo pipefail
start=$(date +%s)
back=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
nvidia-smi -L
bash .device/device-session.sh sweep 2>&1 | tail -30
cp $OUT/sweep-fer-cnn.json $back/ 2>/dev/null
bash .device/device-session.sh tests 2>&1 | tail -12
# The trainer against the benchmark: fer-cnn fitted to the carried images, batch 128, cudnn bf16.
bin=$PWD/.device/bin
"$bin/cnnstudio-train" --preset fer-cnn --dataset idx:.device/fashion-mnist --backend cudnn --precision bf16 \
  --epochs 12 --batch 128 --optimizer sgd --lr 0.05 --momentum 0.9 --schedule cosine --augment crop=4,flip \
  --threads 16 --log-every 50 --run-dir /tmp/thr --events $OUT/throughput-train.events.jsonl > $OUT/throughput-train.log 2>&1
tail -4 $OUT/throughput-train.log
"$bin/cnnstudio-bench" --model /tmp/thr/spec.json --backend cudnn --mode bf16 --batch 128 2>&1 | tee $OUT/throughput-bench.jsonl
bash .device/device-session.sh augment 2>&1 | grep -v "^$" | tail -12
elapsed=$(( $(date +%s) - start )); echo "elapsed before sanitizers: $elapsed s"
left=$(( 330 - elapsed ))
if [ $left -gt 60 ]; then
  SANITIZE_TOOLS="memcheck racecheck synccheck" SANITIZE_TIMEOUT=$(( left / 6 )) bash .device/device-session.sh sanitize 2>&1 | tail -8
fi
cd /tmp && tar czf $back/all.tar.gz o && ls -la $back

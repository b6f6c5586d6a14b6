#!/usr/bin/env bash
# Session-only: the trainer beside cnnstudio-bench on the same network and batch; the GPU sanitizers
# over kernels_tests with the time the last call did not have.
set -uo pipefail
back=$OUT; export OUT=/tmp/o; mkdir -p $OUT
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
for packed in .device/lib/*.gz; do [ -e "${packed%.gz}" ] || gunzip -k "$packed"; done
bin=$PWD/.device/bin
ldd $bin/cnnstudio-train | grep "not found"
for batch in 128 256; do
  "$bin/cnnstudio-train" --preset fer-cnn --dataset idx:.device/fashion-mnist --backend cudnn --precision bf16 \
    --epochs 30 --batch $batch --optimizer sgd --lr 0.05 --momentum 0.9 --schedule cosine --augment crop=4,flip \
    --threads 16 --log-every 50 --run-dir /tmp/thr$batch --events $OUT/throughput-train-$batch.events.jsonl > $OUT/throughput-train-$batch.log 2>&1
  tail -3 $OUT/throughput-train-$batch.log
  "$bin/cnnstudio-bench" --model /tmp/thr$batch/spec.json --backend cudnn --mode bf16 --batch $batch 2>&1 | grep -v "^\[" | tee $OUT/throughput-bench-$batch.jsonl
done
SANITIZE_TOOLS="racecheck memcheck" SANITIZE_TIMEOUT=90 bash .device/device-session.sh sanitize 2>&1 | tail -6
cd /tmp && tar czf $back/all.tar.gz o && ls -la $back

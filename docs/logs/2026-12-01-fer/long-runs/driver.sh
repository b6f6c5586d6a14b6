#!/usr/bin/env bash
# Session-only driver (the project's own is tools/device-session.sh fer): FER2013 on one H200.
# The data came in three carried pieces of two xz streams (MED-predicted residuals; codec.py);
# the timed fer-cnn runs train alone, the long runs side by side (accuracy only).
set -uo pipefail
start=$(date +%s)
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
[ -x "$bin/cnnstudio-train" ] || { echo "no .device pack here: the machine was not kept warm"; exit 3; }
ls -la .ferdata
cat .ferdata/fer.xzs.part* > /tmp/fer.xz && python3 .ferdata/codec.py decode /tmp/fer.csv /tmp/fer.xz
sha256sum /tmp/fer.csv   # e288d5079e610dc7770b4a6e2c606dcabc313af9dd564c885f36f1dd553ae101 here
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader
L=$OUT/logs; R=/tmp/runs; mkdir -p $L $R
strong="crop=4,flip,rotate=10,scale=0.9-1.1,erase=0.25"
train() { name=$1; shift; local t0=$(date +%s.%N)
  echo "cnnstudio-train $* --dataset fer2013:fer2013.csv --run-dir runs/$name" > $L/$name.cmd
  timeout ${LIMIT:-560} "$bin/cnnstudio-train" "$@" --dataset fer2013:/tmp/fer.csv --run-dir $R/$name > $L/$name.log 2>&1
  echo "$name rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $t0}") s" | tee -a $L/$name.log; }
# alone on the GPU: the 10-second target (66% PublicTest)
train fer-cnn-b256-e20 --recipe fer-cnn --epochs 20 --batch 256 --lr 0.1 --threads 16
train fer-cnn-b256-e14 --recipe fer-cnn --epochs 14 --batch 256 --lr 0.1 --threads 16
train fer-cnn-b512-e20 --recipe fer-cnn --epochs 20 --batch 512 --lr 0.2 --threads 16
grep -h "66%\|seconds_to\|reached" $L/fer-cnn-b*.log | head
echo "timed runs done at $(( $(date +%s) - start )) s"
# side by side: accuracy only
LIMIT=$(( 545 - ($(date +%s) - start) - 45 ))
train resnet-strong-e120 --recipe resnet-fer --epochs 120 --threads 2 &
train resnet-basic-e120 --recipe resnet-fer --epochs 120 --augment crop=4,flip --threads 2 &
train resnet-cutmix-e120 --recipe resnet-fer --epochs 120 --augment $strong,cutmix=1 --threads 2 &
train fer-cnn-e120 --recipe fer-cnn --epochs 120 --threads 2 &
train fer-cnn-cutmix-e120 --recipe fer-cnn --epochs 120 --augment crop=4,flip,cutmix=1 --threads 2 &
wait
mkdir -p /tmp/models
for run in $R/*; do
  name=$(basename $run); [ -d $run/model ] || continue
  for tta in none flip tencrop; do
    extra=(); [ $tta != none ] && extra=(--tta $tta)
    "$bin/cnnstudio-train" evaluate $run --split validation --backend cudnn "${extra[@]}" > $L/$name.eval-$tta.log 2>&1
  done
  cp $run/config.json $L/$name.config.json; gzip -c $run/events.jsonl > $L/$name.events.jsonl.gz 2>/dev/null
  grep -h "^accuracy" $L/$name.eval-*.log | sed "s/^/$name /"
  case $name in resnet*|fer-cnn-e120*) "$bin/cnnstudio-train" export $run --model-folder /tmp/models/$name --weights-dtype bf16 >> $L/$name.card.log 2>&1;; esac
done
echo "all done at $(( $(date +%s) - start )) s"
cd /tmp && tar czf $OUT/fer-logs.tar.gz -C $OUT logs && rm -rf $OUT/logs && tar cf $OUT/fer-models.tar -C /tmp models && ls -la $OUT

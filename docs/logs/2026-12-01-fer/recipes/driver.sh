#!/usr/bin/env bash
# Session-only driver (not part of the project; the project's own is tools/device-session.sh fer):
# FER2013 recipes on one H200, the timed ones alone, the rest side by side.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.ferpack/lib:$PWD/.ferpack/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.ferpack/bin
for f in .ferpack/lib/*.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" $f; done
ldd $bin/cnnstudio-train | grep "not found"
python3 .ferdata/decode.py .ferdata/fer.med.xz /tmp/fer.csv && sha256sum /tmp/fer.csv
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader
L=/tmp/logs; R=/tmp/runs; mkdir -p $L $R
strong="crop=4,flip,rotate=10,scale=0.9-1.1,erase=0.25"
train() { name=$1; shift; local start=$(date +%s.%N)
  echo "cnnstudio-train $* --dataset fer2013:fer2013.csv --run-dir runs/$name" > $L/$name.cmd
  timeout ${LIMIT:-560} "$bin/cnnstudio-train" "$@" --dataset fer2013:/tmp/fer.csv --run-dir $R/$name > $L/$name.log 2>&1
  echo "$name rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $start}") s" | tee -a $L/$name.log; }
# alone on the GPU: the figures with a time in them
train fer-cnn --recipe fer-cnn --threads 16
train fer-cnn-30ep --recipe fer-cnn --epochs 30 --threads 16
# side by side (accuracy only; their times are shared)
LIMIT=480
train fer-cnn-strong --recipe fer-cnn --augment $strong --threads 2 &
train vgg-wide --recipe vgg-wide --threads 2 &
train vgg-wide-strong --recipe vgg-wide --augment $strong --threads 2 &
train resnet-fer --recipe resnet-fer --threads 2 &
train resnet-fer-strong --recipe resnet-fer --augment $strong --threads 2 &
train mini-xception --recipe mini-xception --threads 2 &
train mini-xception-strong --recipe mini-xception --augment $strong --threads 2 &
wait
mkdir -p /tmp/models
for run in $R/*; do
  name=$(basename $run); [ -d $run/model ] || continue
  for tta in none flip tencrop; do
    extra=(); [ $tta != none ] && extra=(--tta $tta)
    "$bin/cnnstudio-train" evaluate $run --split validation --backend cudnn "${extra[@]}" > $L/$name.eval-$tta.log 2>&1
  done
  acc=$(sed -n 's/^accuracy \([0-9.]*\)%.*/\1/p' $L/$name.eval-flip.log | head -1)
  "$bin/cnnstudio-train" card $run ${acc:+--tta-accuracy $(python3 -c "print($acc / 100)")} >> $L/$name.card.log 2>&1
  "$bin/cnnstudio-train" export $run --model-folder /tmp/models/$name --weights-dtype bf16 >> $L/$name.card.log 2>&1
  cp $run/config.json $L/$name.config.json; cp $run/events.jsonl $L/$name.events.jsonl 2>/dev/null
  cp $run/model/MODEL_CARD.md $L/$name.MODEL_CARD.md 2>/dev/null
  grep -h "^accuracy" $L/$name.eval-*.log | sed "s/^/$name /"
done
cd /tmp && tar czf $OUT/logs.tar.gz logs && cd /tmp/models && for group in fer-cnn vgg-wide resnet-fer mini-xception; do tar cf $OUT/models-$group.tar $group*; done; ls -la $OUT

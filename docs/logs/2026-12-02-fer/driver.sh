#!/usr/bin/env bash
# Session-only driver (the project's own is tools/device-session.sh fer): FER2013 on one H200,
# over up to three device calls that each stop before the call's limit.
#   driver.sh sweep            the 10-second target: short fer-cnn runs, each alone on the GPU
#   driver.sh long END         start or resume the long runs side by side (accuracy only) until
#                              END (seconds since the epoch), then evaluate the finished ones
# The data travels as MED-predicted residuals (../2026-12-01-fer/long-runs/codec.py) in
# .device/ferdata and is decoded once to build-fer/ (ignored, so it stays while the machine is warm,
# as do the runs: a long run stopped by SIGINT checkpoints and resumes in the next call).
set -uo pipefail
start=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
[ -x "$bin/cnnstudio-train" ] || { echo "no .device pack here: the machine was not kept warm"; exit 3; }
for xz in .device/lib/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
work=$PWD/build-fer; mkdir -p $work/runs
csv=$work/fer.csv
if [ ! -s $csv ]; then
  python3 .device/ferdata/codec.py decode $csv .device/ferdata/fer.0.raw.xz .device/ferdata/fer.1.raw.xz
fi
sha256sum $csv   # e288d5079e610dc7770b4a6e2c606dcabc313af9dd564c885f36f1dd553ae101 is the CSV's
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader
L=$OUT/logs; mkdir -p $L
strong="crop=4,flip,rotate=10,scale=0.9-1.1,erase=0.25"
heavy="crop=6,flip,rotate=15,scale=0.8-1.2,erase=0.5"

# train NAME LIMIT_S ARGS...: a new run, or the resumption of a stopped one, stopped by SIGINT at LIMIT_S
train() { local name=$1 limit=$2; shift 2; local t0=$(date +%s.%N) run=$work/runs/$name
  [ -e $run.done ] && return 0
  if [ -e $run/config.json ]; then
    echo "(resumed) cnnstudio-train --resume runs/$name --threads 2" >> $work/runs/$name.cmd
    timeout -s INT -k 30 $limit "$bin/cnnstudio-train" --resume $run --threads 2 >> $work/runs/$name.log 2>&1
  else
    echo "cnnstudio-train $* --dataset fer2013:fer2013.csv --run-dir runs/$name" > $work/runs/$name.cmd
    timeout -s INT -k 30 $limit "$bin/cnnstudio-train" "$@" --dataset fer2013:$csv --run-dir $run > $work/runs/$name.log 2>&1
  fi
  local rc=$?
  echo "$name rc=$rc wall=$(awk "BEGIN{print $(date +%s.%N) - $t0}") s" | tee -a $work/runs/$name.log
  [ $rc = 0 ] && touch $run.done
  cp $work/runs/$name.cmd $work/runs/$name.log $L/
}

# evaluate NAME: PublicTest without TTA, with flip and with ten-crop; config and events
evaluate() { local name=$1 run=$work/runs/$1
  [ -e $run.done ] || return 0
  for tta in none flip tencrop; do
    extra=(); [ $tta != none ] && extra=(--tta $tta)
    "$bin/cnnstudio-train" evaluate $run --split validation --backend cudnn "${extra[@]}" > $L/$name.eval-$tta.log 2>&1
  done
  cp $run/config.json $L/$name.config.json; gzip -c $run/events.jsonl > $L/$name.events.jsonl.gz
  grep -h "^accuracy" $L/$name.eval-*.log | sed "s/^/$name /"
}

case ${1:?sweep or long} in
  sweep)
    t() { train "$@"; grep -h "first reached\|best validation" $work/runs/$1.log; }
    t r-e20      60 --recipe fer-cnn --epochs 20 --threads 16
    t r-e22      60 --recipe fer-cnn --epochs 22 --threads 16
    t r-e20-flip 60 --recipe fer-cnn --epochs 20 --augment flip --threads 16
    t r-e20-ls0  60 --recipe fer-cnn --epochs 20 --label-smoothing 0 --threads 16
    t r-e20-lr02 60 --recipe fer-cnn --epochs 20 --lr 0.02 --threads 16
    t r-e20-adamw 60 --recipe fer-cnn --epochs 20 --optimizer adamw --lr 0.002 --weight-decay 0.05 --threads 16
    t b256-e24-lr05 60 --recipe fer-cnn --epochs 24 --batch 256 --lr 0.05 --threads 16
    t b256-e24-lr03 60 --recipe fer-cnn --epochs 24 --batch 256 --lr 0.03 --threads 16
    t b64-e16    60 --recipe fer-cnn --epochs 16 --batch 64 --lr 0.025 --threads 16
    t r-e24      60 --recipe fer-cnn --epochs 24 --threads 16
    for name in $(ls $work/runs | sed -n 's/\.done$//p'); do
      cp $work/runs/$name/config.json $L/$name.config.json; gzip -c $work/runs/$name/events.jsonl > $L/$name.events.jsonl.gz
    done ;;
  sweep2)   # AdamW, the first sweep's only run to reach 66%, around its 20 epochs
    t() { train "$@"; grep -h "first reached\|best validation" $work/runs/$1.log; }
    adamw="--recipe fer-cnn --optimizer adamw --weight-decay 0.05 --threads 16"
    t aw-e18       60 $adamw --epochs 18 --lr 0.002
    t aw-e16       60 $adamw --epochs 16 --lr 0.002
    t aw-e18-lr3   60 $adamw --epochs 18 --lr 0.003
    t aw-e18-b256  60 $adamw --epochs 18 --lr 0.003 --batch 256
    t aw-e20-s7    60 $adamw --epochs 20 --lr 0.002 --seed 7
    t aw-e16-flip  60 $adamw --epochs 16 --lr 0.002 --augment flip
    for name in $(ls $work/runs | sed -n 's/\.done$//p'); do
      cp $work/runs/$name/config.json $L/$name.config.json; gzip -c $work/runs/$name/events.jsonl > $L/$name.events.jsonl.gz
    done ;;
  models)   # the finished runs worth keeping: bf16 model folders, cards (before anything else)
    for name in resnet4-e200 resnet-heavy-e200 resnet-e200 fer-cnn-cutmix-e240-s7; do
      run=$work/runs/$name
      "$bin/cnnstudio-train" export $run --model-folder $OUT/models/$name --weights-dtype bf16 > $L/$name.export.log 2>&1
      "$bin/cnnstudio-train" card $run > $L/$name.card.log 2>&1; cp $run/MODEL_CARD.md $L/$name.MODEL_CARD.md 2>/dev/null
    done; ls -la $OUT/models/* ;;
  repeat)   # the 10-second recipe again with two other seeds, alone on the GPU
    for seed in 7 1; do
      train aw-e16-flip-s$seed 60 --recipe fer-cnn --optimizer adamw --weight-decay 0.05 --threads 16 --epochs 16 --lr 0.002 --augment flip --seed $seed
      grep -h "first reached\|best validation" $work/runs/aw-e16-flip-s$seed.log
      cp $work/runs/aw-e16-flip-s$seed/config.json $L/aw-e16-flip-s$seed.config.json
    done ;;
  long2)
    left=$(( ${2:?end, in seconds since the epoch} - $(date +%s) - 25 ))
    train resnet4-heavy-e200 $left --recipe resnet-fer --spec $here/resnet4-fer.json --epochs 200 --augment $heavy --threads 4 &
    train resnet4-e200-s7    $left --recipe resnet-fer --spec $here/resnet4-fer.json --epochs 200 --seed 7 --threads 4 &
    wait
    for name in resnet4-heavy-e200 resnet4-e200-s7; do evaluate $name & done; wait ;;
  long)
    left=$(( ${2:?end, in seconds since the epoch} - $(date +%s) - 40 ))   # 40 s to evaluate what finished
    train resnet-e200        $left --recipe resnet-fer --epochs 200 --threads 2 &
    train resnet-heavy-e200  $left --recipe resnet-fer --epochs 200 --augment $heavy --threads 2 &
    train resnet4-e200       $left --recipe resnet-fer --spec $here/resnet4-fer.json --epochs 200 --threads 2 &
    train fer-cnn-cutmix-e200 $left --recipe fer-cnn --epochs 200 --augment crop=4,flip,cutmix=1 --threads 2 &
    train fer-cnn-strongcutmix-e200 $left --recipe fer-cnn --epochs 200 --augment $strong,cutmix=1 --threads 2 &
    train fer-cnn-cutmix-e240-s7 $left --recipe fer-cnn --epochs 240 --augment crop=4,flip,cutmix=1 --seed 7 --threads 2 &
    wait
    for name in $(ls $work/runs | sed -n 's/\.done$//p'); do
      case $name in resnet*|fer-cnn-*) evaluate $name & ;; esac
    done; wait
    tail -n 3 $work/runs/*.log ;;
esac
echo "driver $1 done at $(( $(date +%s) - start )) s"

#!/usr/bin/env bash
# Issue #12 on one H200 (2026-12-03): more diverse teachers, then students of their ensemble.
# The ensembles of every model we had stopped at 72.83% PublicTest with flip TTA, all of them
# residual nets with global average pooling (docs/experiments/fer2013.md); VGG-style networks
# with a dense head over the last 3x3 map keep where on the face a feature is, and vgg-fer learnt
# 70.49% in 60 epochs even before the stall fix (../2026-12-01-fer/before-fix/vgg-fer.log).
# Runs side by side (accuracy only), over calls of one warm machine, stopped by SIGINT with a
# checkpoint at a call's end and resumed in the next:
#   driver.sh stash           keep the carried data parts (build-ferparts*/) and the three teachers
#                             of the shipped model (build-ferteachers/, tools/fer-teachers.sh) in /tmp
#   driver.sh run END         decode the data; train (or resume) the four VGG runs until END (seconds
#                             since the epoch); once they are done, evaluate them and their ensembles
#                             and train (or resume) the two students of V1, V2, A and D until END
#   driver.sh collect         export the most accurate student with bf16 weights, in pieces
# V1, V2 = vgg-fer runs below; A = fer-resnet4-e200 (70.94%), B = fer-resnet-e120, C = fer-resnet-e80
# (tools/fer-teachers.sh), D = resources/models/fer-resnet (72.11%). Logs in $OUT/logs.tgz.
set -uo pipefail
stash=/tmp/ferstash work=/tmp/ferwork
if [ "${1:?stash, run or collect}" = stash ]; then
  mkdir -p $stash && cp -r build-ferparts*/*.xz build-ferteachers/* $stash/ 2>/dev/null; ls $stash; exit
fi
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin here=$PWD/docs/logs/2026-12-03-teachers
[ -x $bin/cnnstudio-train ] || { echo "no .device pack here: the machine was not kept warm"; exit 3; }
for xz in .device/lib/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
mkdir -p $work/runs $work/logs; L=$work/logs csv=$work/fer.csv
[ -s $csv ] || python3 docs/logs/2026-12-01-fer/long-runs/codec.py decode $csv $stash/fer.*.raw.xz
sha256sum $csv | sed "s|$work/||"   # e288d5079e610dc7770b4a6e2c606dcabc313af9dd564c885f36f1dd553ae101 is the CSV's
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader
R=$work/runs A=$stash/fer-resnet4-e200 B=$stash/fer-resnet-e120 C=$stash/fer-resnet-e80 D=$PWD/resources/models/fer-resnet
tidy() { sed "s|$PWD/||g; s|$work/||g; s|$stash/|teachers/|g"; }

# train NAME LIMIT_S ARGS...: a new run, or the resumption of a stopped one, stopped by SIGINT at LIMIT_S
train() { local name=$1 limit=$2; shift 2; local t0=$(date +%s.%N) run=$R/$name
  [ -e $run.done ] && return 0
  [ $limit -gt 60 ] || { echo "$name: no time left in this call"; return 0; }
  if [ -e $run/config.json ]; then
    echo "(resumed) cnnstudio-train --resume runs/$name --threads 4" >> $L/$name.cmd
    timeout -s INT -k 30 $limit $bin/cnnstudio-train --resume $run --threads 4 >> $L/$name.log 2>&1
  else
    echo "cnnstudio-train $* --dataset fer2013:fer2013.csv --run-dir runs/$name" | tidy > $L/$name.cmd
    timeout -s INT -k 30 $limit $bin/cnnstudio-train "$@" --threads 4 --dataset fer2013:$csv --run-dir $run > $L/$name.log 2>&1
  fi
  local rc=$?
  echo "$name rc=$rc wall=$(awk "BEGIN{print $(date +%s.%N) - $t0}") s" | tee -a $L/$name.log
  [ $rc = 0 ] && touch $run.done
}

# evaluate NAME MODEL...: PublicTest accuracy of one model or an ensemble, without TTA, with flip and ten-crop
evaluate() { local name=$1; shift
  for tta in none flip tencrop; do
    $bin/cnnstudio-train evaluate "$@" --dataset fer2013:$csv --split validation --backend cudnn --tta $tta 2>&1 | tidy > $L/$name.eval-$tta.log
  done
  grep -h "^accuracy" $L/$name.eval-*.log | tr '\n' ' ' | sed "s/^/$name: /"; echo
}

finish() { for name in "$@"; do
    [ -e $R/$name.done ] || { [ -e $L/$name.log ] && tail -n 2 $L/$name.log; continue; }
    tidy < $R/$name/config.json > $L/$name.config.json; gzip -c $R/$name/events.jsonl > $L/$name.events.jsonl.gz
  done
  tar -C $work -czf $OUT/logs.tgz logs
}

small=$here/vgg-fer-small.json
teachers="V1-vgg-strong V2-vgg-cutmix S1-small-strong S2-small-cutmix" students="K1-resnet4-student K2-small-student"
all_done() { for name in "$@"; do [ -e $R/$name.done ] || return 1; done; }
case $1 in
  run)
    end=${2:?END}
    vgg="--recipe resnet4-fer --epochs 100"   # the residual recipe (SGD, one-cycle to 0.05, strong augmentation)
    train V1-vgg-strong $(( end - $(date +%s) )) $vgg --preset vgg-fer &
    train V2-vgg-cutmix $(( end - $(date +%s) )) $vgg --preset vgg-fer --augment crop=4,flip,cutmix=1 &
    train S1-small-strong $(( end - $(date +%s) )) $vgg --spec $small &
    train S2-small-cutmix $(( end - $(date +%s) )) $vgg --spec $small --augment crop=4,flip,cutmix=1 &
    wait
    all_done $teachers || { finish $teachers; exit; }
    if [ ! -e $work/teachers.evaluated ]; then
      for name in $teachers; do evaluate $name $R/$name & done
      evaluate ens-V1V2 $R/V1-vgg-strong $R/V2-vgg-cutmix &
      evaluate ens-V1V2AD $R/V1-vgg-strong $R/V2-vgg-cutmix $A $D &
      evaluate ens-ABCD $A $B $C $D &
      evaluate ens-all $R/V1-vgg-strong $R/V2-vgg-cutmix $R/S1-small-strong $R/S2-small-cutmix $A $B $C $D &
      wait; touch $work/teachers.evaluated
    fi
    teach="--recipe resnet4-fer-distilled --epochs 150 --teacher $R/V1-vgg-strong --teacher $R/V2-vgg-cutmix --teacher $A --teacher $D"
    train K1-resnet4-student $(( end - $(date +%s) )) $teach &
    train K2-small-student $(( end - $(date +%s) )) $teach --spec $small &
    wait
    for name in $students; do [ -e $R/$name.done ] && [ ! -e $L/$name.eval-tencrop.log ] && evaluate $name $R/$name & done; wait
    finish $teachers $students ;;
  collect)
    best=$(grep -H "^accuracy 0" $L/K*.eval-none.log | sort -t' ' -k2 -r | head -n 1 | sed "s|.*/||; s|.eval-none.log.*||")
    echo "best: $best"
    $bin/cnnstudio-train export $R/$best --model-folder $work/$best-model --weights-dtype bf16
    tar -C $work -cJf - $best-model | split -b 2900k - $OUT/$best-model.tar.xz.
    ls -la $OUT ;;
  *) echo "unknown step $1"; exit 2 ;;
esac

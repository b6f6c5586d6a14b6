#!/usr/bin/env bash
# Session-only driver (the project's own is tools/device-session.sh): a second round of
# distillation on FER2013 on one H200 (issue #12), over device calls that each stop before the
# call's limit; the machine is kept warm between them, so the runs and the data stay in build-fer/.
#   driver.sh ready            the carried pack unpacked, the GPU named (calls that only carry files)
#   driver.sh distil END       start or resume the distilled runs side by side until END
#                              (seconds since the epoch), then evaluate the finished ones
#   driver.sh collect          the logs as one archive, and the finished run with the best PublicTest
#                              accuracy exported with bf16 weights, in pieces (a call returns 8 files)
# Teachers: A = fer-resnet4-e200 and B = fer-resnet-e120 (tools/fer-teachers.sh .device/teachers;
# 70.94% and 70.77% PublicTest) and D = resources/models/fer-resnet, the student of the first round
# (72.11%). Data as in ../2026-12-02-fer/.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
[ -x "$bin/cnnstudio-train" ] || { echo "no .device pack here: the machine was not kept warm"; exit 3; }
for xz in .device/lib/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
work=$PWD/build-fer; mkdir -p $work/runs
csv=$work/fer.csv
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader
L=$OUT/logs; mkdir -p $L
decode() {
  [ -s $csv ] || python3 .device/ferdata/codec.py decode $csv .device/ferdata/fer.0.raw.xz .device/ferdata/fer.1.raw.xz
  sha256sum $csv | sed "s|$PWD/||"  # e288d5079e610dc7770b4a6e2c606dcabc313af9dd564c885f36f1dd553ae101 is the CSV's
}
A=$PWD/.device/teachers/fer-resnet4-e200 B=$PWD/.device/teachers/fer-resnet-e120 D=$PWD/resources/models/fer-resnet

# train NAME LIMIT_S ARGS...: a new run, or the resumption of a stopped one, stopped by SIGINT at LIMIT_S
train() { local name=$1 limit=$2; shift 2; local t0=$(date +%s.%N) run=$work/runs/$name
  [ -e $run.done ] && return 0
  if [ -e $run/config.json ]; then
    echo "(resumed) cnnstudio-train --resume runs/$name --threads 4" >> $work/runs/$name.cmd
    timeout -s INT -k 30 $limit "$bin/cnnstudio-train" --resume $run --threads 4 >> $work/runs/$name.log 2>&1
  else
    echo "cnnstudio-train $* --dataset fer2013:fer2013.csv --run-dir runs/$name" | sed "s|$PWD/||g" > $work/runs/$name.cmd
    timeout -s INT -k 30 $limit "$bin/cnnstudio-train" "$@" --dataset fer2013:$csv --run-dir $run > $work/runs/$name.log 2>&1
  fi
  local rc=$?
  echo "$name rc=$rc wall=$(awk "BEGIN{print $(date +%s.%N) - $t0}") s" | tee -a $work/runs/$name.log
  [ $rc = 0 ] && touch $run.done
  sed -i "s|$PWD/||g" $work/runs/$name.log
  cp $work/runs/$name.cmd $work/runs/$name.log $L/
}

# evaluate NAME: PublicTest without TTA, with flip and with ten-crop; the run's config and events
evaluate() { local name=$1 target=$work/runs/$1
  [ -e $target.done ] || return 0
  for tta in none flip tencrop; do
    extra=(); [ $tta != none ] && extra=(--tta $tta)
    "$bin/cnnstudio-train" evaluate $target --split validation --backend cudnn "${extra[@]}" 2>&1 | sed "s|$PWD/||g" > $L/$name.eval-$tta.log
  done
  sed "s|$PWD/||g" $target/config.json > $L/$name.config.json; gzip -c $target/events.jsonl > $L/$name.events.jsonl.gz
  grep -h "^accuracy" $L/$name.eval-*.log | sed "s/^/$name /"
}

runs="r2-abd-w9-t3 r2-abd-w9-t3-s7 r2-abd-w10-t4"
case ${1:?ready or distil} in
  ready) ls .device .device/teachers ;;
  distil)
    decode
    left=$(( ${2:?END} - $(date +%s) ))
    r4="--recipe resnet4-fer-distilled --threads 4 --teacher $A --teacher $B --teacher $D"
    train r2-abd-w9-t3 $left $r4 &
    train r2-abd-w9-t3-s7 $left $r4 --seed 7 &
    train r2-abd-w10-t4 $left $r4 --distill-weight 1 --distill-temperature 4 &
    wait
    for name in $runs; do evaluate $name & done; wait
    for name in $runs; do [ -e $work/runs/$name.done ] || tail -n 2 $work/runs/$name.log; done ;;
  collect)
    best=$(grep -H "^accuracy 0" $L/*.eval-none.log | sort -t' ' -k2 -r | head -n 1 | sed "s|.*/||; s|.eval-none.log.*||")
    echo "best: $best"
    "$bin/cnnstudio-train" export $work/runs/$best --model-folder $work/$best-model --weights-dtype bf16
    tar -C $work -cJf - $best-model | split -b 2900k - $OUT/$best-model.tar.xz.
    tar -C $OUT -czf $OUT/logs.tar.gz logs && rm -r $L
    ls -la $OUT ;;
esac

#!/usr/bin/env bash
# Session-only driver (the project's own is tools/device-session.sh): distillation on FER2013 on
# one H200 (issue #12), over device calls that each stop before the call's limit.
#   driver.sh bench            tools/device-session.sh tests bench, alone on the GPU first
#   driver.sh distil END       start or resume the distilled runs side by side until END
#                              (seconds since the epoch), then evaluate the finished ones
#   driver.sh teachers         the teachers evaluated alone (none, flip, ten-crop)
# Teachers: A = resources/models/fer-resnet (resnet4-fer, 200 epochs, 70.94%), B and C = the
# fer-resnet models it replaced (resnet-fer, 120 epochs, 70.77%, and 80 epochs, 70.27%; git
# ad46ba0^ and 55e0f23^), carried in .device/teachers. Data as in ../2026-12-02-fer/.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
[ -x "$bin/cnnstudio-train" ] || { echo "no .device pack here: the machine was not kept warm"; exit 3; }
for xz in .device/lib/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
work=$PWD/build-fer; mkdir -p $work/runs
csv=$work/fer.csv
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader
L=$OUT/logs; mkdir -p $L
# The data, for the steps that need it (the first call carries the build, the next two the data).
decode() {
  [ -s $csv ] || python3 .device/ferdata/codec.py decode $csv .device/ferdata/fer.0.raw.xz .device/ferdata/fer.1.raw.xz
  sha256sum $csv   # e288d5079e610dc7770b4a6e2c606dcabc313af9dd564c885f36f1dd553ae101 is the CSV's
}
A=$PWD/resources/models/fer-resnet B=$PWD/.device/teachers/r3-120 C=$PWD/.device/teachers/r3-80

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

# evaluate NAME|FOLDER [LABEL]: PublicTest without TTA, with flip and with ten-crop
evaluate() { local target=$1 name=${2:-$1}
  case $target in /*) ;; *) [ -e $work/runs/$target.done ] || return 0; target=$work/runs/$target ;; esac
  for tta in none flip tencrop; do
    extra=(); [ $tta != none ] && extra=(--tta $tta)
    "$bin/cnnstudio-train" evaluate $target --split validation --backend cudnn "${extra[@]}" 2>&1 | sed "s|$PWD/||g" > $L/$name.eval-$tta.log
  done
  if [ -e $target/config.json ]; then
    sed "s|$PWD/||g" $target/config.json > $L/$name.config.json; gzip -c $target/events.jsonl > $L/$name.events.jsonl.gz
  fi
  grep -h "^accuracy" $L/$name.eval-*.log | sed "s/^/$name /"
}

case ${1:?bench, distil or teachers} in
  bench) OUT=$OUT/device-session bash tools/device-session.sh tests bench ;;
  teachers) decode; evaluate $A teacher-A; evaluate $B teacher-B; evaluate $C teacher-C ;;
  distil)
    decode
    left=$(( ${2:?END} - $(date +%s) ))
    r4="--recipe resnet4-fer --threads 4"
    train d-abc-w7-t2 $left $r4 --teacher $A --teacher $B --teacher $C --distill-weight 0.7 --distill-temperature 2 &
    train d-abc-w5-t1 $left $r4 --teacher $A --teacher $B --teacher $C --distill-weight 0.5 --distill-temperature 1 &
    train d-abc-w9-t3 $left $r4 --teacher $A --teacher $B --teacher $C --distill-weight 0.9 --distill-temperature 3 &
    train d-mx-abc-w7-t2 $left --recipe mini-xception --threads 4 --teacher $A --teacher $B --teacher $C \
      --distill-weight 0.7 --distill-temperature 2 &
    wait
    for name in d-abc-w7-t2 d-abc-w5-t1 d-abc-w9-t3 d-mx-abc-w7-t2; do evaluate $name & done; wait ;;
esac

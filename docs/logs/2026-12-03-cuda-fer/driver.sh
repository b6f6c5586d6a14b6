#!/usr/bin/env bash
# Issue #17's "no accuracy regression" for the cuda backend's new bf16 path (2026-12-03, one H200):
# the fer-cnn recipe trained on FER2013 with our own kernels in bf16 and in fp32 beside cudnn bf16
# (the recipe as it ships), each alone on the GPU, then each final model evaluated on PublicTest
# the same way (cudnn, without and with flip TTA).
#   driver.sh stash   keep the carried data part(s) of build-ferparts*/ in /tmp/ferparts: the data
#                     (MED-predicted residuals, ../2026-12-01-fer/long-runs/codec.py) and the working
#                     tree outgrow one call's 64 MiB, so the parts come over several calls of a warm machine
#   driver.sh train [seeds]  decode the parts to Kaggle's CSV (checksum printed), train, evaluate; logs in $OUT
set -uo pipefail
case ${1:?stash or train} in
  stash) mkdir -p /tmp/ferparts && cp build-ferparts*/*.xz /tmp/ferparts/ && ls -l /tmp/ferparts; exit ;;
  train) ;;
  *) echo "unknown step $1"; exit 2 ;;
esac
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
for xz in .device/lib/*.xz .device/lib/cnnstudio/plugins/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
csv=/tmp/fer.csv
[ -s $csv ] || python3 docs/logs/2026-12-01-fer/long-runs/codec.py decode $csv /tmp/ferparts/fer.*.raw.xz
sha256sum $csv   # e288d5079e610dc7770b4a6e2c606dcabc313af9dd564c885f36f1dd553ae101 is the CSV's
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
logs=$(mktemp -d) runs=$(mktemp -d)
train() { local name=$1; shift; local t0=$(date +%s.%N)
  echo "cnnstudio-train --recipe fer-cnn $* --dataset fer2013:fer2013.csv --run-dir runs/$name" > $logs/$name.cmd
  timeout -s INT 240 "$bin/cnnstudio-train" --recipe fer-cnn "$@" --threads 16 --dataset fer2013:$csv \
    --run-dir $runs/$name > $logs/$name.log 2>&1
  echo "$name rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $t0}") s" | tee -a $logs/$name.log
  grep -h "first reached\|best validation" $logs/$name.log
  for tta in none flip; do
    "$bin/cnnstudio-train" evaluate $runs/$name --split validation --backend cudnn --tta $tta > $logs/$name.eval-$tta.log 2>&1
    grep -h "^accuracy" $logs/$name.eval-$tta.log | sed "s/^/$name $tta: /"
  done
  cp $runs/$name/config.json $logs/$name.config.json; gzip -c $runs/$name/events.jsonl > $logs/$name.events.jsonl.gz
}
if [ "${2:-}" = seeds ]; then   # a second call: the bf16 runs again with two more seeds each
  for seed in 7 1; do
    train cudnn-bf16-s$seed --seed $seed
    train cuda-bf16-s$seed --backend cuda --precision bf16 --seed $seed
  done
else
  train cudnn-bf16
  train cuda-bf16 --backend cuda --precision bf16
  train cuda-fp32 --backend cuda --precision fp32
fi
tar -C $logs -czf $OUT/logs.tgz .

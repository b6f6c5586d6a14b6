#!/usr/bin/env bash
# Issue #17's "no accuracy regression" for the pooled batch-norm chain (2026-12-03, one H200, the
# build of fbcf6ac): the fer-cnn recipe trained on FER2013 on cudnn bf16 (the recipe as it ships)
# and cuda bf16, seeds 42, 7 and 1 each, every run alone on the GPU, then each final model
# evaluated on PublicTest the same way (cudnn, without and with flip TTA); the runs before the
# chain are ../2026-12-03-cuda-fer/.
#   driver.sh stash   keep the carried data part(s) of build-ferparts*/ in /tmp/ferparts: the data
#                     (MED-predicted residuals, ../2026-12-01-fer/long-runs/codec.py) and the working
#                     tree outgrow one call's 64 MiB, so the parts come over two calls of a warm machine
#   driver.sh train   decode the parts to Kaggle's CSV (checksum printed), train, evaluate; logs in $OUT
set -uo pipefail
case ${1:?stash or train} in
  stash) mkdir -p /tmp/ferparts && cp build-ferparts*/*.xz /tmp/ferparts/ && ls -l /tmp/ferparts; exit ;;
  train) ;;
  *) echo "unknown step $1"; exit 2 ;;
esac
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
for packed in .device/lib/*.xz; do
  [ -e "${packed%.xz}" ] || python3 -c 'import lzma, sys; open(sys.argv[1][:-3], "wb").write(lzma.open(sys.argv[1]).read())' "$packed"
done
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
  tar -C $logs -czf $OUT/logs.tgz .
}
for seed in ${FER_SEEDS:-42 7 1}; do  # FER_SEEDS: fewer runs where device time is short
  train cudnn-bf16-s$seed --seed $seed
  train cuda-bf16-s$seed --backend cuda --precision bf16 --seed $seed
done

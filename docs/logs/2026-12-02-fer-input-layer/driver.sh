#!/usr/bin/env bash
# Session-only driver: does fer-cnn still learn FER2013 as well with its input layer on our direct
# kernels (24f0dc6, a160b1d) as on cuDNN's padded convolution (d5ab336, the build before)?
# Issue #17's "a FER2013 run reaches the same PublicTest accuracy as before".
# Needs .device (tools/pack-device.sh of a160b1d's kernels, .device/before/lib the build of d5ab336,
# .device/ferdata/fer.2.raw.xz) and the first two parts of the data in /tmp/ferparts, left there
# by the call before (the data, MED-coded by ../2026-12-01-fer/long-runs/codec.py, is larger
# than one call's carry). Runs alone on the GPU, one after another, the two builds interleaved:
#   fer-cnn-fast (18 epochs) with seeds 42, 7 and 1, then fer-cnn (60 epochs) with seed 42.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.device/bin
for xz in .device/lib/*.xz; do [ -e "${xz%.xz}" ] || xz -dc "$xz" > "${xz%.xz}"; done
work=$PWD/build-fer; mkdir -p $work/runs; csv=$work/fer.csv
[ -s $csv ] || python3 docs/logs/2026-12-01-fer/long-runs/codec.py decode $csv \
  /tmp/ferparts/fer.0.raw.xz /tmp/ferparts/fer.1.raw.xz .device/ferdata/fer.2.raw.xz
sha256sum $csv   # e288d5079e610dc7770b4a6e2c606dcabc313af9dd564c885f36f1dd553ae101 is the CSV's
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader
L=$OUT/logs; mkdir -p $L

# train BUILD NAME ARGS...: BUILD is "current" or "before" (the earlier libraries first on the path)
train() { local build=$1 name=$2-$1; shift 2; local path=$LD_LIBRARY_PATH
  [ $build = before ] && path=$PWD/.device/before/lib:$path
  echo "cnnstudio-train $* --dataset fer2013:fer2013.csv --run-dir runs/$name   # build: $build" > $L/$name.cmd
  LD_LIBRARY_PATH=$path "$bin/cnnstudio-train" "$@" --dataset fer2013:$csv --run-dir $work/runs/$name > $L/$name.log 2>&1
  echo "$name rc=$?"; grep -h "first reached\|best validation" $L/$name.log
  gzip -c $work/runs/$name/events.jsonl > $L/$name.events.jsonl.gz; cp $work/runs/$name/config.json $L/$name.config.json
}
for seed in 42 7 1; do
  for build in current before; do train $build fast-s$seed --recipe fer-cnn-fast --seed $seed --threads 16; done
done
for build in current before; do train $build fercnn-s42 --recipe fer-cnn --threads 16; done

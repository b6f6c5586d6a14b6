#!/usr/bin/env bash
# The FER2013 models of the distillation runs evaluated alone and as ensembles on PublicTest
# (`cnnstudio-train evaluate MODEL... --split validation`, each image's probabilities averaged over
# the models and the views of --tta), on the CPU of the 2-core development machine.
#   run.sh BUILD_DIR FER2013_CSV [OUT_DIR]
# Models: A, B, C = the first round's teachers (tools/fer-teachers.sh writes them; here in
# TEACHERS, default .device/teachers), D = resources/models/fer-resnet (their student),
# M = resources/models/fer-mini-xception.
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR FER2013_CSV [OUT_DIR]} csv=${2:?usage: run.sh BUILD_DIR FER2013_CSV [OUT_DIR]}
out=${3:-$(dirname "$0")}
cd "$(dirname "$0")/../../.."
T=${TEACHERS:-.device/teachers}
A=$T/fer-resnet4-e200 B=$T/fer-resnet-e120 C=$T/fer-resnet-e80 D=resources/models/fer-resnet
M=resources/models/fer-mini-xception
for set in "D:$D" "ABC:$A $B $C" "ABD:$A $B $D" "ABCD:$A $B $C $D" "ABCDM:$A $B $C $D $M"; do
  name=${set%%:*} models=${set#*:}
  for tta in none flip; do
    log=$out/$name-$tta.log
    echo "\$ cnnstudio-train evaluate $models --dataset fer2013:$(basename "$csv") --split validation --backend cpu --batch 64 --threads 2 --tta $tta" > "$log"
    start=$(date +%s.%N)
    "$build/app/cnnstudio-train" evaluate $models --dataset "fer2013:$csv" --split validation --backend cpu --batch 64 \
      --threads 2 --tta $tta 2>&1 | sed "s|$(dirname "$csv")/||g" >> "$log"
    echo "wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $start}") s" >> "$log"
    echo "$name $tta: $(grep -m1 '^accuracy' "$log")"
  done
done

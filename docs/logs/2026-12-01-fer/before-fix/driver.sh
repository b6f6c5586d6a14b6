#!/usr/bin/env bash
# Session-only driver (not part of the project): FER2013 trainings on the lent H200.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.ferpack/lib:$PWD/.ferpack/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=$PWD/.ferpack/bin
for f in .ferpack/lib/*.xz; do python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" $f; done
ldd $bin/cnnstudio-train | grep "not found"
mkdir -p $OUT/r
python3 .ferdata/decode.py .ferdata/fer.med.xz /tmp/fer.csv && sha256sum /tmp/fer.csv
nvidia-smi -L
common="--dataset fer2013:/tmp/fer.csv --optimizer sgd --momentum 0.9 --weight-decay 5e-4 --schedule cosine --threads 16 --log-every 100"
train() { name=$1; shift; local start=$(date +%s.%N)
  "$bin/cnnstudio-train" "$@" --run-dir /tmp/r/$name > $OUT/r/$name.log 2>&1
  echo "$name rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $start}") s" | tee -a $OUT/r/$name.log; }
# the issue's recipe, alone on the GPU
train fer-bf16-issue --preset fer-cnn --backend cudnn --precision bf16 --epochs 60 --batch 128 --lr 0.05 \
  --warmup-epochs 3 --augment crop=4,flip --label-smoothing 0.1 $common
# variants side by side (timings shared, accuracy not)
train fer-fp32-issue --preset fer-cnn --backend cudnn --precision fp32 --epochs 20 --batch 128 --lr 0.05 \
  --warmup-epochs 3 --augment crop=4,flip --label-smoothing 0.1 $common &
train fer-bf16-nowarm --preset fer-cnn --backend cudnn --precision bf16 --epochs 20 --batch 128 --lr 0.05 \
  --augment crop=4,flip $common &
train fer-bf16-lowlr --preset fer-cnn --backend cudnn --precision bf16 --epochs 20 --batch 128 --lr 0.01 \
  --warmup-epochs 3 --augment crop=4,flip --label-smoothing 0.1 $common &
train mini-xception --preset mini-xception --backend cudnn --precision bf16 --epochs 60 --batch 128 --lr 0.05 \
  --warmup-epochs 3 --augment crop=4,flip --label-smoothing 0.1 $common &
train vgg-fer --preset vgg-fer --backend cudnn --precision bf16 --epochs 60 --batch 128 --lr 0.05 \
  --warmup-epochs 3 --augment crop=4,flip --label-smoothing 0.1 $common &
sleep 200; pkill -INT -f cnnstudio-train; wait
cd /tmp/r && tar czf $OUT/runs.tar.gz --exclude='checkpoint*' . && ls -la $OUT

#!/usr/bin/env bash
# The closing check of 2026-12-03's fourth stop on one H200, the build of its final code (packed by
# tools/pack-device.sh): the GPU test suites; the inference conv-BN-ReLU conformance test replayed
# at the seed that failed on cudnn bf16 in docs/logs/2026-12-03-engine-timing (since measured on
# the scale of the values before the ReLU), then 100 fresh seeds of it and of the loss tests; then
# fer-cnn at batch 256 of ours beside PyTorch 2.11 eager (bf16 channels-last, fp32) and bf16
# channels-last under torch.compile(mode="max-autotune"), ours again after PyTorch; then the step
# breakdowns (cnnstudio-bench --report) of cuda bf16 and cudnn bf16.
# Usage: OUT=DIR bash docs/logs/2026-12-03-closing/driver.sh   (everything in $OUT/logs.tgz)
set -uo pipefail
logs=$(mktemp -d)
OUT=$logs/tests bash tools/device-session.sh tests
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64
bin=.device/bin
CNNSTUDIO_TEST_SEED=923389736008214651 timeout 60 "$bin/engine_tests" \
  --gtest_filter='*ConvBatchNormReluInference*' > $logs/replay.log 2>&1
echo "replay rc=$?" | tee -a $logs/replay.log
timeout 200 "$bin/engine_tests" --gtest_filter='*ConvBatchNormReluInference*bf16*:*SoftmaxCrossEntropy*cud*' \
  --gtest_repeat=100 --gtest_brief=1 > $logs/repeat.log 2>&1
echo "repeat rc=$? failures=$(grep -c '^\[  FAILED' $logs/repeat.log)" | tee -a $logs/repeat.log
ours() {
  timeout 60 "$bin/cnnstudio-bench" --backend cudnn --mode bf16 fp32 --batch 256 --no-save-copy
  timeout 60 "$bin/cnnstudio-bench" --backend cuda --mode bf16 fp32 --batch 256 --no-save-copy
}
{ ours
  timeout 120 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl fp32
  timeout 300 python3 bench/pytorch_reference.py --batch 256 --modes bf16-cl --compile max-autotune 2> $logs/compile.txt
  ours | sed 's/^{/{"round": 2, /'
} 2> $logs/bench.err | tee $logs/ours_and_pytorch.txt | grep '^{' > $logs/side_by_side_pytorch.jsonl
cut -c1-200 $logs/side_by_side_pytorch.jsonl
tar -C $logs -czf $OUT/logs.tgz .
for config in "cuda bf16" "cudnn bf16"; do
  timeout 60 "$bin/cnnstudio-bench" --config "$config batch=256" --no-save-copy \
    --report "$logs/report_${config// /_}.json" >> $logs/report.out 2>&1
done
tar -C $logs -czf $OUT/logs.tgz .

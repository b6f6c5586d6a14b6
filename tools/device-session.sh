#!/usr/bin/env bash
# Runs on the lent GPU machine, from the repository root, with .device/ carried (see
# pack-device.sh). Each step named on the command line runs in order; logs go to $OUT.
#   tests   GPU test suites (conformance of cuda and cudnn against cpu-ref, kernels tests)
#   bench   cnnstudio-bench beside pytorch_reference.py (GPU at batch 256, CPU at 16 threads)
#   side-by-side  issue #17's comparison at batch 256: ours (cudnn and cuda, bf16 and fp32),
#           PyTorch eager (bf16 channels-last, fp32), PyTorch bf16 channels-last under
#           torch.compile(mode="max-autotune"), then ours again (lines with "round": 2); the JSON
#           lines in side_by_side_pytorch.jsonl, the whole output in ours_and_pytorch.txt
#   train   fer-cnn on Fashion-MNIST on the GPU
#   sanitize  compute-sanitizer memcheck, racecheck and synccheck over the GPU tests
#             (kernels_tests and engine_tests' GPU cases); one log per tool and suite in $OUT,
#             sanitize-summary.txt lists each one's errors and exit status. SANITIZE_TOOLS
#             picks tools (default all three), SANITIZE_TIMEOUT bounds each run (default 240 s),
#             SANITIZE_SHARDS runs each suite as that many gtest shards side by side (spread
#             over the machine's GPUs); SANITIZE_SUITES and SANITIZE_FILTER narrow the tests,
#             SANITIZE_KERNELS checks only the kernels it names (compute-sanitizer --kernel-name,
#             e.g. kns=cnnstudio: ours, not cuDNN's)
#   bench-before-after  this build beside an earlier one (.device/before: bin/cnnstudio-bench
#             and the libraries it was built with), interleaved; each folder .device/before-NAME
#             laid out as .device/before runs too, as build NAME (a series of commits measured
#             side by side), and each folder .device/variant-NAME holding a GPU plugin
#             (libcnngpu.so, packed as .xz) as build NAME: this build with that plugin (forms of
#             a kernel measured side by side). BENCH_BUILDS picks the builds and their order
#             (default: before, every before-NAME, current, every variant-NAME, those present),
#             BENCH_CONFIGS the runs ("BACKEND:MODE,MODE ...", default "cudnn:fp32,tf32,bf16
#             cuda:fp32,bf16"), BENCH_ROUNDS the rounds (default 2), BENCH_BATCH the batch (256).
#             JSON lines in bench_before_after.jsonl; then each build's rounds and means
#   conv-before-after  conv_bench (fer-cnn's convolutions, batch 256) on CONV_BACKEND (default
#             cuda) in CONV_PRECISION (default fp32) with this build's libraries and with
#             .device/before/lib's, interleaved, two rounds
#   scaling data parallel on every GPU against PyTorch DDP; BUCKET_MB="1 4" also measures ours
#           with those gradient bucket sizes (MiB)
#   scaling-ours  cnnstudio-bench on one GPU and on every GPU of this machine (mpirun, NCCL)
#   reference  bench/pytorch_reference.py at batch 256 (fp32 and bf16 channels-last)
#   sweep   the hardware comparison of issue #11: one cnnstudio-bench report of fer-cnn on cpu-ref
#           (1 thread, batch 16: plain loops), cpu 1/4/16 threads, cpu bf16 1/16 threads (AMX),
#           cuda fp32/bf16, cudnn fp32/tf32/bf16
#           and cudnn fp32/bf16 on 2 GPUs (recorded as failed on a one-GPU machine: use
#           nvidia-h200-x2); report in $OUT/sweep-fer-cnn.json, progress and table in sweep.log
#   live    cnnstudio-live --benchmark at 640x480, one face, detecting every frame and every third,
#           with and without Grad-CAM, on cudnn and cuda (and cpu at 16
#           threads for comparison); needs a build with OpenCV packed (.device/live)
#   fer     the FER2013 recipes in $RECIPES (default: every one, `cnnstudio-train recipes`) on $FER_CSV (Kaggle's fer2013.csv,
#           Training and PublicTest), each then evaluated on PublicTest with flip test-time
#           augmentation and given its MODEL_CARD.md; run folders and logs in $OUT/fer-RECIPE;
#           resnet4-fer-distilled learns from the teachers in $FER_TEACHERS (tools/fer-teachers.sh)
#   fuzz    a long fuzz campaign (the fuzz build packed by tools/pack-fuzz.sh into .device/fuzz):
#           FUZZ_TARGETS (default every target) one after another, each FUZZ_RUNS executions
#           (default 10 million) by FUZZ_JOBS libFuzzer processes (default one per core),
#           FUZZ_SECONDS (if set) bounding each; every target's log lands in $OUT/fuzz as soon
#           as it finishes
#   augment  augment_bench (Backend::augmentImages per batch of 256 fer images, every transform)
#            beside cnnstudio-bench's step at the same batch, cudnn bf16 and fp32 and cuda fp32
set -uo pipefail
# The plugin folder too: kernels_tests links the GPU plugin directly.
export LD_LIBRARY_PATH=$PWD/.device/lib:$PWD/.device/lib/cnnstudio/plugins:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
bin=$PWD/.device/bin
reference=$PWD/bench/pytorch_reference.py
tools=$PWD/tools

# The builds carried for bench-before-after, in the order they run: before, before-NAME, this
# one (current), variant-NAME.
builds_present() {
  local folder
  [ -d .device/before ] && echo before
  for folder in .device/before-*/; do [ -d "$folder" ] && basename "$folder" | sed 's/^before-//'; done
  echo current
  for folder in .device/variant-*/; do [ -d "$folder" ] && basename "$folder" | sed 's/^variant-//'; done
}

# Sets programs, libraries and plugins to build $1's: this build (current), an earlier one
# (.device/before, .device/before-NAME: its own programs and libraries) or this build with a
# variant's GPU plugin (.device/variant-NAME). Returns 1, saying so, when no such build was carried.
use_build() {
  programs=$bin libraries=$LD_LIBRARY_PATH plugins=$PWD/.device/lib/cnnstudio/plugins
  local folder=.device/before-$1
  case $1 in
    current) return 0 ;;
    before) folder=.device/before ;;
  esac
  if [ -d "$folder" ]; then
    programs=$PWD/$folder/bin libraries=$PWD/$folder/lib:$LD_LIBRARY_PATH plugins=$PWD/$folder/lib/cnnstudio/plugins
  elif [ -d ".device/variant-$1" ]; then
    plugins=$PWD/.device/variant-$1
  else
    echo "device-session: no build '$1' carried (.device/before-$1 or .device/variant-$1)" >&2
    return 1
  fi
}
# python's lzma: the GPU machine's image may lack the xz program
for packed in .device/lib/*.xz .device/lib/cnnstudio/plugins/*.xz .device/before*/lib/cnnstudio/plugins/*.xz \
              .device/variant-*/*.xz .device/fuzz/lib/*.xz; do
  [ -f "$packed" ] || continue
  [ -e "${packed%.xz}" ] || python3 -c 'import lzma, sys; open(sys.argv[1][:-3], "wb").write(lzma.open(sys.argv[1]).read())' "$packed"
done
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv,noheader
gpus=$(nvidia-smi -L | wc -l)
ldd "$bin"/* .device/lib/*.so .device/lib/cnnstudio/plugins/*.so | grep "not found" | sort -u

for step in "$@"; do
  echo "=== $step"
  case $step in
  tests)
    "$bin/kernels_tests" 2>&1 | tee "$out/kernels_tests.log" | tail -5
    "$bin/engine_tests" --gtest_filter='*cuda*:*cudnn*:Network*' 2>&1 | tee "$out/engine_tests.log" | grep -E "FAILED|PASSED|tests ran" ;;
  bench)
    { "$bin/cnnstudio-bench" --backend cudnn --mode fp32 tf32 bf16 --batch 256
      "$bin/cnnstudio-bench" --backend cuda --mode fp32 bf16 --batch 256
      python3 "$reference" --batch 256
    } 2>&1 | tee "$out/bench_gpu.jsonl" ;;
  side-by-side)
    ours_on_the_gpu() {
      for backend in cudnn cuda; do
        timeout 60 "$bin/cnnstudio-bench" --backend $backend --mode bf16 fp32 --batch 256 --no-save-copy
      done
    }
    { ours_on_the_gpu
      timeout 120 python3 "$reference" --batch 256 --modes bf16-cl fp32
      timeout 300 python3 "$reference" --batch 256 --modes bf16-cl --compile max-autotune 2> "$out/compile.txt"
      ours_on_the_gpu | sed 's/^{/{"round": 2, /'
    } 2> "$out/side_by_side.err" | tee "$out/ours_and_pytorch.txt" | grep '^{' > "$out/side_by_side_pytorch.jsonl"
    cut -c1-200 "$out/side_by_side_pytorch.jsonl" ;;
  bench-cpu)
    { "$bin/cnnstudio-bench" --backend cpu --threads 16 --batch 64
      python3 "$reference" --device cpu --threads 16 --batch 64
      # the naive baseline, one thread each, at a batch small enough for plain loops
      "$bin/cnnstudio-bench" --backend cpu --threads 1 --batch 8 --steps 2
      "$bin/cnnstudio-bench" --backend cpu-ref --threads 1 --batch 8 --steps 1
    } 2>&1 | tee "$out/bench_cpu.jsonl" ;;
  train)
    start=$(date +%s)
    "$bin/cnnstudio-train" --preset fer-cnn --dataset idx:.device/fashion-mnist --backend ${BACKEND:-cudnn} \
      --precision ${PRECISION:-bf16} --epochs ${EPOCHS:-15} --batch 256 --optimizer sgd --lr 0.1 \
      --momentum 0.9 --weight-decay 5e-4 --schedule cosine --augment crop=2,flip --threads 16 \
      --run-dir "$out/run" --log-every 100 2>&1 | tail -25 | tee "$out/train.log"
    echo "wall time $(( $(date +%s) - start )) s" | tee -a "$out/train.log" ;;
  train-gpus)
    # the trainer itself on every GPU of this machine (it starts mpirun)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    "$bin/cnnstudio-train" --gpus "$gpus" --preset fer-cnn --dataset idx:.device/fashion-mnist \
      --backend cudnn --precision bf16 --epochs 3 --batch 256 --optimizer sgd --lr 0.1 --momentum 0.9 \
      --schedule cosine --run-dir "$out/run-gpus" --log-every 100 2>&1 | tail -8 ;;
  compare)
    # the same short run on the CPU and on the GPU: both should land at the same accuracy
    for backend in cpu cudnn; do
      "$bin/cnnstudio-train" --preset fer-cnn --dataset idx:.device/fashion-mnist --backend $backend \
        --epochs 2 --limit 20000 --batch 256 --optimizer sgd --lr 0.1 --momentum 0.9 --schedule cosine \
        --threads 0 --seed 7 --run-dir "$out/compare-$backend" 2>&1 | grep -E "TEST ACCURACY|finished after"
    done ;;
  sanitize)
    # Every tool over both GPU suites. racecheck and synccheck look at shared memory and
    # barriers inside our kernels, so they run over the suites' cuda and cudnn cases alike.
    # SANITIZE_SHARDS splits each suite into gtest shards run side by side (the tools are slow:
    # one process over kernels_tests outlasts a call); each shard is bounded by SANITIZE_TIMEOUT
    # and keeps its exit status (124: it ran out). The out-of-memory test makes CUDA report its
    # failed allocation on purpose: memcheck runs it alone, API errors not reported.
    gpu_filter='*cuda*:*cudnn*'
    shards=${SANITIZE_SHARDS:-1}
    sanitize_shard() {  # tool suite shard filter
      local log="$out/sanitize-$1-$2${shards:+-$3of$shards}.log" options=(--tool "$1" --error-exitcode 9)
      [ "$1" = memcheck ] && options+=(--leak-check full)
      [ "$1" = racecheck ] && options+=(--racecheck-report all)
      [ -z "${SANITIZE_KERNELS:-}" ] || options+=(--kernel-name "$SANITIZE_KERNELS")
      CUDA_VISIBLE_DEVICES=$(( $3 % gpus )) GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$3 timeout "${SANITIZE_TIMEOUT:-240}" \
        compute-sanitizer "${options[@]}" "$bin/$2" --gtest_filter="$4" > "$log" 2>&1
      local status=$? errors
      errors=$(grep -Eo "(ERROR SUMMARY: [0-9]+ errors?|RACECHECK SUMMARY: [0-9]+ hazards? displayed \([0-9]+ errors?)" "$log" | tail -1)
      echo "$1 $2 shard $3 of $shards: exit $status, ${errors:-no summary (timed out?)}, $(grep -c '^\[       OK \]' "$log") tests passed"
    }
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
      for suite in ${SANITIZE_SUITES:-kernels_tests engine_tests}; do
        filter='*'; [ $suite = engine_tests ] && filter=$gpu_filter
        filter=${SANITIZE_FILTER:-$filter}
        [ $tool = memcheck ] && filter="$filter-*OutOfMemory*"
        for shard in $(seq 0 $((shards - 1))); do sanitize_shard $tool $suite $shard "$filter" & done
      done
      wait
    done 2>&1 | sort | tee -a "$out/sanitize-summary.txt"
    if [[ " ${SANITIZE_TOOLS:-memcheck} " == *" memcheck "* ]]; then
      compute-sanitizer --tool memcheck --report-api-errors no --leak-check full --error-exitcode 9 \
        "$bin/kernels_tests" --gtest_filter='*OutOfMemory*' > "$out/sanitize-memcheck-out-of-memory.log" 2>&1
      echo "memcheck kernels_tests *OutOfMemory* (API errors not reported): exit $?" | tee -a "$out/sanitize-summary.txt"
    fi ;;
  scaling)
    # data parallel on every GPU of this machine against PyTorch DDP, 256 images per GPU
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    { "$bin/cnnstudio-bench" --backend cudnn --mode fp32 bf16 --batch 256
      mpirun -np "$gpus" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
        "$bin/cnnstudio-bench" --backend cudnn --mode fp32 bf16 --batch 256
      for bucket in ${BUCKET_MB:-}; do  # gradient buckets other than the default 25 MiB
        mpirun -np "$gpus" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
          "$bin/cnnstudio-bench" --backend cudnn --mode fp32 bf16 --batch 256 --bucket-mb "$bucket"
      done
      python3 "$reference" --batch 256 --modes fp32 bf16-cl
      torchrun --nproc-per-node "$gpus" "$reference" --ddp --batch 256 --modes fp32 bf16-cl
    } 2>&1 | grep -v Warning | tee "$out/scaling.jsonl" ;;
  bench-before-after)
    builds=${BENCH_BUILDS:-$(builds_present)}
    for round in $(seq "${BENCH_ROUNDS:-2}"); do
      for build in $builds; do
        use_build "$build" || continue
        for config in ${BENCH_CONFIGS:-cudnn:fp32,tf32,bf16 cuda:fp32,bf16}; do
          modes=${config#*:}
          LD_LIBRARY_PATH=$libraries CNNSTUDIO_PLUGIN_DIR=$plugins timeout 120 "$programs/cnnstudio-bench" \
            --backend "${config%%:*}" --mode ${modes//,/ } --batch "${BENCH_BATCH:-256}" --no-save-copy
        done | sed "s/^{/{\"build\": \"$build\", \"round\": $round, /"
      done
    done 2>&1 | tee "$out/bench_before_after.jsonl" | cut -c1-160
    python3 "$tools/measurements_tables.py" --means "$out/bench_before_after.jsonl" ;;
  conv-before-after)
    for round in 1 2; do
      for build in before current; do
        libraries=$LD_LIBRARY_PATH
        if [ $build = before ]; then libraries=$PWD/.device/before/lib:$LD_LIBRARY_PATH; fi
        echo "--- $build build, round $round"
        LD_LIBRARY_PATH=$libraries "$bin/conv_bench" --backend "${CONV_BACKEND:-cuda}" \
          --precision "${CONV_PRECISION:-fp32}" --batch 256 --repeats 20
      done
    done 2>&1 | tee "$out/conv_before_after.log" ;;
  scaling-ours)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    { "$bin/cnnstudio-bench" --backend cudnn --mode fp32 bf16 --batch 256
      mpirun -np "$gpus" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
        "$bin/cnnstudio-bench" --backend cudnn --mode fp32 bf16 --batch 256
    } 2>&1 | grep -v Warning | tee "$out/scaling_ours.jsonl" ;;
  augment)
    { for mode in bf16 fp32; do
        "$bin/augment_bench" --backend cudnn --mode $mode --batch 256 --steps 200
        "$bin/cnnstudio-bench" --backend cudnn --mode $mode --batch 256
      done
      "$bin/augment_bench" --backend cuda --mode fp32 --batch 256 --steps 200
      "$bin/augment_bench" --backend cpu --threads 16 --batch 256
    } 2>&1 | tee "$out/augment_gpu.log" ;;
  fuzz)
    LD_LIBRARY_PATH=$PWD/.device/fuzz/lib:$LD_LIBRARY_PATH bash tests/fuzz/run.sh .device/fuzz/build \
      --runs "${FUZZ_RUNS:-10000000}" ${FUZZ_SECONDS:+--seconds "$FUZZ_SECONDS"} --jobs "${FUZZ_JOBS:-$(nproc)}" \
      --log-dir "$out/fuzz" ${FUZZ_TARGETS:-} 2>&1 | grep --line-buffered -E '^fuzz: [a-z0-9_]+: [0-9]+ executions|FAILED' ;;
  reference)
    python3 "$reference" --batch 256 --modes fp32 bf16-cl 2>&1 | grep -v Warning | tee "$out/reference.jsonl" ;;
  sweep)
    "$bin/cnnstudio-bench" --model fer-cnn --batch 256 --no-save-copy --report "$out/sweep-fer-cnn.json" \
      --config "cpu-ref threads=1 batch=16" --config "cpu threads=1" --config "cpu threads=4" \
      --config "cpu threads=16" --config "cpu bf16 threads=1" --config "cpu bf16 threads=16" --config "cuda fp32" --config "cuda bf16" --config "cudnn fp32" --config "cudnn tf32" \
      --config "cudnn bf16" --config "cudnn fp32 gpus=2" --config "cudnn bf16 gpus=2" \
      2>&1 | grep -v Warning | tee "$out/sweep.log" ;;
  live)
    if [ ! -x "$bin/cnnstudio-live" ] || [ ! -d .device/live ]; then
      echo "live: this pack has no cnnstudio-live (pack a build with OpenCV: tools/pack-device.sh)"
    else
      for backend in cudnn cuda cpu; do
        for every in 1 3; do
          for gradcam in "" --gradcam; do
            "$bin/cnnstudio-live" --source video:.device/live/face-640x480.avi --model .device/live/model \
              --cascade .device/live/haarcascades/haarcascade_frontalface_default.xml --backend $backend --threads 16 --detect-every $every --benchmark $gradcam
          done
        done
      done 2>&1 | tee "$out/live_benchmark.jsonl"
    fi ;;
  fer)
    for recipe in ${RECIPES:-$("$bin/cnnstudio-train" recipes | awk '$3 == "fer2013" {print $1}')}; do
      run="$out/fer-$recipe"
      teachers=()  # a distilling recipe learns from the models tools/fer-teachers.sh writes
      [ "$recipe" = resnet4-fer-distilled ] && for teacher in fer-resnet4-e200 fer-resnet-e120 fer-resnet-e80; do
        teachers+=(--teacher "${FER_TEACHERS:?set FER_TEACHERS to the folder tools/fer-teachers.sh wrote}/$teacher"); done
      "$bin/cnnstudio-train" --recipe "$recipe" --dataset "fer2013:${FER_CSV:?set FER_CSV to the FER2013 CSV}" \
        "${teachers[@]}" --threads 16 --run-dir "$run" --events "$run.events.jsonl" 2>&1 | tail -30 | tee "$run.log"
      "$bin/cnnstudio-train" evaluate "$run" --split validation --backend cudnn --tta flip 2>&1 | tee "$run.tta.log"
      tta=$(sed -n 's/^accuracy \([0-9.]*\)%.*/\1/p' "$run.tta.log")
      "$bin/cnnstudio-train" card "$run" ${tta:+--tta-accuracy $(python3 -c "print($tta / 100)")} 2>&1 | tee -a "$run.log"
    done ;;
  *) echo "unknown step $step" ;;
  esac
done

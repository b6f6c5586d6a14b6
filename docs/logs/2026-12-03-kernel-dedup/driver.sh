#!/usr/bin/env bash
# Shared pieces of the cuda backend's kernels (2026-12-03, one H200): the GEMMs' cp.async
# pipeline (runtime/async_copy.cuh pipelineTiles), the backward-data geometry
# (cuda/conv_windows.cuh), the split filter gradient's finishing kernel, weight loads and bf16
# stores, each now written once. In one command: the GPU tests, this build beside the one before
# it (a58cf59, in .device/before) interleaved over two rounds, and compute-sanitizer memcheck over
# the tests of the kernels touched. Needs .device from tools/pack-device.sh and .device/before
# (bin/cnnstudio-bench, lib/ with cnnstudio/plugins/libcnngpu.so) from the earlier build.
# Usage: OUT=DIR bash driver.sh
set -uo pipefail
logs=$(mktemp -d)
OUT=$logs bash tools/device-session.sh tests bench-before-after
tar -C $logs -czf $OUT/logs.tgz .
SANITIZE_TOOLS=memcheck SANITIZE_SHARDS=2 SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-150} SANITIZE_KERNELS=kns=cnnstudio \
  SANITIZE_FILTER='*Bf16*:*cuda_bf16*:CudaBackendTest.Conv*:CudaBackendTest.Split*:*Conv*/cuda_fp32:*Conv*/cudnn_bf16' \
  OUT=$logs bash tools/device-session.sh sanitize
tar -C $logs -czf $OUT/logs.tgz .

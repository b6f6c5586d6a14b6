#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck over the convolution conformance cases of cudnn bf16,
# our small-input kernels only (the setting of driver.sh; logs in $OUT).
SANITIZE_TOOLS="memcheck racecheck" SANITIZE_SUITES=engine_tests SANITIZE_FILTER='*Conv*/cudnn_bf16' \
  SANITIZE_KERNELS=regex:smallInput exec bash tools/device-session.sh sanitize

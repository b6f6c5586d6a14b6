#!/usr/bin/env bash
# Issue #17's "no accuracy regression" for the tensor-core filter partials, 2026-12-04, one H200,
# the kept build (daf2763): the runs of ../2026-12-03-chain-fer/ (fer-cnn on FER2013, cudnn bf16
# and cuda bf16, each model evaluated on PublicTest without and with flip TTA) for seeds 42 and 7
# (the session's device time allowed four runs, not six). The data came in three parts over two
# calls of a warm machine: `driver.sh stash` with parts 0 and 1, then this with part 2.
# Usage: OUT=DIR bash docs/logs/2026-12-04-filter-mma/fer.sh
set -uo pipefail
bash docs/logs/2026-12-03-chain-fer/driver.sh stash
bash tools/device-session.sh > /dev/null 2>&1  # unpacks the libraries and the GPU plugin
FER_SEEDS="42 7" OUT=$OUT bash docs/logs/2026-12-03-chain-fer/driver.sh train

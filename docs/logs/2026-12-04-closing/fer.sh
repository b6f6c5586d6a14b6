#!/usr/bin/env bash
# Issue #17's "no accuracy regression", 2026-12-04, one H200, the final build of this stop (the
# batch norm + ReLU now on our kernels in the cudnn backend too): the runs of
# ../2026-12-03-chain-fer/ (fer-cnn on FER2013, cudnn bf16 and cuda bf16, seeds 42, 7 and 1, each
# model evaluated on PublicTest without and with flip TTA), after the last data part is stashed
# beside the two stashed over the calls before.
# Usage: OUT=DIR bash docs/logs/2026-12-04-closing/fer.sh
set -uo pipefail
bash docs/logs/2026-12-03-chain-fer/driver.sh stash
bash tools/device-session.sh > /dev/null 2>&1  # unpacks the libraries and the GPU plugin
OUT=$OUT bash docs/logs/2026-12-03-chain-fer/driver.sh train

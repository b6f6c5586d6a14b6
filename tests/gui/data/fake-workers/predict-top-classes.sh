#!/bin/sh
# Stands in for `cnnstudio-train predict RUN_DIR IMAGE --top N` in gui_tests (RunHistoryTest):
# the worker's output for one image, a class name with a space included.
printf '%s\n' "$@" > "$(dirname "$0")/arguments.txt"
printf '%s\n' "$3"
printf '  %-16s %6.2f%%\n' "Ankle boot" 91.2 "Sneaker" 5.1 "Sandal" 2.0

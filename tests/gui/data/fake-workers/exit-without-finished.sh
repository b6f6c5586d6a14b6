#!/bin/sh
# Stands in for cnnstudio-train in gui_tests (TrainingControllerTest); records its arguments.
printf '%s\n' "$@" > "$(dirname "$0")/arguments.txt"
echo '{"schema":1,"event":"run_started","epochs":1}'
echo 'Segmentation fault in conv kernel' >&2
exit 3

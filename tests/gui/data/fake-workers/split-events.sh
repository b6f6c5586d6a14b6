#!/bin/sh
# Stands in for cnnstudio-train in gui_tests (TrainingControllerTest); records its arguments.
printf '%s\n' "$@" > "$(dirname "$0")/arguments.txt"
# An event split across two reads, a line that is no event, 60 lines of stderr and a last
# event without its newline.
printf '{"schema":1,"event":"run_started","epochs":1,"steps_per_epoch":'
sleep 0.3
printf '10,"dataset":{"classes":["a","b"]}}\n'
echo 'a line that is not an event'
i=1; while [ $i -le 60 ]; do echo "stderr line $i" >&2; i=$((i+1)); done
printf '{"schema":1,"event":"finished","reason":"completed","epochs_run":1}'

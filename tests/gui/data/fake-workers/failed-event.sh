#!/bin/sh
# Stands in for cnnstudio-train in gui_tests (TrainingControllerTest); records its arguments.
printf '%s\n' "$@" > "$(dirname "$0")/arguments.txt"
echo '{"schema":1,"event":"failed","reason":"loss became NaN at epoch 1 step 7 (lower the learning rate)","where":"trainer","step":7,"epoch":1}'
exit 1

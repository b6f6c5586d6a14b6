#!/bin/sh
# Stands in for cnnstudio-train in gui_tests (TrainingControllerTest); records its arguments.
printf '%s\n' "$@" > "$(dirname "$0")/arguments.txt"
echo ready
exec sleep 60

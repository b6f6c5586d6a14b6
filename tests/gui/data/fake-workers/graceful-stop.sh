#!/bin/sh
# Stands in for cnnstudio-train in gui_tests (TrainingControllerTest); records its arguments.
printf '%s\n' "$@" > "$(dirname "$0")/arguments.txt"
# On SIGTERM: the finished event of a stopped run, as the worker writes it.
trap 'echo "{\"schema\":1,\"event\":\"finished\",\"reason\":\"stopped\",\"epochs_run\":0}"; exit 0' TERM
echo ready
while true; do sleep 0.05; done

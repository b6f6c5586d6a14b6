#!/bin/sh
# Stands in for cnnstudio-train as a launcher in gui_tests (TrainingControllerTest): like mpirun
# and its ranks, a child process keeps working; its pid goes to job.pid next to this script.
sleep 60 &
echo $! > "$(dirname "$0")/job.pid"
echo ready
wait

#!/bin/sh
# Stands in for cnnstudio-train in gui_tests (TrainPageTest): a run that has begun its first
# epoch and then trains on, until it is killed.
printf '%s\n' "$@" > "$(dirname "$0")/arguments.txt"
echo '{"schema":1,"event":"run_started","epochs":3,"steps_per_epoch":20,"resumed_from_step":0,"model":{"name":"lenet5"},"dataset":{"name":"fashion-mnist","classes":["a","b"]},"backend":"cpu"}'
echo '{"schema":1,"event":"step","epoch":1,"step":5,"epoch_step":5,"loss":2.1,"learning_rate":0.001,"images_per_s":800,"elapsed_s":1.0}'
echo '{"schema":1,"event":"step","epoch":1,"step":10,"epoch_step":10,"loss":1.9,"learning_rate":0.001,"images_per_s":810,"elapsed_s":2.0}'
exec sleep 60

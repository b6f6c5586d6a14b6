#!/bin/sh
# Stands in for `cnnstudio-train --resume RUN_DIR --events -` in gui_tests (RunHistoryTest): the
# resumed session of the stopped lenet5-sgd run (6 epochs of 50 steps, stopped at step 186),
# appended to the run's events.jsonl and written on standard output, ending "completed".
printf '%s\n' "$@" > "$(dirname "$0")/arguments.txt"
dir="$2"
emit() {
    printf '%s\n' "$1" >> "$dir/events.jsonl"
    printf '%s\n' "$1"
}
emit '{"schema":1,"event":"run_started","run_dir":"'"$dir"'","epochs":6,"steps_per_epoch":50,"resumed_from_step":186,"model":{"name":"lenet5"},"dataset":{"name":"fashion-mnist","classes":["a","b"]},"backend":"cpu-ref"}'
for epoch in 4 5 6; do
    emit '{"schema":1,"event":"epoch","epoch":'$epoch',"step":'$((epoch * 50))',"train_loss":0.5,"train_accuracy":0.8,"validation_loss":0.55,"validation_accuracy":0.78,"learning_rate":0.05,"epoch_time_s":1,"eta_s":0,"images_per_s":700,"best":true}'
done
emit '{"schema":1,"event":"finished","reason":"completed","epochs_run":6,"best_validation_accuracy":0.78,"best_epoch":6,"test_accuracy":0.77,"test_loss":0.6,"model_path":null,"wall_time_s":30}'

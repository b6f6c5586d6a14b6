#!/bin/sh
# Stands in for cnnstudio-train in gui_tests (TrainPageTest): a run that trains until Stop and
# then ends "stopped", writing its config and events into --run-dir as the worker does. The test
# writes the checkpoint a real worker would leave.
while [ $# -gt 0 ]; do
    [ "$1" = "--run-dir" ] && dir="$2"
    shift
done
mkdir -p "$dir"
printf '{"epochs":3}\n' > "$dir/config.json"
emit() {
    printf '%s\n' "$1" >> "$dir/events.jsonl"
    printf '%s\n' "$1"
}
trap 'emit "{\"schema\":1,\"event\":\"finished\",\"reason\":\"stopped\",\"epochs_run\":0}"; exit 0' TERM
emit '{"schema":1,"event":"run_started","epochs":3,"steps_per_epoch":20,"resumed_from_step":0,"model":{"name":"lenet5"},"dataset":{"name":"fashion-mnist","classes":["a","b"]},"backend":"cpu"}'
emit '{"schema":1,"event":"step","epoch":1,"step":5,"epoch_step":5,"loss":2.1,"learning_rate":0.001,"images_per_s":800,"elapsed_s":1.0}'
while true; do sleep 0.05; done

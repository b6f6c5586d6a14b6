#!/bin/sh
# Stands in for cnnstudio-bench in gui_tests (HardwarePageTest): a sweep that is measured at once.
# It writes the report $FAKE_BENCH_REPORT to --report and keeps a copy as $FAKE_BENCH_KEPT_COPY,
# announcing it in its bench_finished event as cnnstudio-bench does.
while [ $# -gt 0 ]; do
    [ "$1" = "--report" ] && report="$2"
    shift
done
cp "$FAKE_BENCH_REPORT" "$report"
cp "$FAKE_BENCH_REPORT" "$FAKE_BENCH_KEPT_COPY"
echo '{"event":"bench_finished","saved_copy":"'"$FAKE_BENCH_KEPT_COPY"'"}'

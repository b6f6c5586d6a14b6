#!/usr/bin/env python3
"""The last whole training step in an Nsight Compute log of cnnstudio-bench (the kernels after an
SGD update up to the next), summed by kernel: launches and microseconds (gpu__time_duration.sum),
largest first.
Usage: python3 step_kernels.py NCU_CSV[.xz]   (prints Markdown)"""
import csv
import io
import lzma
import sys


def read_rows(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as log:
        text = "".join(line for line in log if not line.startswith("=="))
    return list(csv.DictReader(io.StringIO(text)))


def last_step(rows):
    """The kernels of the last whole training step: each step ends in the SGD update, and the
    benchmark's inference passes between two updates make that interval longer than a step's,
    so the step is the last interval of the length most intervals have."""
    updates = [i for i, row in enumerate(rows) if "sgdKernel" in row["Kernel Name"]]
    if len(updates) < 2:
        sys.exit("fewer than two SGD updates in the log: no whole step")
    intervals = list(zip(updates, updates[1:]))
    lengths = [end - start for start, end in intervals]
    step_length = max(set(lengths), key=lengths.count)
    start, end = [pair for pair, length in zip(intervals, lengths) if length == step_length][-1]
    return rows[start + 1:end + 1]


def short_name(kernel):
    name = kernel.split("(")[0].replace("void ", "").replace("(anonymous namespace)::", "")
    return name.replace("unnamed>::", "")[-90:]


def main():
    step = last_step(read_rows(sys.argv[1]))
    totals = {}
    for row in step:
        name = short_name(row["Kernel Name"])
        count, time = totals.get(name, (0, 0.0))
        totals[name] = (count + 1, time + float(row["Metric Value"].replace(",", "")) / 1000.0)
    print(f"{len(step)} kernels, {sum(t for _, t in totals.values()):.1f} us in all\n")
    print("| kernel | launches | us |")
    print("| --- | ---: | ---: |")
    for name, (count, time) in sorted(totals.items(), key=lambda item: -item[1][1]):
        print(f"| `{name}` | {count} | {time:.1f} |")


main()

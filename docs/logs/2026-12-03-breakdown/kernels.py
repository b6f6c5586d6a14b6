#!/usr/bin/env python3
"""Nsight Compute's kernel durations of one replayed fer-cnn training step (cudnn bf16, batch 256),
the build before (44a0743, ncu_before.csv.xz here) beside this stop's final kernels
(../2026-12-03-engine-timing/ncu_current.csv.xz): the last whole step of each log (the kernels
after the second-to-last SGD update up to the last), our kernels that changed, summed by group.
cuDNN's convolutions are left out: under ncu their engine search is timed through the profiler's
interception and picks other engines than an ordinary run (docs/measurements.md).
Usage: python3 docs/logs/2026-12-03-breakdown/kernels.py   (prints a Markdown table)"""
import csv
import io
import lzma
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
LOGS = {"before (44a0743)": HERE / "ncu_before.csv.xz",
        "after": HERE.parent / "2026-12-03-engine-timing" / "ncu_current.csv.xz"}
GROUPS = {"filter staging, gradient unstaging and flatten transposes": ("transposeTilesKernel", "transposeWholeImagesKernel"),
          "softmax cross-entropy forward": ("softmaxCrossEntropyForwardKernel",)}


def last_step(path):
    text = lzma.open(path, "rt").read()
    rows = list(csv.DictReader(io.StringIO("".join(l for l in text.splitlines(True) if not l.startswith("==")))))
    updates = [i for i, row in enumerate(rows) if "sgdKernel" in row["Kernel Name"]]
    return rows[updates[-2] + 1:updates[-1] + 1]


def microseconds(row):
    return float(row["Metric Value"].replace(",", "")) / 1000.0


steps = {label: last_step(path) for label, path in LOGS.items()}
print("| kernels | " + " | ".join(f"{label} (us, kernels)" for label in steps) + " |")
print("| --- |" + " --- |" * len(steps))
for group, names in GROUPS.items():
    cells = []
    for step in steps.values():
        chosen = [row for row in step if any(name in row["Kernel Name"] for name in names)]
        cells.append(f"{sum(map(microseconds, chosen)):.1f} ({len(chosen)})")
    print(f"| {group} | " + " | ".join(cells) + " |")

#!/usr/bin/env python3
"""The batch-norm kernels of the last fer-cnn training step in an ncu CSV (driver.sh), one line
per launch in launch order: kernel, grid, microseconds.
Usage: bn_launches.py NCU_CSV [STEP_KERNELS]  (the step's kernel count, step_kernels.md; 99 here)"""
import csv
import sys

KERNELS = ("Statistics", "statistics", "normalize", "Gradient", "semiPersist", "parameterGradients")
STEP_KERNELS = int(sys.argv[2]) if len(sys.argv) > 2 else 99

rows = list(csv.DictReader(line for line in open(sys.argv[1]) if not line.startswith("==")))
rows = [row for row in rows if row.get("Metric Value")]
for row in rows[-STEP_KERNELS:]:
    name = row["Kernel Name"].split("(")[0].split("::")[-1]
    if any(part in name for part in KERNELS) and "smallInput" not in name and "inputBlock" not in name:
        print(f"{name[-48:]:48} {row.get('Grid Size', ''):14} {float(row['Metric Value'].replace(',', '')) / 1000:7.1f}")

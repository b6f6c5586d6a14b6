#!/usr/bin/env python3
"""Regenerates the speed tables of docs/measurements.md from the raw logs committed under docs/.

Each generated table sits between two marker comments that say how to make it:

    <!-- table: KIND SOURCE [OPTIONS] -->
    | ... the table, rewritten by this script ... |
    <!-- end table -->

KIND is one of:
  before-after  SOURCE: JSON lines of `tools/device-session.sh bench-before-after` ("build",
                "round", "backend", "mode", "images_per_s"); a row per backend and mode.
  ours-vs-pytorch  SOURCE: JSON lines of cnnstudio-bench and bench/pytorch_reference.py from one
                command; OPTIONS pairs=BACKEND/MODE:PYTORCH_MODE,... gives the rows in order.
  sweep         SOURCE: a cnnstudio-bench report (cnnstudio-bench-report/1); a row per
                configuration with the speedups over cpu-ref on one thread and the best CPU one,
                inference images/s, peak memory and scaling efficiency.
  breakdown     SOURCE: a cnnstudio-bench report; where a training step's time goes, a row per
                successful configuration, milliseconds per category.

Usage: tools/measurements_tables.py [--check] [--doc docs/measurements.md]
  without --check  rewrites the document in place (atomically);
  with --check     exits 1, naming each out-of-date table, when the document differs from what the
                   logs give (ctest docs.measurements_tables_up_to_date runs this).
Python 3 standard library only.
"""
import argparse
import json
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"^<!-- table: (?P<kind>[\w-]+) (?P<source>\S+)(?P<options>(?: \S+)*) -->$")
END_MARKER = "<!-- end table -->"
BREAKDOWN_CATEGORIES = ["convolution", "batch_norm", "activation", "pooling", "dense", "loss", "update",
                        "communication", "other"]
PYTORCH_MODE_NAMES = {
    "fp32": "fp32",
    "tf32": "tf32",
    "tf32-cl": "tf32 channels-last",
    "bf16": "bf16 autocast",
    "bf16-cl": "bf16 channels-last, eager",
    "bf16-cl+compile:max-autotune": 'bf16 channels-last, `torch.compile(mode="max-autotune")`',
}
BACKEND_NOTES = {"cuda": " (own kernels)"}


class TableError(Exception):
    """A marker or a log that cannot make its table; the message names the file and line."""


def thousands(value):
    return f"{round(value):,}"


def read_json_lines(path):
    rows = []
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            line = line.strip()
            if not line.startswith("{"):
                continue  # a log may hold other output (warnings, nvidia-smi) between the lines
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise TableError(f"{path}:{number}: not a JSON line: {error}") from error
    return rows


def read_report(path):
    with open(path, encoding="utf-8") as stream:
        try:
            report = json.load(stream)
        except json.JSONDecodeError as error:
            raise TableError(f"{path}: not JSON: {error}") from error
    if report.get("schema") != "cnnstudio-bench-report/1":
        raise TableError(f"{path}: schema is {report.get('schema')!r}, not cnnstudio-bench-report/1")
    return report


def markdown(header, rows):
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def before_after_table(path, options):
    runs = {}  # (backend, mode) -> {"before": [...], "current": [...]} in round order
    for row in sorted(read_json_lines(path), key=lambda r: r["round"]):
        key = (row["backend"], row["mode"])
        runs.setdefault(key, {"before": [], "current": []})[row["build"]].append(row["images_per_s"])
    rows = [[f"`{backend}` {mode}", " / ".join(map(thousands, builds["before"])),
             " / ".join(map(thousands, builds["current"]))] for (backend, mode), builds in runs.items()]
    return markdown(["backend, mode", "before (rounds 1, 2)", "after (rounds 1, 2)"], rows)


def ours_vs_pytorch_table(path, options):
    pairs = options.get("pairs")
    if not pairs:
        raise TableError("ours-vs-pytorch needs pairs=BACKEND/MODE:PYTORCH_MODE,...")
    rows_in = read_json_lines(path)
    ours = {(r["backend"], r["mode"]): r for r in rows_in if r.get("impl") == "cnnstudio"}
    theirs = {r["mode"]: r for r in rows_in if r.get("impl") == "pytorch"}
    version = ""
    rows = []
    for pair in pairs.split(","):
        ours_key, _, pytorch_mode = pair.partition(":")
        backend, _, mode = ours_key.partition("/")
        if (backend, mode) not in ours:
            raise TableError(f"{path}: no cnnstudio line for {backend} {mode}")
        if pytorch_mode not in theirs:
            raise TableError(f"{path}: no PyTorch line for mode {pytorch_mode}")
        mine, other = ours[(backend, mode)]["images_per_s"], theirs[pytorch_mode]["images_per_s"]
        version = ".".join(theirs[pytorch_mode]["version"].split(".")[:2])
        rows.append([f"`{backend}` {mode}{BACKEND_NOTES.get(backend, '')}", thousands(mine),
                     PYTORCH_MODE_NAMES.get(pytorch_mode, pytorch_mode), thousands(other), f"{mine / other:.2f}×"])
    return markdown(["ours", "img/s", f"PyTorch {version}", "img/s", "ratio"], rows)


def ok_configurations(report):
    return [c for c in report["configurations"] if c["status"] == "ok"]


def baseline(report, kind):
    cpu = [c for c in ok_configurations(report) if c["devices"] == "cpu"]
    if kind == "cpu-ref":
        return next((c for c in cpu if c["backend"] == "cpu-ref" and c["threads"] == 1 and c["ranks"] == 1), None)
    return max(cpu, key=lambda c: c["train_images_per_second"]["median"], default=None)


def speedup(configuration, base):
    if base is None or configuration["status"] != "ok" or base["train_images_per_second"]["median"] <= 0:
        return "–"
    return f"{configuration['train_images_per_second']['median'] / base['train_images_per_second']['median']:.1f}×"


def efficiency(report, configuration):
    if configuration["ranks"] == 1 or configuration["status"] != "ok":
        return "–"
    for single in ok_configurations(report):
        if (single["ranks"], single["backend"], single["precision"], single["batch"]) == \
                (1, configuration["backend"], configuration["precision"], configuration["batch"]):
            ideal = configuration["ranks"] * single["train_images_per_second"]["median"]
            return f"{100 * configuration['train_images_per_second']['median'] / ideal:.1f}%"
    return "–"


def sweep_table(path, options):
    report = read_report(path)
    naive, best_cpu = baseline(report, "cpu-ref"), baseline(report, "best-cpu")
    rows = []
    for c in report["configurations"]:
        if c["status"] != "ok":
            rows.append([c["label"], f"{c['status']}: {c['error']}", "–", "–", "–", "–", "–", "–"])
            continue
        train = c["train_images_per_second"]
        note = " (reduced)" if c["reduced"] else ""
        rows.append([c["label"], f"{thousands(train['median'])}{note}",
                     f"{thousands(train['min'])} to {thousands(train['max'])}", speedup(c, naive),
                     speedup(c, best_cpu), thousands(c["inference_images_per_second"]),
                     f"{c['peak_memory_bytes'] / 2**20:,.0f} MiB", efficiency(report, c)])
    return markdown(["configuration", "train img/s (median)", "min to max", "× cpu-ref 1 thread", "× best CPU",
                     "inference img/s", "peak memory", "scaling efficiency"], rows)


def breakdown_table(path, options):
    report = read_report(path)
    rows = [[c["label"]] + [f"{c['breakdown_ms'][k]:.2f}" for k in BREAKDOWN_CATEGORIES] +
            [f"{sum(c['breakdown_ms'].values()):.2f}"] for c in ok_configurations(report)]
    return markdown(["configuration"] + [k.replace("_", " ") for k in BREAKDOWN_CATEGORIES] + ["sum (ms)"], rows)


KINDS = {"before-after": before_after_table, "ours-vs-pytorch": ours_vs_pytorch_table, "sweep": sweep_table,
         "breakdown": breakdown_table}


def regenerate(text, doc_path):
    """The document with every marked table rebuilt, and the names of the tables that changed."""
    lines = text.split("\n")
    result, changed, index = [], [], 0
    while index < len(lines):
        line = lines[index]
        result.append(line)
        index += 1
        match = MARKER.match(line)
        if not match:
            continue
        where = f"{doc_path}:{index}"
        end = next((i for i in range(index, len(lines)) if lines[i] == END_MARKER), None)
        if end is None:
            raise TableError(f"{where}: the table marker has no '{END_MARKER}' after it")
        kind, source = match["kind"], match["source"]
        if kind not in KINDS:
            raise TableError(f"{where}: unknown table kind '{kind}' (known: {', '.join(KINDS)})")
        options = dict(option.split("=", 1) for option in match["options"].split())
        source_path = os.path.join(ROOT, source)
        if not os.path.exists(source_path):
            raise TableError(f"{where}: the raw log {source} is not in the repository")
        try:
            table = KINDS[kind](source_path, options)
        except KeyError as error:
            raise TableError(f"{where}: {source}: a line or configuration lacks the field {error}") from error
        if lines[index:end] != table:
            changed.append(f"{where} ({kind} {source})")
        result += table
        index = end
    return "\n".join(result), changed


def write_atomically(path, text):
    folder = os.path.dirname(path)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".measurements-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the document is up to date")
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs", "measurements.md"))
    arguments = parser.parse_args()
    with open(arguments.doc, encoding="utf-8") as stream:
        text = stream.read()
    try:
        new_text, changed = regenerate(text, os.path.relpath(arguments.doc, ROOT))
    except (TableError, OSError) as error:
        print(f"measurements_tables: {error}", file=sys.stderr)
        return 2
    if arguments.check:
        for table in changed:
            print(f"measurements_tables: out of date: {table}; run tools/measurements_tables.py", file=sys.stderr)
        return 1 if changed else 0
    if new_text != text:
        write_atomically(arguments.doc, new_text)
    for table in changed:
        print(f"regenerated {table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

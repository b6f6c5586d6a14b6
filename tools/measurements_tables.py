#!/usr/bin/env python3
"""Regenerates the speed tables of README.md and docs/ from the raw logs committed under docs/.

Each generated table sits between two marker comments that say how to make it:

    <!-- table: KIND SOURCE [OPTIONS] -->
    | ... the table, rewritten by this script ... |
    <!-- end table -->

KIND is one of:
  before-after  SOURCE: JSON lines of `tools/device-session.sh bench-before-after` ("build",
                "round", "backend", "mode", "images_per_s"); a row per backend and mode. OPTIONS
                after=BUILD takes the after column from that build (default "current") and
                before=BUILD the before column (default "before"), where one command measured
                more forms beside the build before; the others are left out.
  builds        SOURCE: the same JSON lines; a row per build in the order measured, and for each
                backend and mode its rounds and their mean, with the change against the first
                build (or base=BUILD). OPTIONS labels=BUILD:LABEL,... names the builds (underscores
                read as spaces), builds=BUILD,... keeps those rows in that order.
  threads-side-by-side  SOURCE: JSON lines of cnnstudio-bench (tagged "build", "round") and
                bench/pytorch_reference.py (tagged "round") from one command, at several thread
                counts; a row per build and mode of ours, then per PyTorch mode, a column per thread
                count: the median over the rounds and the ratio to PyTorch's fastest mode at that
                count. OPTIONS labels=BUILD:LABEL,... names our builds (underscores read as spaces).
  conv-before-after  SOURCE: a log of `tools/device-session.sh conv-before-after` ("--- BUILD build,
                round N" lines, each followed by conv_bench's JSON lines); a row per layer and op:
                milliseconds of each build (the mean of the rounds), the speedup and TFLOP/s after.
                OPTIONS layers=NAME,... keeps those layers' rows (and sums them); digits=N prints
                milliseconds with N decimals (default 2).
  ours-vs-pytorch  SOURCE: JSON lines of cnnstudio-bench and bench/pytorch_reference.py from one
                command; OPTIONS pairs=BACKEND/MODE:PYTORCH_MODE,... gives the rows in order. Our
                lines that name a "build" (earlier builds measured in the same command) are not ours;
                where ours ran again after PyTorch (lines with "round" 2 or later), the first round is.
  scaling       SOURCE: JSON lines of `tools/device-session.sh scaling` (cnnstudio-bench alone and under
                mpirun, bench/pytorch_reference.py alone and under torchrun --ddp, one command); a
                row per multi-GPU line (ours: with its gradient bucket size when the line gives it):
                one GPU, every GPU, data-parallel efficiency.
  sweep         SOURCE: a cnnstudio-bench report (cnnstudio-bench-report/1); a row per
                configuration with the speedups over cpu-ref on one thread and the best CPU one,
                inference images/s, peak memory and scaling efficiency.
  breakdown     SOURCE: a cnnstudio-bench report (here and in layers: or a folder of report*.json,
                read as one report); where a training step's time goes, a row per
                successful configuration, milliseconds per category.
  layers        SOURCE: a cnnstudio-bench report; OPTIONS configurations=BACKEND/PRECISION,... (one
                rank each) and category=CATEGORY: a row per layer of that category, forward and
                backward milliseconds per configuration, and their sums.
  live          SOURCE: a log of `cnnstudio-live --benchmark` runs (its JSON lines; other lines
                skipped); a row per run.
  augment       SOURCE: a log of `augment_bench` runs, each optionally followed by a cnnstudio-bench
                JSON line of the same command (`tools/device-session.sh augment`); a row per run,
                with the share of that training step the augmentation takes.
  throughput    SOURCE: a folder holding throughput-train-BATCH.log (cnnstudio-train's output) and
                throughput-bench-BATCH.jsonl (cnnstudio-bench on the run's spec); OPTIONS
                batches=B,... epochs=E,...: a row per batch, the trainer's images/s of those epochs
                beside the benchmark's.

Usage: tools/measurements_tables.py [--check] [--doc FILE ...]
       tools/measurements_tables.py --means LOG [--base BUILD]
  --doc            the documents (default: README.md and every Markdown file under docs/ but
                   docs/logs/);
  without --check  rewrites each document in place (atomically);
  with --check     exits 1, naming each out-of-date table, when a document differs from what the
                   logs give (ctest docs.measurements_tables_up_to_date runs this);
  --means LOG      prints LOG's builds table (the kind builds) and nothing else, for a driver
                   to show what it measured.
Python 3 standard library only.
"""
import argparse
import json
import math
import os
import re
import statistics
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
    "fp32-cl": "fp32 channels-last",
    "bf16": "bf16 autocast",
    "bf16-cl": "bf16 channels-last, eager",
    "bf16-cl+compile:max-autotune": 'bf16 channels-last, `torch.compile(mode="max-autotune")`',
}
BACKEND_NOTES = {"cuda": " (own kernels)"}


class TableError(Exception):
    """A marker or a log that cannot make its table; the message names the file and line."""


def thousands(value):
    return f"{math.floor(value + 0.5):,}"  # halves up, as cnnstudio-bench prints them (round() takes halves to even)


def json_line(path, number, line):
    try:
        return json.loads(line)
    except json.JSONDecodeError as error:
        raise TableError(f"{path}:{number}: not a JSON line: {error}") from error


def read_json_lines(path):
    rows = []
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            line = line.strip()
            if line.startswith("{"):  # a log may hold other output (warnings, nvidia-smi) between the lines
                rows.append(json_line(path, number, line))
    return rows


def read_report(path):
    """A cnnstudio-bench report, or for a folder its report*.json files as one (configurations in name order)."""
    if os.path.isdir(path):
        files = sorted(name for name in os.listdir(path) if name.startswith("report") and name.endswith(".json"))
        if not files:
            raise TableError(f"{path}: no report*.json in this folder")
        reports = [read_report(os.path.join(path, name)) for name in files]
        return dict(reports[0], configurations=[c for report in reports for c in report["configurations"]])
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
    before, after = options.get("before", "before"), options.get("after", "current")
    runs = {}  # (backend, mode) -> {before: [...], after: [...]} in round order
    for row in sorted(read_json_lines(path), key=lambda r: r["round"]):
        if row["build"] not in (before, after):
            continue
        key = (row["backend"], row["mode"])
        runs.setdefault(key, {before: [], after: []})[row["build"]].append(row["images_per_s"])
    for (backend, mode), builds in runs.items():
        if not builds[before] or not builds[after]:
            raise TableError(f"{path}: {backend} {mode} lacks lines of {before} or of {after}")
    rows = [[f"`{backend}` {mode}", " / ".join(map(thousands, builds[before])),
             " / ".join(map(thousands, builds[after]))] for (backend, mode), builds in runs.items()]
    rounds = max(len(values) for builds in runs.values() for values in builds.values())
    named = "round 1" if rounds == 1 else "rounds " + ", ".join(str(r) for r in range(1, rounds + 1))
    return markdown(["backend, mode", f"before ({named})", f"after ({named})"], rows)


def builds_table(path, options):
    labels = dict(label.split(":", 1) for label in options["labels"].split(",")) if "labels" in options else {}
    runs = {}  # build -> (backend, mode) -> images/s in round order; builds and keys as first measured
    for row in sorted(read_json_lines(path), key=lambda r: r["round"]):
        runs.setdefault(row["build"], {}).setdefault((row["backend"], row["mode"]), []).append(row["images_per_s"])
    order = options["builds"].split(",") if "builds" in options else list(runs)
    base = options.get("base", order[0] if order else "")
    for build in order + [base]:
        if build not in runs:
            raise TableError(f"{path}: no lines of the build {build!r} (measured: {', '.join(runs)})")
    keys = list(runs[base])
    header = ["build"]
    for backend, mode in keys:
        rounds = max(len(runs[build].get((backend, mode), [])) for build in order)
        header += [f"`{backend}` {mode}, " + ("round 1" if rounds == 1 else f"rounds 1-{rounds}"), "mean"]
    rows = []
    for build in order:
        row = [labels.get(build, build).replace("_", " ")]
        for key in keys:
            values = runs[build].get(key)
            if not values:
                raise TableError(f"{path}: the build {build!r} has no lines of {key[0]} {key[1]}")
            mean = statistics.fmean(values)
            change = "" if build == base else f" ({mean / statistics.fmean(runs[base][key]) - 1:+.1%})"
            row += [" / ".join(map(thousands, values)), thousands(mean) + change]
        rows.append(row)
    return markdown(header, rows)


def threads_side_by_side_table(path, options):
    labels = dict(label.split(":", 1) for label in options["labels"].split(",")) if "labels" in options else {}
    runs = {}  # row label -> threads -> images/s over the rounds; rows as first measured, ours first
    for row in read_json_lines(path):
        if row.get("impl") == "pytorch":
            label = "PyTorch " + PYTORCH_MODE_NAMES.get(row["mode"], row["mode"]).replace(", eager", "")
        else:
            build = row.get("build", "current")
            build_label = labels.get(build, build).replace("_", " ")
            label = f"ours `{row['backend']}` {row['mode']}" + (f", {build_label}" if build_label else "")
        runs.setdefault((row.get("impl") == "pytorch", label), {}).setdefault(row["threads"], []).append(
            row["images_per_s"])
    threads = sorted({count for counts in runs.values() for count in counts})
    fastest = {}  # threads -> PyTorch's fastest median
    for (pytorch, _), counts in runs.items():
        for count, values in counts.items():
            if pytorch:
                fastest[count] = max(fastest.get(count, 0.0), statistics.median(values))
    missing = [count for count in threads if count not in fastest]
    if missing:
        raise TableError(f"{path}: no PyTorch line at {missing[0]} threads")
    header = ["implementation, mode"]
    for count in threads:
        header += [f"{count} thread{'s' if count > 1 else ''}, img/s", "vs PyTorch's fastest"]
    rows = []
    for (_, label), counts in sorted(runs.items(), key=lambda item: item[0][0]):
        row = [label]
        for count in threads:
            if count not in counts:
                row += ["", ""]
                continue
            median = statistics.median(counts[count])
            row += [thousands(median), f"{median / fastest[count]:.2f}×"]
        rows.append(row)
    return markdown(header, rows)


CONV_ROUND = re.compile(r"^--- (?P<build>\w+) build, round \d+$")


def conv_before_after_table(path, options):
    times = {}  # (layer, op) -> {"before": [(ms, tflops)], "current": [...]}
    build = None
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            match = CONV_ROUND.match(line.strip())
            if match:
                build = match["build"]
            elif line.startswith("{"):
                if build is None:
                    raise TableError(f"{path}:{number}: a measurement before any '--- BUILD build' line")
                row = json.loads(line)
                times.setdefault((row["layer"], row["op"]), {}).setdefault(build, []).append((row["ms"], row["tflops"]))
    if not times:
        raise TableError(f"{path}: no conv_bench lines")
    if "layers" in options:
        kept = options["layers"].split(",")
        times = {key: builds for key, builds in times.items() if key[0] in kept}
        if not times:
            raise TableError(f"{path}: none of the layers {options['layers']}")
    digits = int(options.get("digits", 2))
    rows, total_before, total_after = [], 0.0, 0.0
    for (layer, op), builds in times.items():
        if set(builds) != {"before", "current"}:
            raise TableError(f"{path}: {layer} {op} is not measured with both builds")
        before = statistics.mean(ms for ms, _ in builds["before"])
        after = statistics.mean(ms for ms, _ in builds["current"])
        tflops = statistics.mean(t for _, t in builds["current"])
        total_before, total_after = total_before + before, total_after + after
        rows.append([layer, op.replace("_", " "), f"{before:.{digits}f}", f"{after:.{digits}f}",
                     f"{before / after:.2f}×", f"{tflops:.1f}"])
    rows.append(["sum", "", f"{total_before:.{digits}f}", f"{total_after:.{digits}f}",
                 f"{total_before / total_after:.2f}×", ""])
    return markdown(["layer", "op", "before (ms)", "after (ms)", "speedup", "after (TFLOP/s)"], rows)


def ours_vs_pytorch_table(path, options):
    pairs = options.get("pairs")
    if not pairs:
        raise TableError("ours-vs-pytorch needs pairs=BACKEND/MODE:PYTORCH_MODE,...")
    rows_in = read_json_lines(path)
    ours = {(r["backend"], r["mode"]): r for r in rows_in
            if r.get("impl") == "cnnstudio" and "build" not in r and r.get("round", 1) == 1}
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


def scaling_table(path, options):
    single, parallel = {}, []
    for row in read_json_lines(path):
        key = (row["impl"], row.get("backend", ""), row["mode"])
        if row["ranks"] == 1:
            single[key] = row
        else:
            parallel.append((key, row))
    rows = []
    for key, many in parallel:
        if key not in single:
            raise TableError(f"{path}: {' '.join(filter(None, key))} on {many['ranks']} GPUs has no one-GPU line")
        impl, backend, mode = key
        one = single[key]["images_per_s"]
        if impl == "cnnstudio":
            label = f"ours `{backend}` {mode}{BACKEND_NOTES.get(backend, '')}"
            if "bucket_mb" in many:
                label += f", {many['bucket_mb']:g} MiB buckets"
        else:
            version = ".".join(many["version"].split(".")[:2])
            label = f"PyTorch {version} DDP, {PYTORCH_MODE_NAMES.get(mode, mode)}"
        rows.append([label, thousands(one), str(many["ranks"]), thousands(many["images_per_s"]),
                     f"{100 * many['images_per_s'] / (many['ranks'] * one):.1f}%"])
    return markdown(["implementation, mode", "1 GPU img/s", "GPUs", "img/s", "efficiency"], rows)


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


def layers_table(path, options):
    report = read_report(path)
    if "configurations" not in options or "category" not in options:
        raise TableError("layers needs configurations=BACKEND/PRECISION,... and category=CATEGORY")
    chosen = []
    for key in options["configurations"].split(","):
        backend, _, precision = key.partition("/")
        found = [c for c in ok_configurations(report)
                 if (c["backend"], c["precision"], c["ranks"]) == (backend, precision, 1)]
        if len(found) != 1:
            raise TableError(f"{path}: {len(found)} one-rank configurations of {key}, not one")
        chosen.append(found[0])
    names = [layer["name"] for layer in chosen[0]["layers"] if layer["category"] == options["category"]]
    rows, sums = [], [0.0] * len(chosen)
    for name in names:
        row = [name]
        for index, configuration in enumerate(chosen):
            layer = next((l for l in configuration["layers"] if l["name"] == name), None)
            if layer is None:
                raise TableError(f"{path}: {configuration['label']} has no layer {name}")
            row.append(f"{layer['forward_ms']:.2f} / {layer['backward_ms']:.2f}")
            sums[index] += layer["forward_ms"] + layer["backward_ms"]
        rows.append(row)
    rows.append(["sum (of the profiled step)"] + [f"{total:.2f} of {sum(c['breakdown_ms'].values()):.2f}" for total, c in zip(sums, chosen)])
    return markdown(["layer"] + [f"{c['label']}: forward / backward (ms)" for c in chosen], rows)


def live_table(path, options):
    rows = []
    for run in read_json_lines(path):
        ms = run["ms_per_frame"]
        rows.append([f"`{run['backend']}`, --threads {run['threads']}", f"{run['detect_every']}",
                     "on" if run["gradcam"] else "off", f"{run['frames']}", f"{run['faces_per_frame']:.2f}",
                     f"{run['fps']:.1f}", f"{run['cpu_ms_per_frame']:.1f}"] +
                    [f"{ms[stage]:.2f}" for stage in ("capture", "detect", "infer", "draw")])
    return markdown(["backend", "detect every", "Grad-CAM", "frames", "faces a frame", "FPS (wall)",
                     "CPU ms a frame", "capture", "detect", "infer", "draw (mean wall ms)"], rows)


AUGMENT_RUN = re.compile(r"^augment_bench: (?P<backend>\S+) \((?P<description>.*)\), batch (?P<batch>\d+) x .*, "
                         r"augment (?P<augment>\S+)$")
AUGMENT_TIME = re.compile(r"^\s*(?P<what>draws on the host|augmentImages)\s+(?P<ms>[\d.]+) ms per batch")


def augment_table(path, options):
    runs = []
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            run, time = AUGMENT_RUN.match(line.strip()), AUGMENT_TIME.match(line)
            if run:
                runs.append(dict(run.groupdict(), step=None))
            elif time and runs:
                runs[-1][time["what"]] = float(time["ms"])
            elif line.startswith("{") and runs:  # the training step measured after this run
                runs[-1]["step"] = json_line(path, number, line)
    rows = []
    for run in runs:
        step, share = "–", "–"
        if run["step"] is not None:
            step_ms = 1000 * int(run["batch"]) / run["step"]["images_per_s"]
            step = f"{step_ms:.2f} ms ({thousands(run['step']['images_per_s'])} img/s)"
            share = f"{100 * run['augmentImages'] / step_ms:.2f}%"
        rows.append([f"`{run['backend']}` ({run['description']})", f"`{run['augment']}`", run["batch"],
                     f"{run['draws on the host']:.4f}", f"{run['augmentImages']:.4f}", step, share])
    return markdown(["backend", "augment", "batch", "host draws (ms a batch)", "augmentImages (ms a batch)",
                     "training step, same command", "share of the step"], rows)


TRAINER_EPOCH = re.compile(r"^epoch (?P<epoch>\d+)/\d+  train loss .* (?P<rate>\d+) img/s")


def throughput_table(path, options):
    if "batches" not in options or "epochs" not in options:
        raise TableError("throughput needs batches=B,... and epochs=E,...")
    epochs = [int(e) for e in options["epochs"].split(",")]
    rows = []
    for batch in options["batches"].split(","):
        train_log = os.path.join(path, f"throughput-train-{batch}.log")
        rates = {}
        with open(train_log, encoding="utf-8") as stream:
            for line in stream:
                match = TRAINER_EPOCH.match(line)
                if match:
                    rates[int(match["epoch"])] = int(match["rate"])
        missing = [e for e in epochs if e not in rates]
        if missing:
            raise TableError(f"{train_log}: no epoch line for epoch {missing[0]}")
        bench = [r for r in read_json_lines(os.path.join(path, f"throughput-bench-{batch}.jsonl"))
                 if r.get("impl") == "cnnstudio"]
        if len(bench) != 1:
            raise TableError(f"{path}: throughput-bench-{batch}.jsonl holds {len(bench)} cnnstudio lines, not one")
        median = statistics.median(rates[e] for e in epochs)
        bench_rate = bench[0]["images_per_s"]
        rows.append([batch, " / ".join(thousands(rates[e]) for e in epochs), thousands(median),
                     thousands(bench_rate), f"{100 * median / bench_rate:.1f}%"])
    return markdown(["batch", f"trainer img/s, epochs {' / '.join(map(str, epochs))}", "trainer, median",
                     "cnnstudio-bench img/s", "trainer / bench"], rows)


KINDS = {"before-after": before_after_table, "builds": builds_table,
         "threads-side-by-side": threads_side_by_side_table, "conv-before-after": conv_before_after_table,
         "ours-vs-pytorch": ours_vs_pytorch_table, "scaling": scaling_table,
         "sweep": sweep_table,
         "breakdown": breakdown_table, "layers": layers_table, "live": live_table, "augment": augment_table,
         "throughput": throughput_table}


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


def default_documents():
    documents = [os.path.join(ROOT, "README.md")]
    for folder, subfolders, files in os.walk(os.path.join(ROOT, "docs")):
        subfolders[:] = sorted(d for d in subfolders if os.path.join(folder, d) != os.path.join(ROOT, "docs", "logs"))
        documents += [os.path.join(folder, name) for name in sorted(files) if name.endswith(".md")]
    return documents


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the documents are up to date")
    parser.add_argument("--doc", nargs="+", help="the documents (default: README.md and docs/**/*.md but docs/logs/)")
    parser.add_argument("--means", metavar="LOG", help="print LOG's builds table (JSON lines of bench-before-after)")
    parser.add_argument("--base", metavar="BUILD", help="with --means: the build the others are set against")
    arguments = parser.parse_args()
    if arguments.means:
        try:
            print("\n".join(builds_table(arguments.means, {"base": arguments.base} if arguments.base else {})))
        except (TableError, OSError) as error:
            print(f"measurements_tables: {error}", file=sys.stderr)
            return 2
        except KeyError as error:
            print(f"measurements_tables: {arguments.means}: a line lacks the field {error}", file=sys.stderr)
            return 2
        return 0
    stale = []
    for doc in arguments.doc or default_documents():
        with open(doc, encoding="utf-8") as stream:
            text = stream.read()
        try:
            new_text, changed = regenerate(text, os.path.relpath(doc, ROOT))
        except (TableError, OSError) as error:
            print(f"measurements_tables: {error}", file=sys.stderr)
            return 2
        if arguments.check:
            stale += changed
            continue
        if new_text != text:
            write_atomically(doc, new_text)
        for table in changed:
            print(f"regenerated {table}")
    for table in stale:
        print(f"measurements_tables: out of date: {table}; run tools/measurements_tables.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

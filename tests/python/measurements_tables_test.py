#!/usr/bin/env python3
"""tools/measurements_tables.py on documents and logs of its own: a sweep report's table with its
speedups and efficiency, ours beside PyTorch (also over thread counts), builds measured side by side, convolutions before and after, data-parallel scaling, per-layer times, live-demo, augmentation and trainer-throughput logs, a
stale table caught by --check and rewritten without it, and markers or logs it cannot use named
with the file and line."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "tools", "measurements_tables.py")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import measurements_tables  # noqa: E402


def configuration(label, backend, median, ranks=1, threads=0, status="ok"):
    return {"label": label, "backend": backend, "precision": "fp32", "threads": threads, "batch": 64,
            "ranks": ranks, "nodes": 1, "devices": "gpu" if backend in ("cuda", "cudnn") else "cpu",
            "status": status, "error": "" if status == "ok" else "no CUDA device found", "steps": 4, "warmup": 1,
            "repeats": 3, "reduced": backend == "cpu-ref", "reduced_reason": "",
            "train_images_per_second": {"median": median, "min": median * 0.9, "max": median * 1.1,
                                        "repeats": [median]},
            "inference_images_per_second": median * 3, "peak_memory_bytes": 64 * 2**20,
            "breakdown_ms": {k: 1.0 for k in measurements_tables.BREAKDOWN_CATEGORIES},
            "layers": [{"name": "conv1", "type": "Conv2D", "category": "convolution", "forward_ms": 0.25,
                        "backward_ms": 0.5},
                       {"name": "pool1", "type": "MaxPool2D", "category": "pooling", "forward_ms": 1, "backward_ms": 1},
                       {"name": "conv2", "type": "Conv2D", "category": "convolution", "forward_ms": 1.0,
                        "backward_ms": 2.0}]}


REPORT = {"schema": "cnnstudio-bench-report/1", "created": "2026-12-01T03:10:00Z",
          "configurations": [configuration("cpu-ref 1 thread", "cpu-ref", 10, threads=1),
                             configuration("cpu 4 threads", "cpu", 100, threads=4),
                             configuration("cudnn fp32", "cudnn", 5000),
                             configuration("cudnn fp32, 2 GPUs", "cudnn", 9000, ranks=2),
                             configuration("cuda fp32", "cuda", 0, status="failed")]}


class MeasurementsTables(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp()
        self.report = os.path.join(self.folder, "report.json")
        with open(self.report, "w") as stream:
            json.dump(REPORT, stream)
        self.doc = os.path.join(self.folder, "doc.md")

    def tearDown(self):
        shutil.rmtree(self.folder)

    def write_doc(self, body):
        with open(self.doc, "w") as stream:
            stream.write(f"# Doc\n\n<!-- table: sweep {self.report} -->\n{body}<!-- end table -->\nafter\n")

    def run_script(self, *arguments):
        return subprocess.run([sys.executable, SCRIPT, "--doc", self.doc, *arguments], capture_output=True, text=True)

    def test_sweep_table_has_speedups_and_efficiency(self):
        rows = measurements_tables.sweep_table(self.report, {})
        self.assertEqual(len(rows), 2 + 5)
        cudnn = rows[4]
        self.assertIn("| cudnn fp32 | 5,000 | 4,500 to 5,500 | 500.0× | 50.0× | 15,000 | 64 MiB | – |", cudnn)
        self.assertIn("| 90.0% |", rows[5])
        self.assertIn("5,000", rows[4])
        self.assertIn("10 (reduced)", rows[2])
        self.assertIn("failed: no CUDA device found", rows[6])

    def write(self, name, text):
        path = os.path.join(self.folder, name)
        with open(path, "w") as stream:
            stream.write(text)
        return path

    def test_layers_table_per_configuration(self):
        rows = measurements_tables.layers_table(self.report, {"configurations": "cudnn/fp32",
                                                              "category": "convolution"})
        self.assertEqual(rows[2], "| conv1 | 0.25 / 0.50 |")
        self.assertEqual(rows[4], "| sum (of the profiled step) | 3.75 of 9.00 |")
        with self.assertRaisesRegex(measurements_tables.TableError, "0 one-rank configurations of cuda/bf16"):
            measurements_tables.layers_table(self.report, {"configurations": "cuda/bf16", "category": "convolution"})

    def test_layers_table_reads_a_folder_of_reports_as_one(self):
        folder = os.path.join(self.folder, "reports")
        os.mkdir(folder)
        for name, backend in (("report_b.json", "cudnn"), ("report_a.json", "cuda")):
            with open(os.path.join(folder, name), "w") as stream:
                json.dump(dict(REPORT, configurations=[configuration(f"{backend} fp32", backend, 100)]), stream)
        rows = measurements_tables.layers_table(folder, {"configurations": "cuda/fp32,cudnn/fp32",
                                                         "category": "convolution"})
        self.assertEqual(rows[0], "| layer | cuda fp32: forward / backward (ms) | cudnn fp32: forward / backward (ms) |")
        self.assertEqual(len(measurements_tables.breakdown_table(folder, {})), 2 + 2)
        with self.assertRaisesRegex(measurements_tables.TableError, "no report"):
            measurements_tables.breakdown_table(tempfile.mkdtemp(dir=self.folder), {})

    def test_scaling_table_efficiency_per_implementation(self):
        lines = [{"impl": "cnnstudio", "backend": "cudnn", "mode": "bf16", "ranks": 1, "images_per_s": 1000.0},
                 {"impl": "cnnstudio", "backend": "cudnn", "mode": "bf16", "ranks": 2, "images_per_s": 1960.0},
                 {"impl": "cnnstudio", "backend": "cudnn", "mode": "bf16", "ranks": 2, "images_per_s": 1990.0,
                  "bucket_mb": 0.5},
                 {"impl": "pytorch", "version": "2.11.0+cu130", "mode": "bf16-cl", "ranks": 1, "images_per_s": 800.0},
                 {"impl": "pytorch", "version": "2.11.0+cu130", "mode": "bf16-cl", "ranks": 2, "images_per_s": 1200.0}]
        log = self.write("scaling.jsonl", "[1/1] cudnn bf16: ...\n" + "\n".join(map(json.dumps, lines)) + "\n")
        rows = measurements_tables.scaling_table(log, {})
        self.assertEqual(rows[2:], ["| ours `cudnn` bf16 | 1,000 | 2 | 1,960 | 98.0% |",
                                    "| ours `cudnn` bf16, 0.5 MiB buckets | 1,000 | 2 | 1,990 | 99.5% |",
                                    "| PyTorch 2.11 DDP, bf16 channels-last, eager | 800 | 2 | 1,200 | 75.0% |"])
        alone = self.write("alone.jsonl", json.dumps(lines[1]) + "\n")
        with self.assertRaisesRegex(measurements_tables.TableError, "cnnstudio cudnn bf16 on 2 GPUs has no one-GPU line"):
            measurements_tables.scaling_table(alone, {})

    def test_ours_vs_pytorch_leaves_out_earlier_builds_of_the_same_command(self):
        lines = [{"impl": "cnnstudio", "backend": "cuda", "mode": "fp32", "images_per_s": 1200.0},
                 {"impl": "cnnstudio", "backend": "cuda", "mode": "fp32", "images_per_s": 900.0, "build": "before"},
                 {"impl": "pytorch", "version": "2.11.0+cu130", "mode": "fp32", "images_per_s": 1000.0}]
        log = self.write("side_by_side.jsonl", "\n".join(map(json.dumps, lines)) + "\n")
        rows = measurements_tables.ours_vs_pytorch_table(log, {"pairs": "cuda/fp32:fp32"})
        self.assertEqual(rows[2:], ["| `cuda` fp32 (own kernels) | 1,200 | fp32 | 1,000 | 1.20× |"])

    def test_ours_vs_pytorch_takes_our_first_round(self):
        lines = [{"impl": "cnnstudio", "backend": "cuda", "mode": "bf16", "images_per_s": 1200.0},
                 {"impl": "pytorch", "version": "2.11.0+cu130", "mode": "bf16-cl", "images_per_s": 1000.0},
                 {"impl": "cnnstudio", "backend": "cuda", "mode": "bf16", "images_per_s": 1100.0, "round": 2}]
        log = self.write("side_by_side.jsonl", "\n".join(map(json.dumps, lines)) + "\n")
        rows = measurements_tables.ours_vs_pytorch_table(log, {"pairs": "cuda/bf16:bf16-cl"})
        self.assertEqual(rows[2:], ["| `cuda` bf16 (own kernels) | 1,200 | bf16 channels-last, eager | 1,000 | 1.20× |"])

    def test_before_after_takes_the_after_column_from_the_build_asked_for(self):
        def line(build, round_, images):
            return json.dumps({"build": build, "round": round_, "backend": "cudnn", "mode": "bf16",
                               "images_per_s": images})
        log = self.write("bench.jsonl", "\n".join([
            line("before", 1, 1000.0), line("current", 1, 1100.0), line("variantB", 1, 1200.0),
            line("before", 2, 1001.0), line("current", 2, 1101.0), line("variantB", 2, 1201.0)]) + "\n")
        self.assertEqual(measurements_tables.before_after_table(log, {})[2],
                         "| `cudnn` bf16 | 1,000 / 1,001 | 1,100 / 1,101 |")
        self.assertEqual(measurements_tables.before_after_table(log, {"after": "variantB"})[2],
                         "| `cudnn` bf16 | 1,000 / 1,001 | 1,200 / 1,201 |")
        with self.assertRaises(measurements_tables.TableError):
            measurements_tables.before_after_table(log, {"after": "variantZ"})

    def test_before_after_names_the_build_before_and_the_rounds_measured(self):
        log = self.write("bench.jsonl", "\n".join(json.dumps(
            {"build": build, "round": 1, "backend": "cuda", "mode": "bf16", "images_per_s": images})
            for build, images in (("main", 900.0), ("current", 950.0))) + "\n")
        rows = measurements_tables.before_after_table(log, {"before": "main"})
        self.assertEqual(rows[0], "| backend, mode | before (round 1) | after (round 1) |")
        self.assertEqual(rows[2], "| `cuda` bf16 | 900 | 950 |")
        with self.assertRaises(measurements_tables.TableError):
            measurements_tables.before_after_table(log, {})  # no build named "before"

    def test_builds_table_rounds_means_and_change_against_the_base(self):
        log = self.write("bench.jsonl", "\n".join(json.dumps(
            {"build": build, "round": round_, "backend": backend, "mode": "bf16", "images_per_s": images})
            for round_, build, backend, images in (
                (1, "main", "cudnn", 1000.0), (1, "main", "cuda", 500.0), (1, "current", "cudnn", 1100.0),
                (1, "current", "cuda", 490.0), (2, "main", "cudnn", 1002.0), (2, "main", "cuda", 502.0),
                (2, "current", "cudnn", 1104.0), (2, "current", "cuda", 492.0))) + "\n")
        rows = measurements_tables.builds_table(log, {"labels": "current:this_build"})
        self.assertEqual(rows[0], "| build | `cudnn` bf16, rounds 1-2 | mean | `cuda` bf16, rounds 1-2 | mean |")
        self.assertEqual(rows[2], "| main | 1,000 / 1,002 | 1,001 | 500 / 502 | 501 |")
        self.assertEqual(rows[3], "| this build | 1,100 / 1,104 | 1,102 (+10.1%) | 490 / 492 | 491 (-2.0%) |")
        rows = measurements_tables.builds_table(log, {"builds": "current,main", "base": "current"})
        self.assertEqual(rows[2], "| current | 1,100 / 1,104 | 1,102 | 490 / 492 | 491 |")
        self.assertEqual(rows[3], "| main | 1,000 / 1,002 | 1,001 (-9.2%) | 500 / 502 | 501 (+2.0%) |")
        with self.assertRaisesRegex(measurements_tables.TableError, "no lines of the build 'variantZ'"):
            measurements_tables.builds_table(log, {"base": "variantZ"})

    def test_means_prints_the_builds_table_of_a_log(self):
        log = self.write("bench.jsonl", "\n".join(json.dumps(
            {"build": build, "round": 1, "backend": "cuda", "mode": "fp32", "images_per_s": images})
            for build, images in (("before", 800.0), ("current", 1000.0))) + "\n")
        printed = subprocess.run([sys.executable, SCRIPT, "--means", log, "--base", "current"],
                                 capture_output=True, text=True)
        self.assertEqual(printed.returncode, 0, printed.stderr)
        self.assertIn("| before | 800 | 800 (-20.0%) |", printed.stdout)
        missing = subprocess.run([sys.executable, SCRIPT, "--means", log + ".absent"], capture_output=True, text=True)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("bench.jsonl.absent", missing.stderr)

    def test_threads_side_by_side_medians_and_ratios_to_pytorchs_fastest(self):
        lines = []
        for round_ in (1, 2, 3):
            for threads, scale in ((1, 1.0), (2, 1.8)):
                lines += [{"build": "before", "round": round_, "impl": "cnnstudio", "backend": "cpu", "mode": "fp32",
                           "threads": threads, "images_per_s": 90.0 * scale + round_},
                          {"build": "current", "round": round_, "impl": "cnnstudio", "backend": "cpu", "mode": "bf16",
                           "threads": threads, "images_per_s": 200.0 * scale + round_},
                          {"round": round_, "impl": "pytorch", "version": "2.11.0", "mode": "fp32",
                           "threads": threads, "images_per_s": 40.0 * scale},
                          {"round": round_, "impl": "pytorch", "version": "2.11.0", "mode": "bf16-cl",
                           "threads": threads, "images_per_s": 100.0 * scale + round_}]
        log = self.write("side_by_side.jsonl", "\n".join(map(json.dumps, lines)) + "\n")
        rows = measurements_tables.threads_side_by_side_table(log, {"labels": "before:start,current:this_build"})
        self.assertEqual(rows[0], "| implementation, mode | 1 thread, img/s | vs PyTorch's fastest | "
                                  "2 threads, img/s | vs PyTorch's fastest |")
        self.assertEqual(rows[2], "| ours `cpu` fp32, start | 92 | 0.90× | 164 | 0.90× |")
        self.assertEqual(rows[3], "| ours `cpu` bf16, this build | 202 | 1.98× | 362 | 1.99× |")
        self.assertEqual(rows[4], "| PyTorch fp32 | 40 | 0.39× | 72 | 0.40× |")
        self.assertEqual(rows[5], "| PyTorch bf16 channels-last | 102 | 1.00× | 182 | 1.00× |")
        unlabelled = measurements_tables.threads_side_by_side_table(log, {"labels": "before:start,current:"})
        self.assertEqual(unlabelled[3], "| ours `cpu` bf16 | 202 | 1.98× | 362 | 1.99× |")
        no_pytorch = self.write("ours_only.jsonl", "\n".join(json.dumps(line) for line in lines
                                                              if line["impl"] == "cnnstudio") + "\n")
        with self.assertRaisesRegex(measurements_tables.TableError, "no PyTorch line at 1 threads"):
            measurements_tables.threads_side_by_side_table(no_pytorch, {})

    def test_conv_before_after_means_of_the_rounds(self):
        def line(op, ms, tflops):
            return json.dumps({"backend": "cuda", "layer": "conv1_2", "op": op, "batch": 256, "ms": ms, "tflops": tflops})
        log = self.write("conv.log", "\n".join([
            "--- before build, round 1", line("forward", 2.0, 10.0), line("backward_data", 4.0, 5.0),
            "--- current build, round 1", line("forward", 1.0, 20.0), line("backward_data", 1.0, 20.0),
            "--- before build, round 2", line("forward", 2.2, 9.0), line("backward_data", 4.0, 5.0),
            "--- current build, round 2", line("forward", 1.2, 18.0), line("backward_data", 1.0, 20.0)]) + "\n")
        rows = measurements_tables.conv_before_after_table(log, {})
        self.assertEqual(rows[2:], ["| conv1_2 | forward | 2.10 | 1.10 | 1.91× | 19.0 |",
                                    "| conv1_2 | backward data | 4.00 | 1.00 | 4.00× | 20.0 |",
                                    "| sum |  | 6.10 | 2.10 | 2.90× |  |"])
        one_sided = self.write("one.log", "--- before build, round 1\n" + line("forward", 2.0, 10.0) + "\n")
        with self.assertRaisesRegex(measurements_tables.TableError, "conv1_2 forward is not measured with both builds"):
            measurements_tables.conv_before_after_table(one_sided, {})

    def test_conv_before_after_keeps_the_layers_asked_for_with_more_digits(self):
        def line(layer, ms):
            return json.dumps({"backend": "cudnn", "layer": layer, "op": "forward", "batch": 256, "ms": ms, "tflops": 1.0})
        log = self.write("conv.log", "\n".join([
            "--- before build, round 1", line("conv1_1", 0.1234), line("conv1_2", 0.5),
            "--- current build, round 1", line("conv1_1", 0.0617), line("conv1_2", 0.5)]) + "\n")
        rows = measurements_tables.conv_before_after_table(log, {"layers": "conv1_1", "digits": "3"})
        self.assertEqual(rows[2:], ["| conv1_1 | forward | 0.123 | 0.062 | 2.00× | 1.0 |",
                                    "| sum |  | 0.123 | 0.062 | 2.00× |  |"])
        with self.assertRaisesRegex(measurements_tables.TableError, "none of the layers conv9"):
            measurements_tables.conv_before_after_table(log, {"layers": "conv9"})

    def test_live_table_a_row_per_json_line(self):
        line = {"backend": "cpu", "threads": 1, "detect_every": 3, "gradcam": True, "frames": 295,
                "faces_per_frame": 1.0, "fps": 23.87, "cpu_ms_per_frame": 13.16,
                "ms_per_frame": {"capture": 5.155, "detect": 30.84, "infer": 3.32, "draw": 2.2}}
        log = self.write("live.txt", "# header\n$ cnnstudio-live ...\n23.9 FPS over 295 frames\n" + json.dumps(line) + "\n")
        rows = measurements_tables.live_table(log, {})
        self.assertEqual(rows[2:], ["| `cpu`, --threads 1 | 3 | on | 295 | 1.00 | 23.9 | 13.2 | 5.16 | 30.84 | 3.32 | 2.20 |"])

    def test_augment_table_with_the_step_of_the_same_command(self):
        log = self.write("augment.log", "\n".join([
            "augment_bench: cudnn (NVIDIA H200 (device 0), cuDNN 9.14.0, bf16), batch 256 x 1 x 48 x 48 (1.18 MB), augment crop=4,flip",
            "  draws on the host        0.0683 ms per batch",
            "  augmentImages            0.0200 ms per batch (126 GB/s of batch read + written)",
            json.dumps({"impl": "cnnstudio", "backend": "cudnn", "mode": "bf16", "images_per_s": 128000.0}),
            "augment_bench: cpu (oneDNN 2.6.3, 16 threads), batch 256 x 1 x 48 x 48 (2.36 MB), augment flip",
            "  draws on the host        0.0745 ms per batch",
            "  augmentImages            2.1821 ms per batch (2.16 GB/s of batch read + written)", ""]))
        rows = measurements_tables.augment_table(log, {})
        self.assertEqual(rows[2], "| `cudnn` (NVIDIA H200 (device 0), cuDNN 9.14.0, bf16) | `crop=4,flip` | 256 | 0.0683 | "
                                  "0.0200 | 2.00 ms (128,000 img/s) | 1.00% |")
        self.assertTrue(rows[3].endswith("| 2.1821 | – | – |"), rows[3])

    def test_throughput_table_median_of_the_epochs(self):
        epochs = [f"epoch {e}/3  train loss 0.5 accuracy 80.00%  validation loss 0.4 accuracy 85.00%  0.1 s, "
                  f"{rate} img/s, ETA 0:01" for e, rate in ((1, 900), (2, 1000), (3, 1100))]
        self.write("throughput-train-64.log", "epoch 1/3 step 50/70  loss 0.9  lr 0.05  13085 img/s\n" + "\n".join(epochs) + "\n")
        self.write("throughput-bench-64.jsonl", "table\n" + json.dumps({"impl": "cnnstudio", "images_per_s": 1250.5}) + "\n")
        rows = measurements_tables.throughput_table(self.folder, {"batches": "64", "epochs": "2,3"})
        self.assertEqual(rows[2], "| 64 | 1,000 / 1,100 | 1,050 | 1,251 | 84.0% |")
        with self.assertRaisesRegex(measurements_tables.TableError, "no epoch line for epoch 4"):
            measurements_tables.throughput_table(self.folder, {"batches": "64", "epochs": "4"})

    def test_stale_table_is_caught_then_rewritten(self):
        self.write_doc("| stale |\n")
        check = self.run_script("--check")
        self.assertEqual(check.returncode, 1, check.stderr)
        self.assertIn("out of date", check.stderr)
        self.assertIn("doc.md:3", check.stderr)
        self.assertEqual(self.run_script().returncode, 0)
        self.assertEqual(self.run_script("--check").returncode, 0)
        with open(self.doc) as stream:
            text = stream.read()
        self.assertIn("| cudnn fp32, 2 GPUs |", text)
        self.assertTrue(text.endswith("<!-- end table -->\nafter\n"), text)

    def test_missing_end_marker_and_log_are_named(self):
        with open(self.doc, "w") as stream:
            stream.write(f"<!-- table: sweep {self.report} -->\n| x |\n")
        result = self.run_script("--check")
        self.assertEqual(result.returncode, 2)
        self.assertIn("doc.md:1: the table marker has no '<!-- end table -->'", result.stderr)
        with open(self.doc, "w") as stream:
            stream.write("<!-- table: sweep docs/logs/absent.json -->\n<!-- end table -->\n")
        result = self.run_script("--check")
        self.assertEqual(result.returncode, 2)
        self.assertIn("the raw log docs/logs/absent.json is not in the repository", result.stderr)


if __name__ == "__main__":
    unittest.main()

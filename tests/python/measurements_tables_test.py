#!/usr/bin/env python3
"""tools/measurements_tables.py on documents and logs of its own: a sweep report's table with its
speedups and efficiency, a stale table caught by --check and rewritten without it, and markers or
logs it cannot use named with the file and line."""
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
            "breakdown_ms": {k: 1.0 for k in measurements_tables.BREAKDOWN_CATEGORIES}, "layers": []}


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

# Regenerates the README's table from the runs' events: python3 table.py
import glob, gzip, json, os
here = os.path.dirname(os.path.abspath(__file__))
print("| run | build | best PublicTest | epoch | 66% first reached | wall time |")
print("|---|---|---:|---:|---:|---:|")
for path in sorted(glob.glob(os.path.join(here, "*.events.jsonl.gz"))):
    name = os.path.basename(path)[:-len(".events.jsonl.gz")]
    run, build = name.rsplit("-", 1)
    finished = [json.loads(line) for line in gzip.open(path, "rt") if '"finished"' in line][-1]
    reached = finished["seconds_to_target"]
    print(f"| {run} | {build} | {100 * finished['best_validation_accuracy']:.2f}% | {finished['best_epoch']} | "
          f"{'never' if reached is None else f'{reached:.1f} s'} | {finished['wall_time_s']:.1f} s |")

"""The AI judges' bench on the code before and after, in one run.

Run: .venv/bin/python bench/judge_before_after.py --commit 668c26b [--repeat 2]
     [any judge_bench.py option, passed to both columns alike, e.g. --results 2000]

"Before" is a git worktree of the commit and "after" this checkout's working tree, each
running its own bench/judge_bench.py with its checkout as cwd and PYTHONPATH, as
before_after.py does (its worktree, its import check, its environment). Rounds alternate
(before, after, then after, before, ...); the table gives each column's median and the
ratio after/before of results/s (target >= 0.90: within 10 %). Each run's output goes to
/tmp/relevo-judge-before-after-<time>/. Exit status 0 when the target passes, 1 when it
fails, 2 when a run gave no figures.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from before_after import HERE, Column, before_worktree, check_imports, note, wait_for_database

RATE_MIN = 0.90
FIGURES = {  # name: pattern in judge_bench.py's output
    "results/s": r"calls \(\d+ answered\): (\d+) results/s",
    "seconds to store": r"^judged \d+ results \(\d+ failed\) in ([0-9.]+) s",
    "metrics exact after the last grade, s": r"^metrics scored ([0-9.]+) s after",
    "CPU per call, all parts, ms": r"^CPU until the metrics.*\(([0-9.]+) s in all\)",
    "machine speed (20M-step loop), s": r"^machine speed: .* in ([0-9.]+) s",
}


def run(column: Column, options: list[str], log: Path) -> dict[str, float]:
    wait_for_database("relevo_bench_judges", 600)
    command = [str(column.python), str(column.root / "bench" / "judge_bench.py"), *options]
    note(f"{column.name}: {' '.join(command[1:])}  [cwd {column.root}]")
    started = time.monotonic()
    result = subprocess.run(
        command,
        cwd=column.root,
        env=column.environment("judge"),
        capture_output=True,
        text=True,
        check=False,
    )
    log.write_text(f"$ {' '.join(command)}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}")
    figures = {}
    for name, pattern in FIGURES.items():
        if m := re.search(pattern, result.stdout, re.MULTILINE):
            figures[name] = float(m.group(1))
    calls = re.search(r"with (\d+) calls", result.stdout)
    if calls and "CPU per call, all parts, ms" in figures:
        figures["CPU per call, all parts, ms"] *= 1000 / int(calls.group(1))
    note(f"{column.name} done in {time.monotonic() - started:.0f} s: {figures or 'no figures'}")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", required=True)
    parser.add_argument("--repeat", type=int, default=2)
    args, options = parser.parse_known_args()
    root, sha = before_worktree(args.commit)
    python = HERE / ".venv" / "bin" / "python"
    columns = {"before": Column("before", root, python), "after": Column("after", HERE, python)}
    for column in columns.values():
        note(check_imports(column))
    logs = Path(f"/tmp/relevo-judge-before-after-{datetime.now():%Y%m%d-%H%M%S}")
    logs.mkdir()
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for round_ in range(1, args.repeat + 1):
        order = ["before", "after"] if round_ % 2 else ["after", "before"]
        for name in order:
            figures = run(columns[name], options, logs / f"{name}-{round_}.log")
            if "results/s" not in figures:
                return 2
            runs[name].append(figures)
    print(f"judge_bench.py {' '.join(options) or '(defaults)'}: before {sha[:7]}, after {HERE}")
    for name in ("before", "after"):
        print(f"  {name}, results/s by round: {[r['results/s'] for r in runs[name]]}")
    print(f"{'median of ' + str(args.repeat) + ' rounds':<40} | before |  after | after/before")
    medians = {
        name: {f: statistics.median(r[f] for r in rs if f in r) for f in FIGURES if f in rs[0]}
        for name, rs in runs.items()
    }
    for figure in FIGURES:
        before, after = (medians[name].get(figure) for name in ("before", "after"))
        shown_ratio = f" | {after / before:.2f}" if before and after else ""
        print(f"{figure:<40} | {before or 0:6.2f} | {after or 0:6.2f}{shown_ratio}")
    ratio = medians["after"]["results/s"] / medians["before"]["results/s"]
    passed = ratio >= RATE_MIN
    verdict = "PASS" if passed else "FAIL"
    print(f"results/s after/before {ratio:.2f}; target >= {RATE_MIN:.2f}   {verdict}")
    print(f"logs in {logs}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

"""Speed must hold: the same benches on the code before and after, in one run.

Run: .venv/bin/python bench/before_after.py [--commit 2b9eb0d] [--seconds 30] [--rate 200]
     [--warmup 5] [--repeat 1] [--only http,pipeline,queue]
     [--pipeline-keywords N] [--pipeline-small-keywords N] [--pipeline-grades N]
     [--queue-small-slots N] [--queue-big-slots N] [--queue-claims N]

"Before" is a commit (default 2b9eb0d), checked out into a git worktree under
/tmp/relevo-before-<sha> (made once, reused afterwards; the checkout here is never
touched: `git worktree add` only adds it to .git/worktrees). "After" is this checkout's
working tree as it is while the bench runs. Each column runs its own copy of the benches
(bench/ of the worktree for "before", bench/ here for "after"), because the benches call
the services by their names of that time, with this venv's interpreter, its cwd and
PYTHONPATH set to its own checkout: the benches put their checkout first on sys.path and
the venv's editable install of this checkout comes after sys.path, so "before" imports
the worktree's `apps` and `config`. A check before the first run prints where each
column's `apps`, `config` and `benchkit` come from and stops if one is not its own.
The worktree gets a `.venv` symlink to this venv: the HTTP bench starts gunicorn and
Celery from `<its checkout>/.venv/bin`, with cwd and PYTHONPATH of its checkout.

What runs, each in turn (one at a time: a column's bench drops and recreates only its
own database, relevo_bench_http with Redis db 13, relevo_bench, relevo_bench_queue, so
two columns never hold one at the same time):

1. grading_http_bench.py --worker during --rate R --seconds S --warmup W, before and after;
2. pipeline_bench.py (one-grade recompute medians, small and big evaluation);
3. queue_bench.py (claim medians with a pool of 10,000 and 1,000,000 slots, the ratio).

With --repeat N each bench runs N rounds, the order alternating (before, after, then
after, before, ...), so drift in the machine's speed hits both columns alike; the table
gives each column's median over its rounds, and each round's figures are listed above it.

Targets (after / before): throughput >= 0.8, p99 <= 1.25, one-grade recompute median
<= 1.25 (small and big evaluation), CPU per grade in all <= 1.15; and the claim ratio
1M/10k of "after" <= 1.5. "CPU per grade in all" is the HTTP bench's machine-wide figure
(every process's CPU in the window / grades, as the issue's 8.5 ms is); the sum of the
bench's own processes (load generator, web, Redis, worker, PostgreSQL backends) is shown
under it as a cross-check that leaves out other work on the machine.

Duration, estimated (the full sizes have not been run yet): about 10 minutes with the
defaults, each column taking about 1 to 1.5 min for the HTTP bench, 1.5 to 2 min for the
pipeline bench and 1 to 1.5 min for the queue bench; twice that with --repeat 2. Short
runs for checking the script: --seconds 8 --warmup 3 --pipeline-keywords 500
--pipeline-small-keywords 50 --pipeline-grades 40 --queue-small-slots 6000
--queue-big-slots 60000 --queue-claims 100 (2 minutes). The HTTP bench waits at most 10 s
for an answer: on a machine too busy for the rate offered, grades time out (errors) and
its database check fails on the grades the server took after the client gave up.

Every bench's stdout and stderr go to a log folder (/tmp/relevo-before-after-<time>/),
with the table (summary.txt) and the parsed figures (figures.json). Exit status 0 when
every target passes, 1 when one fails, 2 when a bench gave no figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent  # the "after" checkout
DEFAULT_COMMIT = "2b9eb0d"
SERVER_URL = "postgres://postgres@127.0.0.1:5432"
RUN_TIMEOUT_S = 3600  # one bench run; the HTTP bench alone may wait 600 s for the worker

# The database each bench drops and recreates (its own name, the same in both columns).
DATABASES = {
    "http": "relevo_bench_http",
    "pipeline": "relevo_bench",
    "queue": "relevo_bench_queue",
}
SCRIPTS = {
    "http": "grading_http_bench.py",
    "pipeline": "pipeline_bench.py",
    "queue": "queue_bench.py",
}

THROUGHPUT_MIN = 0.8
P99_MAX = 1.25
RECOMPUTE_MAX = 1.25
CLAIM_RATIO_MAX = 1.5
CPU_MAX = 1.15


def note(message: str) -> None:
    print(f"[before-after {datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


# --- the two checkouts ------------------------------------------------------------------


def git(*args: str, cwd: Path = HERE) -> str:
    return subprocess.run(
        ["git", "--no-optional-locks", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def before_worktree(commit: str) -> tuple[Path, str]:
    """The worktree of `commit` under /tmp, made if missing; (its path, the full sha)."""
    sha = git("rev-parse", "--verify", f"{commit}^{{commit}}")
    path = Path(f"/tmp/relevo-before-{sha[:7]}")
    if path.exists():
        head = git("rev-parse", "HEAD", cwd=path)
        if head != sha:
            raise SystemExit(f"{path} exists but is at {head[:7]}, not {sha[:7]}: remove it")
        changed = [
            line
            for line in git("status", "--porcelain", cwd=path).splitlines()
            if line[3:].rstrip("/") != ".venv"
        ]
        if changed:
            raise SystemExit(f"{path} has local changes ({len(changed)} files): remove it")
        note(f"reusing the worktree {path} at {sha[:7]}")
    else:
        note(f"git worktree add --detach {path} {sha[:7]}")
        git("worktree", "add", "--detach", str(path), sha)
    venv = path / ".venv"
    if venv.is_symlink() and not venv.exists():
        venv.unlink()  # pointing at a checkout since removed
    if not venv.exists():
        # The HTTP bench starts gunicorn and Celery from <its checkout>/.venv/bin.
        venv.symlink_to(HERE / ".venv")
    return path, sha


@dataclass(frozen=True)
class Column:
    name: str  # "before" or "after"
    root: Path
    python: Path

    def environment(self, bench: str) -> dict[str, str]:
        env = dict(os.environ)
        # This checkout first on sys.path, ahead of the venv's editable install of HERE.
        env["PYTHONPATH"] = str(self.root)
        env.pop("PYTHONHOME", None)
        env.pop("PYTHONSTARTUP", None)
        for name in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE"):
            env.pop(name, None)  # the benches set their own
        if bench != "http":
            env.pop("CELERY_BROKER_URL", None)  # these publish nothing (tasks patched out)
        env["PYTHONUNBUFFERED"] = "1"
        return env


def check_imports(column: Column) -> str:
    """Import the bench kit and the project as a bench of this column does; their files
    must be this column's. Returns a line saying where they came from."""
    probe = (
        "import sys, json; sys.path.insert(0, sys.argv[1]); import benchkit, apps, config; "
        "benchkit.use_database('relevo_bench_import_check'); import django; django.setup(); "
        "import apps.scoring.services; "
        "print(json.dumps([benchkit.__file__, apps.__file__, config.__file__, "
        "apps.scoring.services.__file__]))"
    )
    result = subprocess.run(
        [str(column.python), "-c", probe, str(column.root / "bench")],
        cwd=column.root,
        env=column.environment("http"),
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        raise SystemExit(f"{column.name}: importing the project failed:\n{result.stderr}")
    files = json.loads(result.stdout)
    wrong = [f for f in files if not Path(f).resolve().is_relative_to(column.root.resolve())]
    if wrong:
        raise SystemExit(f"{column.name}: imported from outside {column.root}: {wrong}")
    return f"{column.name}: benchkit, apps, config, apps.scoring.services from {column.root}"


# --- running a bench --------------------------------------------------------------------


def database_in_use(name: str) -> int:
    import psycopg

    with psycopg.connect(f"{SERVER_URL}/postgres", autocommit=True) as server:
        row = server.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [name]
        ).fetchone()
    return int(row[0]) if row else 0


def wait_for_database(name: str, wait_s: float) -> None:
    """Someone else's run on the bench's database would be cut off by its DROP ... FORCE
    (and would share the machine): wait until nobody is connected to it."""
    deadline = time.monotonic() + wait_s
    waited = False
    while (sessions := database_in_use(name)) and time.monotonic() < deadline:
        if not waited:
            note(f"{sessions} session(s) on {name}, another run? waiting up to {wait_s:.0f} s")
            waited = True
        time.sleep(5)
    if sessions:
        raise SystemExit(f"{name} still in use after {wait_s:.0f} s: is another bench running?")


def bench_arguments(bench: str, args: argparse.Namespace) -> list[str]:
    if bench == "http":
        return [
            "--worker",
            "during",
            "--rate",
            f"{args.rate:g}",
            "--seconds",
            f"{args.seconds:g}",
            "--warmup",
            f"{args.warmup:g}",
        ]
    options = {
        "pipeline": [
            ("--keywords", args.pipeline_keywords),
            ("--small-keywords", args.pipeline_small_keywords),
            ("--grades", args.pipeline_grades),
        ],
        "queue": [
            ("--small-slots", args.queue_small_slots),
            ("--big-slots", args.queue_big_slots),
            ("--claims", args.queue_claims),
        ],
    }[bench]
    return [part for flag, value in options if value is not None for part in (flag, str(value))]


@dataclass
class Run:
    bench: str
    column: str
    round: int
    seconds: float
    returncode: int
    figures: dict[str, float | str]
    log: str


def run_bench(bench: str, column: Column, round_: int, args: argparse.Namespace, logs: Path) -> Run:
    wait_for_database(DATABASES[bench], args.wait_busy)
    script = column.root / "bench" / SCRIPTS[bench]
    command = [str(column.python), str(script), *bench_arguments(bench, args)]
    log = logs / f"{bench}-{column.name}-{round_}.log"
    note(f"{bench} {column.name} (round {round_}): {' '.join(command[1:])}  [cwd {column.root}]")
    started = time.monotonic()
    result = subprocess.run(
        command,
        cwd=column.root,
        env=column.environment(bench),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    seconds = time.monotonic() - started
    log.write_text(
        f"$ cd {column.root} && PYTHONPATH={column.root} {' '.join(command)}\n"
        f"exit status {result.returncode}, {seconds:.1f} s\n"
        f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}"
    )
    figures = PARSERS[bench](result.stdout)
    missing = [name for name in REQUIRED[bench] if name not in figures]
    if missing:
        note(f"{bench} {column.name}: no {', '.join(missing)} in its output; see {log}")
        figures["missing"] = ", ".join(missing)
    note(f"{bench} {column.name} done in {seconds:.0f} s: {short(bench, figures)}")
    return Run(bench, column.name, round_, seconds, result.returncode, figures, str(log))


# --- reading the benches' reports -------------------------------------------------------

NUMBER = r"([0-9]+(?:\.[0-9]+)?)"


def search(pattern: str, text: str) -> re.Match | None:
    return re.search(pattern, text, re.MULTILINE)


def parse_http(out: str) -> dict[str, float | str]:
    figures: dict[str, float | str] = {}
    if m := search(rf"^grades in the window: (\d+)\s+->\s+{NUMBER} grades/s", out):
        figures["grades"] = float(m.group(1))
        figures["throughput"] = float(m.group(2))
    if m := search(rf"median {NUMBER} ms, p95 {NUMBER} ms, p99 {NUMBER} ms, max {NUMBER} ms", out):
        for name, value in zip(("p50", "p95", "p99", "max"), m.groups(), strict=True):
            figures[name] = float(value)
    if m := search(r"^errors: (\d+)", out):
        figures["errors"] = float(m.group(1))
    if m := search(r"^CPU ms per grade in the window: (.*?); server side", out):
        parts = {}
        for part in m.group(1).split(", "):
            name, _, value = part.rpartition(" ")
            parts[name] = float(value)
        for name, value in parts.items():
            figures[f"cpu {name}"] = value
        figures["cpu processes"] = sum(parts.values())
    if m := search(rf"^machine (\d+)% busy in the window, {NUMBER} ms of CPU per grade", out):
        figures["machine busy %"] = float(m.group(1))
        figures["cpu machine"] = float(m.group(2))
    if m := search(rf"^machine speed: .* in {NUMBER} s", out):
        figures["machine speed s"] = float(m.group(1))
    if m := search(rf"^load average before {NUMBER}", out):
        figures["load before"] = float(m.group(1))
    tasks = search(r"^recompute tasks published in the run: (\d+) .* for (\d+) grades", out)
    if tasks and int(tasks.group(2)):
        figures["tasks per 100 grades"] = 100.0 * int(tasks.group(1)) / int(tasks.group(2))
    for check in ("database", "metrics"):
        if m := search(rf"^{check} check: .*\s(PASS|FAIL)$", out):
            figures[f"{check} check"] = m.group(1)
    return figures


def parse_pipeline(out: str) -> dict[str, float | str]:
    figures: dict[str, float | str] = {}
    for label in ("big", "small"):
        if m := search(rf"recompute \({label}\): median {NUMBER} ms, p95 {NUMBER} ms", out):
            figures[f"recompute {label}"] = float(m.group(1))
            figures[f"recompute {label} p95"] = float(m.group(2))
        if m := search(rf"grade write \({label}[^)]*\): median {NUMBER} ms", out):
            figures[f"write {label}"] = float(m.group(1))
    if m := search(rf"^full recompute, big \((\d+) slots\): {NUMBER} s", out):
        figures["big slots"] = float(m.group(1))
        figures["full recompute big s"] = float(m.group(2))
    if m := search(r"statements for one grade \(big\): write (\d+), recompute (\d+)", out):
        figures["statements write"] = float(m.group(1))
        figures["statements recompute"] = float(m.group(2))
    if m := search(r"^correctness: .*: (OK|FAILED)$", out):
        figures["correctness"] = m.group(1)
    return figures


def parse_queue(out: str) -> dict[str, float | str]:
    figures: dict[str, float | str] = {}
    for label in ("small", "big"):
        if m := search(
            rf"^pool {label}: (\d+) slots; claim median {NUMBER} ms, p95 {NUMBER} ms, "
            rf"p99 {NUMBER} ms",
            out,
        ):
            figures[f"pool {label} slots"] = float(m.group(1))
            figures[f"claim {label}"] = float(m.group(2))
            figures[f"claim {label} p99"] = float(m.group(4))
    if m := search(rf"^ratio big/small of the claim medians: {NUMBER}", out):
        figures["claim ratio"] = float(m.group(1))
    return figures


PARSERS = {"http": parse_http, "pipeline": parse_pipeline, "queue": parse_queue}
REQUIRED = {
    "http": ["throughput", "p99", "errors", "cpu machine", "cpu processes"],
    "pipeline": ["recompute big", "recompute small"],
    "queue": ["claim small", "claim big", "claim ratio"],
}


def short(bench: str, f: dict[str, float | str]) -> str:
    def g(name: str, spec: str = ".1f") -> str:
        value = f.get(name)
        return format(value, spec) if isinstance(value, float) else "?"

    if bench == "http":
        return (
            f"{g('throughput')} grades/s, p50 {g('p50')} p99 {g('p99')} ms, "
            f"{g('errors', '.0f')} errors, CPU/grade machine {g('cpu machine', '.2f')} "
            f"(web {g('cpu web', '.2f')}, worker {g('cpu worker', '.2f')}, "
            f"PostgreSQL {g('cpu PostgreSQL', '.2f')}), machine {g('machine busy %', '.0f')} % busy"
        )
    if bench == "pipeline":
        return (
            f"recompute median big {g('recompute big')} ms, small {g('recompute small')} ms; "
            f"write big {g('write big')} ms; full recompute {g('full recompute big s', '.2f')} s"
        )
    return (
        f"claim median 10k {g('claim small', '.2f')} ms, 1M {g('claim big', '.2f')} ms, "
        f"ratio {g('claim ratio', '.2f')}"
    )


# --- the table --------------------------------------------------------------------------


def column_median(runs: list[Run], bench: str, column: str, name: str) -> float | None:
    values = [
        value
        for run in runs
        if run.bench == bench
        and run.column == column
        and isinstance(value := run.figures.get(name), float)
    ]
    return statistics.median(values) if values else None


@dataclass
class Row:
    label: str
    before: float | None
    after: float | None
    spec: str
    target: str = ""  # e.g. ">= 0.8" on after/before, or "after <= 1.5"
    check: str | None = None  # "ratio>=", "ratio<=", "after<=", "after=="
    limit: float | None = None
    counts: bool = True  # whether its verdict counts for the overall one
    verdict: str = field(default="", init=False)

    @property
    def ratio(self) -> float | None:
        if self.before is None or self.after is None or self.before == 0:
            return None
        return self.after / self.before

    def judge(self) -> str:
        if self.check is None or self.limit is None:
            return ""
        value = self.after if self.check.startswith("after") else self.ratio
        if value is None:
            return "n/a"
        ok = {
            "ratio>=": value >= self.limit,
            "ratio<=": value <= self.limit,
            "after<=": value <= self.limit,
            "after==": value == self.limit,
        }[self.check]
        return "PASS" if ok else "FAIL"


def rows_for(runs: list[Run], cpu_basis: str) -> list[Row]:
    def m(bench: str, column: str, name: str) -> float | None:
        return column_median(runs, bench, column, name)

    def pair(bench: str, name: str) -> tuple[float | None, float | None]:
        return m(bench, "before", name), m(bench, "after", name)

    rows: list[Row] = []
    benches = {run.bench for run in runs}
    if "http" in benches:
        rows += [
            Row(
                "HTTP throughput, grades/s",
                *pair("http", "throughput"),
                ".1f",
                f">= {THROUGHPUT_MIN}",
                "ratio>=",
                THROUGHPUT_MIN,
            ),
            Row(
                "HTTP p99 latency, ms",
                *pair("http", "p99"),
                ".1f",
                f"<= {P99_MAX}",
                "ratio<=",
                P99_MAX,
            ),
            Row("HTTP p50 latency, ms", *pair("http", "p50"), ".1f"),
            Row("HTTP errors", *pair("http", "errors"), ".0f", "after = 0", "after==", 0.0),
        ]
        machine = Row(
            "CPU ms per grade in all (machine)",
            *pair("http", "cpu machine"),
            ".2f",
            f"<= {CPU_MAX}",
            "ratio<=",
            CPU_MAX,
            counts=cpu_basis == "machine",
        )
        processes = Row(
            "CPU ms per grade, bench processes",
            *pair("http", "cpu processes"),
            ".2f",
            f"<= {CPU_MAX}",
            "ratio<=",
            CPU_MAX,
            counts=cpu_basis == "processes",
        )
        rows += [machine, processes]
        for name in ("web", "worker", "PostgreSQL", "load generator", "Redis"):
            rows.append(Row(f"  of which {name}", *pair("http", f"cpu {name}"), ".2f"))
        rows += [
            Row("recompute tasks per 100 grades", *pair("http", "tasks per 100 grades"), ".1f"),
            Row("machine busy in the window, %", *pair("http", "machine busy %"), ".0f"),
            Row("machine speed (20M-step loop), s", *pair("http", "machine speed s"), ".2f"),
        ]
    if "pipeline" in benches:
        rows += [
            Row(
                "recompute one grade, small eval, median ms",
                *pair("pipeline", "recompute small"),
                ".1f",
                f"<= {RECOMPUTE_MAX}",
                "ratio<=",
                RECOMPUTE_MAX,
            ),
            Row(
                "recompute one grade, big eval, median ms",
                *pair("pipeline", "recompute big"),
                ".1f",
                f"<= {RECOMPUTE_MAX}",
                "ratio<=",
                RECOMPUTE_MAX,
            ),
            Row("grade write, big eval, median ms", *pair("pipeline", "write big"), ".1f"),
            Row("full recompute, big eval, s", *pair("pipeline", "full recompute big s"), ".2f"),
            Row("statements per grade: write", *pair("pipeline", "statements write"), ".0f"),
            Row(
                "statements per grade: recompute", *pair("pipeline", "statements recompute"), ".0f"
            ),
        ]
    if "queue" in benches:
        rows += [
            Row("claim median, small pool, ms", *pair("queue", "claim small"), ".2f"),
            Row("claim median, big pool, ms", *pair("queue", "claim big"), ".2f"),
            Row(
                "claim ratio big/small (1M/10k)",
                *pair("queue", "claim ratio"),
                ".2f",
                f"after <= {CLAIM_RATIO_MAX}",
                "after<=",
                CLAIM_RATIO_MAX,
            ),
        ]
    for row in rows:
        row.verdict = row.judge()
        if row.verdict and not row.counts:
            row.verdict = f"({row.verdict})"
    return rows


def table(rows: list[Row]) -> str:
    def fmt(value: float | None, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    lines = [["figure", "before", "after", "after/before", "target", "verdict"]]
    for row in rows:
        ratio = row.ratio
        lines.append(
            [
                row.label,
                fmt(row.before, row.spec),
                fmt(row.after, row.spec),
                "-" if ratio is None else f"{ratio:.2f}",
                row.target,
                row.verdict,
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for number, line in enumerate(lines):
        cells = [
            cell.ljust(width) if i == 0 else cell.rjust(width) if i < 4 else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        out.append(" | ".join(cells).rstrip())
        if number == 0:
            out.append("-+-".join("-" * width for width in widths))
    return "\n".join(out)


# --- main -------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default=DEFAULT_COMMIT, help="the code before")
    parser.add_argument("--seconds", type=float, default=30.0, help="HTTP bench's window")
    parser.add_argument("--rate", type=float, default=200.0, help="HTTP grades/s offered")
    parser.add_argument("--warmup", type=float, default=5.0, help="HTTP bench's warm-up")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of each bench")
    parser.add_argument(
        "--only", default="http,pipeline,queue", help="benches to run, comma-separated"
    )
    parser.add_argument("--pipeline-keywords", type=int, help="big evaluation (default 10000)")
    parser.add_argument("--pipeline-small-keywords", type=int, help="small one (default 100)")
    parser.add_argument("--pipeline-grades", type=int, help="single grades (default 200)")
    parser.add_argument("--queue-small-slots", type=int, help="default 10000")
    parser.add_argument("--queue-big-slots", type=int, help="default 1000000")
    parser.add_argument("--queue-claims", type=int, help="claims per pool (default 600)")
    parser.add_argument(
        "--cpu-basis",
        choices=["machine", "processes"],
        default="machine",
        help="which CPU-per-grade figure the overall verdict uses: the whole machine's "
        "(the issue's 'in all') or the sum of the bench's own processes",
    )
    parser.add_argument(
        "--wait-busy",
        type=float,
        default=600.0,
        help="seconds to wait for someone else's session on a bench database to end",
    )
    parser.add_argument(
        "--logs", type=Path, help="log folder (default /tmp/relevo-before-after-<time>)"
    )
    args = parser.parse_args()
    benches = [b.strip() for b in args.only.split(",") if b.strip()]
    unknown = [b for b in benches if b not in SCRIPTS]
    if unknown:
        parser.error(f"unknown bench {unknown}; choose from {sorted(SCRIPTS)}")

    logs = args.logs or Path(f"/tmp/relevo-before-after-{datetime.now():%Y%m%d-%H%M%S}")
    logs.mkdir(parents=True, exist_ok=True)
    python = HERE / ".venv" / "bin" / "python"
    worktree, sha = before_worktree(args.commit)
    columns = {
        "before": Column("before", worktree, python),
        "after": Column("after", HERE, python),
    }
    after_head = git("rev-parse", "HEAD")
    dirty = len(git("status", "--porcelain", "--untracked-files=no").splitlines())
    provenance = [
        f"before: {sha[:7]} ({git('log', '-1', '--format=%s', sha)[:70]}) in {worktree}",
        f"after: working tree of {HERE} (HEAD {after_head[:7]}, "
        f"{dirty} tracked files changed against it when the run began)",
    ]
    for column in columns.values():
        provenance.append(check_imports(column))
    for line in provenance:
        note(line)

    started = time.monotonic()
    runs: list[Run] = []
    for bench in benches:
        for round_ in range(1, args.repeat + 1):
            order = ("before", "after") if round_ % 2 else ("after", "before")
            for name in order:
                runs.append(run_bench(bench, columns[name], round_, args, logs))
    elapsed = time.monotonic() - started

    rows = rows_for(runs, args.cpu_basis)
    broken = [run for run in runs if "missing" in run.figures]
    counted = [row for row in rows if row.counts and row.verdict in ("PASS", "FAIL", "n/a")]
    passed = not broken and all(row.verdict == "PASS" for row in counted)
    checks = []
    for run in runs:
        for name in ("database check", "metrics check", "correctness"):
            if run.figures.get(name) not in (None, "PASS", "OK"):
                checks.append(
                    f"{run.bench} {run.column} round {run.round}: {name} {run.figures[name]}"
                )
    passed = passed and not checks

    report = [
        "Speed must hold: before / after in one run",
        *provenance,
        f"HTTP bench: --worker during --rate {args.rate:g} --seconds {args.seconds:g} "
        f"--warmup {args.warmup:g}; pipeline bench: "
        f"{' '.join(bench_arguments('pipeline', args)) or 'defaults'}; queue bench: "
        f"{' '.join(bench_arguments('queue', args)) or 'defaults'}; "
        f"{args.repeat} round(s) each, order alternating",
        "",
        "each run:",
        *(
            f"  {run.bench:8} {run.column:6} round {run.round}: {short(run.bench, run.figures)}"
            f"  [{run.seconds:.0f} s]"
            for run in runs
        ),
        "",
        f"medians over the rounds ({args.repeat} per column):",
        table(rows),
        "",
        *(f"check failed: {line}" for line in checks),
        *(f"no figures: {run.bench} {run.column} round {run.round} ({run.log})" for run in broken),
        f"CPU per grade in all judged on: {args.cpu_basis} (the other row in brackets: "
        "a cross-check, not counted)",
        f"took {elapsed / 60:.1f} min; logs in {logs}",
        f"overall: {'PASS' if passed else 'FAIL'}",
    ]
    text = "\n".join(report)
    print(text)
    (logs / "summary.txt").write_text(text + "\n")
    (logs / "figures.json").write_text(
        json.dumps([run.__dict__ for run in runs], indent=1, default=str) + "\n"
    )
    if broken:
        return 2
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

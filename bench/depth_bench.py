"""Benchmark scoring and storing TREC-deep result lists: 10,000 keywords x 1,000 results.

Run: .venv/bin/python bench/depth_bench.py [--keywords N] [--storage-keywords N]
     [--depth D] [--shallow D] [--repeats R] [--skip-storage] [--keep-database]
     [--compare-with DIR]

Data: every keyword has `depth` results with one slot each, graded 0..3 as TREC pools
judge them: the top POOL_DEPTH results mostly judged, deeper ones sparsely (about a sixth
of all results judged), relevance falling with rank, plus some judged documents the run
did not retrieve (passed to the engine as `unretrieved=`, as the trec profile counts them
in R and in the ideal ranking). Unjudged results are empty slots (None). The same data
feeds every phase; it is generated per keyword from the seed, so it is never held twice.

1. Engine: `score_keywords_batch` (profile trec, METRICS) from grade lists to per-keyword
   floats, in batches of KEYWORDS_PER_BATCH (as recompute_evaluation scores) and all
   keywords in one call; at `depth` and at `shallow` (the same keywords and qrels with a
   run cut to `shallow` results: the judged results below it become unretrieved
   judgements), best and median of `repeats`. Checked (not timed) against score_keyword
   and against pytrec_eval on a sample.
2. Storage, on PostgreSQL in a database of its own (relevo_bench_depth): the data written
   as a TREC run + qrels and imported by `manage.py import_trec` in a process of its own,
   as a lead imports a large run (parse, score, COPY, commit; its seconds and peak
   resident memory); with --compare-with DIR, first by the checkout in DIR too, on the
   same files in the same run, for the ratios. Then `recompute_evaluation` twice: right
   after the import (every keyword already scored at its version: it reads and scores
   all, stores nothing) and after every keyword was marked changed (it reads, scores and
   stores all). Each phase's seconds, snapshots/s and peak resident memory; the stored
   values are checked against the engine's.

Celery publishes to Redis db REDIS_DB (the bench's own), as deployed; neither phase is
expected to publish, and the bench says how many it did.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import benchkit
from benchkit import SERVER_URL, high_water_mark, machine_speed, progress_note, setup_django

# Settings read the environment once, at django.setup(): set before anything else.
benchkit.use_database("relevo_bench_depth")
REDIS_DB = 11
REDIS_URL = f"redis://127.0.0.1:6379/{REDIS_DB}"
os.environ["CELERY_BROKER_URL"] = REDIS_URL

import numpy as np  # noqa: E402

from apps.engine import WHOLE_LIST, score_keyword, score_keywords_batch  # noqa: E402

METRICS = [
    ("ap", WHOLE_LIST),
    ("ndcg", WHOLE_LIST),
    ("rr", WHOLE_LIST),
    ("precision", 10),
    ("precision", 1000),
    ("ap", 1000),
    ("ndcg", 10),
    ("ndcg", 1000),
    ("recall", 1000),
]
# The trec_eval measure each metric must equal in profile trec.
TREC_MEASURES = {
    ("ap", WHOLE_LIST): "map",
    ("ndcg", WHOLE_LIST): "ndcg",
    ("rr", WHOLE_LIST): "recip_rank",
    ("precision", 10): "P_10",
    ("precision", 1000): "P_1000",
    ("ap", 1000): "map_cut_1000",
    ("ndcg", 10): "ndcg_cut_10",
    ("ndcg", 1000): "ndcg_cut_1000",
    ("recall", 1000): "recall_1000",
}
TOLERANCE = 1e-9

# The shape of the judgements (see make_keyword).
POOL_DEPTH = 20  # TREC pools judge the top of every run: 90 % of these are judged
DEEP_JUDGED = (0.05, 0.25)  # below the pool, each keyword's share of judged results
UNRETRIEVED_MEAN = 50  # judged documents the run did not retrieve, per keyword
UNJUDGED = -1


# --- data -------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeywordData:
    """One keyword: its results' grades in rank order (UNJUDGED = no qrels line) and the
    grades of its judged documents that are not among the results."""

    results: np.ndarray  # int8, one per rank
    unretrieved: list[int]


def make_keyword(seed: int, number: int, depth: int) -> KeywordData:
    """Keyword `number`'s data, the same whenever asked for (seeded per keyword)."""
    rng = np.random.default_rng([seed, number])
    ranks = np.arange(1, depth + 1)
    judged_share = np.where(ranks <= POOL_DEPTH, 0.9, rng.uniform(*DEEP_JUDGED))
    judged = rng.random(depth) < judged_share
    # A judged result is relevant with a chance falling from 0.6 at the top to 0.08 at
    # rank 1,000; a relevant one is 1, 2 or 3, the higher grades rarer.
    relevant = rng.random(depth) < 0.6 / np.sqrt(1 + ranks / 20)
    grades = np.where(relevant, rng.choice([1, 2, 3], size=depth, p=[0.5, 0.3, 0.2]), 0)
    results = np.where(judged, grades, UNJUDGED).astype(np.int8)
    unretrieved_count = int(rng.integers(0, 2 * UNRETRIEVED_MEAN + 1))
    unretrieved = rng.choice([0, 1, 2, 3], size=unretrieved_count, p=[0.8, 0.1, 0.06, 0.04])
    return KeywordData(results, unretrieved.tolist())


def make_data(seed: int, keywords: int, depth: int) -> list[KeywordData]:
    # int8 codes: 10 million results take 10 MB here.
    return [make_keyword(seed, number, depth) for number in range(keywords)]


# One shared one-slot list per grade: 10 million snapshots then cost a pointer each in
# the engine's input, not a list each (the engine only reads them).
SLOT_LISTS: dict[int, list[int | None]] = {UNJUDGED: [None], 0: [0], 1: [1], 2: [2], 3: [3]}


def engine_input(
    data: list[KeywordData], depth: int
) -> tuple[list[list[list[int | None]]], list[list[int]]]:
    """What score_keywords_batch takes for a run cut to `depth` results: per keyword, per
    snapshot, the slot grades; and per keyword the unretrieved judgements, which then
    include the judged results below the cut (the qrels do not change with the run)."""
    keywords = []
    unretrieved = []
    for keyword in data:
        codes = keyword.results.tolist()
        keywords.append([SLOT_LISTS[code] for code in codes[:depth]])
        below = [code for code in codes[depth:] if code != UNJUDGED]
        unretrieved.append(keyword.unretrieved + below)
    return keywords, unretrieved


def describe_data(data: list[KeywordData], depth: int) -> str:
    results = len(data) * depth
    judged = sum(int((k.results != UNJUDGED).sum()) for k in data)
    relevant = sum(int((k.results > 0).sum()) for k in data)
    unretrieved = sum(len(k.unretrieved) for k in data)
    return (
        f"data: {len(data)} keywords x {depth} results = {results} snapshots, one slot, "
        f"graded 0..3; judged {judged} ({judged / results:.1%}), relevant {relevant} "
        f"({relevant / results:.1%}); judged but not retrieved {unretrieved} "
        f"({unretrieved / len(data):.1f} per keyword)"
    )


# --- measuring --------------------------------------------------------------------------


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_SIZE


PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


class PeakMemory:
    """This process's peak resident memory while the block runs, sampled every 0.2 s
    (ru_maxrss would be the whole run's peak, and the phases differ)."""

    def __enter__(self) -> PeakMemory:
        self.start = self.peak = rss_bytes()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._done.wait(0.2):
            self.peak = max(self.peak, rss_bytes())

    def __exit__(self, *exc_info: object) -> None:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())

    def describe(self) -> str:
        return f"peak RSS {self.peak / 2**30:.2f} GiB (at start {self.start / 2**30:.2f})"


def repeated(function: Callable[[], float], repeats: int) -> tuple[float, float]:
    """(best, median) seconds of `repeats` runs of a function that returns its seconds."""
    seconds = [function() for _ in range(repeats)]
    return min(seconds), statistics.median(seconds)


# --- 1. engine --------------------------------------------------------------------------


def score_seconds(keywords, unretrieved, batch_size: int) -> float:
    """Seconds to score every keyword in batches of batch_size, from grade lists to
    per-keyword floats (the input is built before; only the engine is timed)."""
    total = 0.0
    for first in range(0, len(keywords), batch_size):
        batch = keywords[first : first + batch_size]
        batch_unretrieved = unretrieved[first : first + batch_size]
        start = time.perf_counter()
        scores = score_keywords_batch(
            batch, scale="graded", metrics=METRICS, profile="trec", unretrieved=batch_unretrieved
        )
        for request in METRICS:
            scores.metric_values(*request)
        total += time.perf_counter() - start
    return total


def engine_values(keywords, unretrieved, batch_size: int) -> dict[tuple[str, int], list]:
    """Every metric's per-keyword values, scored in batches as the app does."""
    values: dict[tuple[str, int], list] = {request: [] for request in METRICS}
    for first in range(0, len(keywords), batch_size):
        scores = score_keywords_batch(
            keywords[first : first + batch_size],
            scale="graded",
            metrics=METRICS,
            profile="trec",
            unretrieved=unretrieved[first : first + batch_size],
        )
        for request in METRICS:
            values[request] += scores.metric_values(*request)
    return values


def bench_engine(data, depth: int, batch_size: int, repeats: int) -> dict[str, float]:
    """Best and median seconds, batched and whole, at one depth; prints as it goes."""
    keywords, unretrieved = engine_input(data, depth)
    snapshots = len(data) * depth
    score_seconds(keywords[:batch_size], unretrieved[:batch_size], batch_size)  # warm-up
    figures = {}
    for label, size in ((f"batches of {batch_size}", batch_size), ("one call", len(data))):
        with PeakMemory() as memory:
            best, median = repeated(partial(score_seconds, keywords, unretrieved, size), repeats)
        figures[label] = best
        print(
            f"  depth {depth:>4}, {label}: {best:.2f} s (median {median:.2f} of {repeats}) = "
            f"{len(data) / best:,.0f} keywords/s, {snapshots / best / 1e6:.2f} M snapshots/s; "
            f"{memory.describe()}",
            flush=True,
        )
    return figures


def batch_matches_single_keyword_path(data, depth: int, sample: int) -> bool:
    """The batch path must give exactly (bit for bit) what score_keyword gives."""
    keywords, unretrieved = engine_input(data[:sample], depth)
    batch = score_keywords_batch(
        keywords, scale="graded", metrics=METRICS, profile="trec", unretrieved=unretrieved
    )
    for index, (snapshots, judged_elsewhere) in enumerate(zip(keywords, unretrieved, strict=True)):
        single = score_keyword(
            snapshots,
            scale="graded",
            metrics=METRICS,
            profile="trec",
            unretrieved=judged_elsewhere,
        )
        if single.metrics != batch.keyword_score(index).metrics:
            return False
    return True


def pytrec_eval_problems(data, depth: int, values, sample: int) -> list[str]:
    """Where Relevo's values differ from trec_eval's (via pytrec_eval) on the first
    `sample` keywords: the same run and qrels as the storage phase writes."""
    import pytrec_eval

    qrels, run = {}, {}
    for number, keyword in enumerate(data[:sample]):
        qid = f"q{number}"
        judged = dict(judged_lines(number, keyword))
        qrels[qid] = judged
        run[qid] = {docno(number, rank): float(depth - rank + 1) for rank in range(1, depth + 1)}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES.values()))
    measured = evaluator.evaluate(run)
    problems = []
    for number in range(min(sample, len(data))):
        for request, measure in TREC_MEASURES.items():
            ours, theirs = values[request][number], measured[f"q{number}"][measure]
            if ours is None or not math.isclose(ours, theirs, rel_tol=0, abs_tol=TOLERANCE):
                problems.append(f"q{number} {request}: relevo {ours} vs {measure} {theirs}")
    return problems


def run_engine_phase(data, depth: int, shallow: int, repeats: int, batch_size: int):
    """Times the engine at both depths and checks it; returns the values at `depth`."""
    print(f"engine: score_keywords_batch, profile trec, {len(METRICS)} metrics")
    deep = bench_engine(data, depth, batch_size, repeats)
    short = bench_engine(data, shallow, batch_size, repeats)
    for label in deep:
        print(
            f"  ratio depth {depth} / depth {shallow}, {label}: {deep[label] / short[label]:.1f}"
            f"  ({depth / shallow:.0f}x the snapshots)"
        )
    keywords, unretrieved = engine_input(data, depth)
    values = engine_values(keywords, unretrieved, batch_size)
    del keywords, unretrieved
    sample = min(len(data), 20)
    same = batch_matches_single_keyword_path(data, depth, sample)
    print(
        f"  batch path == score_keyword (exact) on the first {sample} keywords at depth "
        f"{depth}: {'OK' if same else 'FAILED'}"
    )
    sample = min(len(data), 200)
    problems = pytrec_eval_problems(data, depth, values, sample)
    print(
        f"  agreement with pytrec_eval within {TOLERANCE:g} on the first {sample} keywords "
        f"({', '.join(TREC_MEASURES.values())}): "
        f"{'OK' if not problems else 'FAILED'}; {len(problems)} disagreements"
    )
    for problem in problems[:10]:
        print("    " + problem)
    return values, same and not problems


# --- 2. storage -------------------------------------------------------------------------


def docno(number: int, rank: int) -> str:
    return f"q{number}-d{rank}"


def judged_lines(number: int, keyword: KeywordData) -> Iterator[tuple[str, int]]:
    """(docno, grade) of every qrels line of a keyword: judged results, then the judged
    documents the run did not retrieve."""
    for rank, grade in enumerate(keyword.results.tolist(), start=1):
        if grade != UNJUDGED:
            yield docno(number, rank), grade
    for index, grade in enumerate(keyword.unretrieved):
        yield f"q{number}-u{index}", grade


def write_trec_files(data, depth: int, folder: Path) -> tuple[Path, Path, int]:
    """The run (scores descending with rank, so trec_eval's order is the rank order) and
    the qrels; returns their paths and the qrels' line count."""
    run, qrels = folder / "depth.run", folder / "depth.qrels"
    qrels_lines = 0
    with run.open("w") as run_file, qrels.open("w") as qrels_file:
        for number, keyword in enumerate(data):
            run_file.write(
                "".join(
                    f"q{number} Q0 {docno(number, rank)} {rank} {depth - rank + 1} depth\n"
                    for rank in range(1, depth + 1)
                )
            )
            lines = [f"q{number} 0 {doc} {grade}\n" for doc, grade in judged_lines(number, keyword)]
            qrels_file.write("".join(lines))
            qrels_lines += len(lines)
    return run, qrels, qrels_lines


def metrics_argument() -> str:
    """METRICS as import_trec's --metrics reads them: "ap,ndcg,...,precision@10"."""
    return ",".join(name if k == WHOLE_LIST else f"{name}@{k}" for name, k in METRICS)


@dataclass(frozen=True)
class ChildImport:
    seconds: float
    peak_rss: int  # bytes: the child's own high-water mark (VmHWM)
    evaluation_id: int
    said: str  # what the command said it did (its stderr)


def import_in_child(code: Path, team_id: int, run: Path, qrels: Path, name: str) -> ChildImport:
    """`manage.py import_trec` of the code in `code`, in a process of its own, as a lead
    runs a large import: its seconds and its peak resident memory."""
    command = [
        sys.executable, "manage.py", "import_trec", "--team", str(team_id),
        "--run", str(run), "--qrels", str(qrels), "--scale", "graded",
        "--metrics", metrics_argument(), "--profile", "trec", "--name", name, "--no-progress",
    ]  # fmt: skip
    peak = 0
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=code, stdout=out, stderr=err)
        while process.poll() is None:
            peak = max(peak, high_water_mark(process.pid))
            time.sleep(0.1)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if process.returncode != 0:
        raise SystemExit(f"import_trec of {code} failed ({process.returncode}):\n{stderr}")
    return ChildImport(seconds, peak, int(stdout.strip()), stderr.strip())


def describe_import(label: str, imported: ChildImport, snapshots: int) -> str:
    return (
        f"  {label}: {imported.seconds:.1f} s = {snapshots / imported.seconds:,.0f} "
        f"snapshots/s; peak RSS {imported.peak_rss / 2**20:,.0f} MB"
    )


def timed_imports(team_id: int, run: Path, qrels: Path, snapshots: int, compare_with):
    """This code's import and, if asked, another checkout's on the same files in this
    run (first, so neither has the warmer cache), with their ratios."""
    other = None
    if compare_with is not None:
        progress_note(f"import_trec of {compare_with}")
        other = import_in_child(compare_with, team_id, run, qrels, "depth bench (compared)")
        print(describe_import(f"import_trec, the code in {compare_with}", other, snapshots))
    progress_note("import_trec (read both files, score, COPY, commit)")
    imported = import_in_child(ROOT, team_id, run, qrels, "depth bench")
    print(describe_import("import_trec (own process: read both files, score, COPY, commit)",
                          imported, snapshots))  # fmt: skip
    print("    " + imported.said)
    if other is not None:
        print(
            f"  this code / the compared code: time {imported.seconds / other.seconds:.2f}, "
            f"peak RSS {imported.peak_rss / other.peak_rss:.2f}"
        )
    return imported


ROOT = Path(__file__).resolve().parent.parent


def mark_every_keyword_changed(evaluation_id: int) -> None:
    """What a grade does to its keyword, for all of them: one version step and marked.
    recompute_evaluation stores only results newer than what is stored, so without this
    it rescores every keyword and stores nothing."""
    from django.db.models import F

    from apps.evaluations.models import Keyword

    Keyword.objects.filter(evaluation_id=evaluation_id).update(
        grade_version=F("grade_version") + 1, needs_scoring=True
    )


def stored_values_problems(evaluation_id: int, keywords: int, values) -> list[str]:
    """Where a stored keyword value is not exactly the engine's (keyword text = qid)."""
    from apps.scoring.models import KeywordMetric

    problems = []
    stored = KeywordMetric.objects.filter(evaluation_id=evaluation_id).values_list(
        "keyword__text", "metric", "k", "value"
    )
    seen = 0
    for text, metric, k, value in stored.iterator(chunk_size=20_000):
        seen += 1
        expected = values[(metric, k)][int(text[1:])]
        if value != expected:
            problems.append(f"{text} {metric}@{k}: stored {value}, engine {expected}")
    wanted = len(METRICS) * keywords
    if seen != wanted:
        problems.append(f"{seen} keyword values stored, {wanted} expected")
    return problems


def database_size() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_size_pretty(pg_database_size(current_database()))")
        return cursor.fetchone()[0]


def timed_phase(label: str, snapshots: int, function: Callable[[], object]) -> object:
    progress_note(label)
    with PeakMemory() as memory:
        start = time.perf_counter()
        result = function()
        seconds = time.perf_counter() - start
    print(
        f"  {label}: {seconds:.1f} s = {snapshots / seconds:,.0f} snapshots/s; {memory.describe()}",
        flush=True,
    )
    return result


def run_storage_phase(data, depth: int, values, compare_with: Path | None) -> bool:
    from apps.accounts.services import team_create
    from apps.scoring.services import recompute_evaluation

    snapshots = len(data) * depth
    print(f"storage: PostgreSQL database {benchkit.BENCH_DATABASE}, {len(data)} keywords")
    team = team_create(name="Depth bench", owner_email="owner@depth-bench.test")
    with tempfile.TemporaryDirectory(prefix="relevo-depth-bench-") as folder:
        progress_note("writing the TREC run and qrels")
        start = time.perf_counter()
        run, qrels, qrels_lines = write_trec_files(data, depth, Path(folder))
        print(
            f"  TREC files: run {snapshots} lines ({run.stat().st_size / 1e6:.0f} MB), qrels "
            f"{qrels_lines} lines ({qrels.stat().st_size / 1e6:.0f} MB), written in "
            f"{time.perf_counter() - start:.0f} s (not timed)"
        )
        imported = timed_imports(team.id, run, qrels, snapshots, compare_with)
    from apps.evaluations.models import Evaluation

    evaluation = Evaluation.objects.get(id=imported.evaluation_id)
    problems = stored_values_problems(evaluation.id, len(data), values)
    print(f"  imported values == engine values (exact): {'OK' if not problems else 'FAILED'}")
    benchkit.analyze()  # statistics, as autovacuum gathers them after a bulk load
    timed_phase(
        "recompute_evaluation right after the import (reads and scores all, stores nothing)",
        snapshots,
        lambda: recompute_evaluation(evaluation_id=evaluation.id),
    )
    mark_every_keyword_changed(evaluation.id)
    timed_phase(
        "recompute_evaluation with every keyword marked changed (reads, scores, stores all)",
        snapshots,
        lambda: recompute_evaluation(evaluation_id=evaluation.id),
    )
    recomputed = stored_values_problems(evaluation.id, len(data), values)
    print(f"  recomputed values == engine values (exact): {'OK' if not recomputed else 'FAILED'}")
    for problem in (problems + recomputed)[:10]:
        print("    " + problem)
    print(f"  database size: {database_size()}")
    return not problems and not recomputed


# --- running ----------------------------------------------------------------------------


def celery_queue_length() -> int:
    """Messages waiting in the bench's Redis db (Celery's default queue is a list)."""
    import redis

    return redis.Redis.from_url(REDIS_URL).llen("celery")


def drop_database() -> None:
    """The bench's own database (several GB at full size); --keep-database keeps it."""
    import psycopg
    from django.db import connections

    connections.close_all()
    with psycopg.connect(f"{SERVER_URL}/postgres", autocommit=True) as server:
        server.execute(f"DROP DATABASE IF EXISTS {benchkit.BENCH_DATABASE} WITH (FORCE)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keywords", type=int, default=10_000)
    parser.add_argument(
        "--storage-keywords", type=int, help="keywords for the storage phase (default: all)"
    )
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--shallow", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--skip-storage", action="store_true")
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument(
        "--compare-with",
        type=Path,
        help="a checkout of other code (e.g. `git worktree add /tmp/before HEAD~3`) whose "
        "import_trec also imports the same files in this run, for the ratios",
    )
    arguments = parser.parse_args()

    setup_django()
    from apps.scoring.store import KEYWORDS_PER_BATCH

    print(machine_speed())
    progress_note("generating the data")
    data = make_data(arguments.seed, arguments.keywords, arguments.depth)
    print(describe_data(data, arguments.depth))
    values, ok = run_engine_phase(
        data, arguments.depth, arguments.shallow, arguments.repeats, KEYWORDS_PER_BATCH
    )
    if arguments.skip_storage:
        return 0 if ok else 1

    queued_before = celery_queue_length()
    storage_keywords = arguments.storage_keywords or arguments.keywords
    try:
        stored_ok = run_storage_phase(
            data[:storage_keywords], arguments.depth, values, arguments.compare_with
        )
    finally:
        if not arguments.keep_database:
            drop_database()
    published = celery_queue_length() - queued_before
    print(f"Celery tasks published to Redis db {REDIS_DB} during the storage phase: {published}")
    if published and not queued_before:
        # No worker consumes this db: remove the queue the bench itself created.
        import redis

        redis.Redis.from_url(REDIS_URL).delete("celery")
    return 0 if ok and stored_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Behaviour logs at scale: a UBI export of 10,000,000 events imported with
`manage.py import_clicks` on PostgreSQL, then the position-based model fitted to it.

Run: .venv/bin/python bench/clicks_bench.py [--events N] [--seed S] [--keep-files DIR]

It drops and recreates its own database (relevo_bench_clicks), makes a team, and writes
(not timed) a UBI 1.0.0 export to a temporary folder: ubi_queries.jsonl, one query
record per search, and ubi_events.jsonl, an impression event for each of a search's 10
hits, a click for each hit clicked and an add_to_cart after a quarter of the clicks.
The searches come from a known position-based model: 100,000 query texts with Zipf-like
frequencies (the n-th most frequent searched in proportion to 1/n), each with 30
candidate products from a catalogue of 200,000 and its own attractiveness for each; a
search shows 10 of them, the query's usual order shuffled by noise, and a hit is
clicked when its rank is examined (1 / rank^0.7) and it attracts. One click in 2,000
names a query_id no record has, as exports that lost a few query records do.

Timed, as deployed:
1. `manage.py import_clicks` in a subprocess: reading and aggregating as it streams
   ("read"), then storing the counts and sessions in one transaction ("store"); the
   subprocess's peak resident memory (VmHWM), and its peak when reading was done.
2. The PBM fitted to the stored log (apps.behaviour.fitting.log_estimates) in another
   subprocess, keeping the estimates on at least 10 impressions as the product does when
   it makes judgements: reading the counts back and the EM; its peak memory.

Target: read + fit within 60 s with at most 500 MB; the store is reported beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit
import numpy as np
from benchkit import high_water_mark, progress_note, verdict

DATABASE = "relevo_bench_clicks"
# Settings read the environment once, at django.setup(): set before anything else.
benchkit.use_database(DATABASE)
TEAM = "Clicks bench"
LOG_NAME = "Bench export"

QUERY_TEXTS = 100_000
CATALOGUE = 200_000
CANDIDATES = 30
SHOWN = 10
CART_SHARE = 0.25
LOST_QUERY_SHARE = 1 / 2000
SESSIONS_PER_BATCH = 20_000
MONTH_SECONDS = 30 * 24 * 3600

TARGET_SECONDS = 60.0
TARGET_MB = 500.0


# --- the export ---------------------------------------------------------------------------


class Shop:
    """The known model the export is drawn from."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        popularity = 1.0 / np.arange(1, QUERY_TEXTS + 1)
        self.popularity = popularity / popularity.sum()
        # Each query's candidates: distinct products, spread over the catalogue.
        first = self.rng.integers(0, CATALOGUE, QUERY_TEXTS)[:, None]
        apart = self.rng.integers(1, CATALOGUE // CANDIDATES, QUERY_TEXTS)[:, None]
        self.candidates = (first + apart * np.arange(CANDIDATES)) % CATALOGUE
        self.attractiveness = self.rng.uniform(0.02, 0.6, (QUERY_TEXTS, CANDIDATES))
        self.examination = 1.0 / np.arange(1, SHOWN + 1) ** 0.7

    def searches(self, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`count` searches: each one's query text, the candidates shown and the clicks."""
        query = self.rng.choice(QUERY_TEXTS, size=count, p=self.popularity)
        noisy = np.arange(CANDIDATES) + self.rng.normal(0.0, 4.0, (count, CANDIDATES))
        shown = np.argsort(noisy, axis=1)[:, :SHOWN]
        chance = self.attractiveness[query[:, None], shown] * self.examination
        return query, shown, self.rng.random(shown.shape) < chance


def query_text(number: int) -> str:
    words = ("red", "running", "shoes", "wool", "socks", "rain", "jacket", "kids", "linen")
    return f"{words[number % 9]} {words[(number // 9) % 9]} {number}"


def stamp(second: float) -> str:
    whole = int(second)
    day, rest = divmod(whole, 86400)
    hour, rest = divmod(rest, 3600)
    minute, sec = divmod(rest, 60)
    return (
        f"2026-10-{day + 1:02d}T{hour:02d}:{minute:02d}:{sec:02d}.{int(second * 1000) % 1000:03d}Z"
    )


def export(folder: Path, events: int, seed: int) -> tuple[Path, Path, dict[str, int]]:
    """The two JSON Lines files of about `events` events, and what they hold; written
    unless the folder holds them from an earlier run with the same events and seed."""
    about = folder / "export.json"
    if about.exists():
        kept = json.loads(about.read_text())
        if (kept["asked"], kept["seed"]) == (events, seed):
            return folder / "ubi_queries.jsonl", folder / "ubi_events.jsonl", kept
    queries, events_path, written = write_export(folder, events, seed)
    about.write_text(json.dumps({**written, "asked": events, "seed": seed}))
    return queries, events_path, written


def write_export(folder: Path, events: int, seed: int) -> tuple[Path, Path, dict[str, int]]:
    """The two JSON Lines files, about `events` events in all, and what they hold."""
    shop = Shop(seed)
    queries_path, events_path = folder / "ubi_queries.jsonl", folder / "ubi_events.jsonl"
    # A search makes SHOWN impressions, its clicks and some carts: about 11 events.
    per_search = SHOWN + float(shop.examination.sum()) * 0.31 * (1 + CART_SHARE)
    searches = max(1, int(events / per_search))
    written = {"searches": 0, "events": 0, "clicks": 0}
    ids = np.random.default_rng(seed + 1)
    with queries_path.open("w") as queries, events_path.open("w") as out:
        for first in range(0, searches, SESSIONS_PER_BATCH):
            size = min(SESSIONS_PER_BATCH, searches - first)
            query, shown, clicked = shop.searches(size)
            high, low = ids.integers(0, 2**63, size), ids.integers(0, 2**63, size)
            lost = ids.random((size, SHOWN)) < LOST_QUERY_SHARE
            carted = ids.random((size, SHOWN)) < CART_SHARE
            lines, event_lines = [], []
            for row in range(size):
                number = first + row
                at = number * MONTH_SECONDS / searches
                query_id = f"{high[row]:016x}-{low[row]:016x}"
                client = f"client-{(high[row] >> 20) % 50_000}"
                text = query_text(int(query[row]))
                hits = [f"sku-{shop.candidates[query[row], c]:06d}" for c in shown[row].tolist()]
                lines.append(
                    json.dumps(
                        {
                            "application": "shop",
                            "query_id": query_id,
                            "client_id": client,
                            "user_query": text,
                            "query_attributes": {},
                            "object_id_field": "product_id",
                            "query_response_id": f"r-{query_id}",
                            "query_response_hit_ids": hits,
                            "timestamp": stamp(at),
                        }
                    )
                )
                head = (
                    f'{{"application": "shop", "query_id": "%s", "session_id": "s-{client}", '
                    f'"client_id": "{client}", "user_id": "", "timestamp": "%s", '
                    '"message_type": "INFO", "message": null, "event_attributes": '
                    '{"object": {"object_id": "%s", "object_id_field": "product_id"}, '
                    '"position": {"ordinal": %d}}, "action_name": "%s"}'
                )
                seen = stamp(at + 0.4)
                for rank, hit in enumerate(hits):
                    event_lines.append(head % (query_id, seen, hit, rank, "impression"))
                for rank in np.flatnonzero(clicked[row]).tolist():
                    said = "unknown-" + query_id if lost[row, rank] else query_id
                    at_click = stamp(at + 3 + rank)
                    event_lines.append(head % (said, at_click, hits[rank], rank, "click"))
                    written["clicks"] += 1
                    if carted[row, rank]:
                        event_lines.append(
                            head
                            % (query_id, stamp(at + 20 + rank), hits[rank], rank, "add_to_cart")
                        )
            queries.write("\n".join(lines) + "\n")
            out.write("\n".join(event_lines) + "\n")
            written["searches"] += size
            written["events"] += len(event_lines)
    return queries_path, events_path, written


# --- the two measured processes -----------------------------------------------------------


def timed_calls(module, name: str) -> dict:
    """Put a wrapper in place of module.name that notes when its call began and ended,
    the process's peak memory at the end, and what it returned."""
    marks: dict = {}
    function = getattr(module, name)

    def timed(*args, **kwargs):
        marks["from"] = time.perf_counter()
        marks["result"] = function(*args, **kwargs)
        marks["to"] = time.perf_counter()
        marks["peak"] = high_water_mark(os.getpid())
        return marks["result"]

    setattr(module, name, timed)
    return marks


def child_import(figures: Path, command: list[str]) -> None:
    """`manage.py import_clicks` as deployed, with read_ubi timed from outside: when it
    returns, the log is read and aggregated; what follows is the store."""
    began = time.perf_counter()
    import django

    django.setup()
    from django.core.management import execute_from_command_line

    from apps.behaviour import importing

    at_start = high_water_mark(os.getpid())
    read = timed_calls(importing, "read_ubi")
    execute_from_command_line(["manage.py", "import_clicks", *command])
    ended = time.perf_counter()
    figures.write_text(
        json.dumps(
            {
                "start": read["from"] - began,
                "read": read["to"] - read["from"],
                "store": ended - read["to"],
                "peak_after_read": read["peak"],
                "at_start": at_start,
                "peak": high_water_mark(os.getpid()),
            }
        )
    )


def child_fit(figures: Path, log_id: int, seed: int) -> None:
    """The PBM fitted to the stored log through log_estimates, the EM timed apart."""
    import django

    django.setup()
    from apps.behaviour.fitting import log_estimates
    from apps.behaviour.models import ClickLog
    from apps.engine import clicks

    log = ClickLog.objects.get(id=log_id)
    at_start = high_water_mark(os.getpid())
    em = timed_calls(clicks, "pbm")
    began = time.perf_counter()
    # As the product makes judgements: the estimates on enough impressions are kept.
    estimates = log_estimates(log, "pbm", minimum=clicks.MIN_IMPRESSIONS)
    ended = time.perf_counter()
    peak = high_water_mark(os.getpid())
    figures.write_text(
        json.dumps(
            {
                "fit": ended - began,
                "em": em["to"] - em["from"],
                "iterations": em["result"].iterations,
                "converged": em["result"].converged,
                "pairs": len(estimates),
                "peak": peak,
                "at_start": at_start,
                "recovery": recovery(estimates, Shop(seed)),
            }
        )
    )


def recovery(estimates, shop: Shop) -> list[float]:
    """Kendall's tau between the fitted and the true attractiveness of each of the 100
    most searched queries, over its products with 100 or more impressions."""
    from scipy.stats import kendalltau

    taus = []
    for number in range(100):
        text = query_text(number)
        fitted, true = [], []
        for slot, product in enumerate(shop.candidates[number].tolist()):
            estimate = estimates.get((text, f"sku-{product:06d}"))
            if estimate is not None and estimate.impressions >= 100:
                fitted.append(estimate.value)
                true.append(shop.attractiveness[number, slot])
        if len(fitted) >= 5:
            taus.append(float(kendalltau(fitted, true).statistic))
    return taus


def run_child(arguments: list[str]) -> tuple[float, dict, str]:
    """This script in a child process; its wall time, the figures it wrote, its output."""
    with tempfile.TemporaryDirectory() as folder:
        figures = Path(folder) / "figures.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--figures", str(figures)]
        started = time.perf_counter()
        done = subprocess.run(
            [*command, *arguments],
            capture_output=True,
            text=True,
            env=dict(os.environ),
            check=False,
        )
        wall = time.perf_counter() - started
        if done.returncode:
            raise SystemExit(f"{' '.join(arguments[:1])} failed:\n{done.stderr}")
        return wall, json.loads(figures.read_text()), done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep-files", help="write the export into this folder and keep it")
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument("--figures", help=argparse.SUPPRESS)
    parser.add_argument("--child-import", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.add_argument("--child-fit", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child_import is not None:
        return child_import(Path(options.figures), options.child_import)
    if options.child_fit is not None:
        return child_fit(Path(options.figures), options.child_fit, options.seed)

    print(benchkit.machine_speed())
    benchkit.setup_django()
    from apps.accounts.services import team_create
    from apps.behaviour.models import ClickCount, ClickLog, SessionPattern

    team_create(name=TEAM, owner_email="owner@clicks-bench.test")
    folder = Path(options.keep_files or tempfile.mkdtemp(prefix="relevo-clicks-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        queries, events, written = export(folder, options.events, options.seed)
        size = (queries.stat().st_size + events.stat().st_size) / 1e9
        progress_note(f"export written: {written}; importing")
        import_wall, read, said = run_child(
            [
                "--child-import",
                "--team",
                TEAM,
                "--name",
                LOG_NAME,
                "--ubi-queries",
                str(queries),
                "--ubi-events",
                str(events),
            ]
        )
        log = ClickLog.objects.get(team__name=TEAM, name=LOG_NAME)
        counts = ClickCount.objects.filter(log=log).count()
        sessions = SessionPattern.objects.filter(log=log).count()
        progress_note("fitting the position-based model")
        fit_wall, fit, _ = run_child(["--seed", str(options.seed), "--child-fit", str(log.id)])
    finally:
        if not options.keep_files:
            for path in folder.iterdir():
                path.unlink()
            folder.rmdir()
    if not options.keep_database:
        drop_database()

    report(written, size, said, (counts, sessions), import_wall, read, fit)


def report(written, size, said, stored, import_wall, read, fit) -> None:
    mb = 2**20
    read_mb, store_mb, fit_mb = read["peak_after_read"] / mb, read["peak"] / mb, fit["peak"] / mb
    total, peak_mb = read["read"] + fit["fit"], max(read_mb, fit_mb)
    print(
        f"export: {written['events']:,} events ({written['clicks']:,} clicks) and "
        f"{written['searches']:,} query records, {size:.2f} GB"
    )
    print(f"import_clicks said: {' / '.join(said.splitlines()[:2])}")
    print(f"stored: {stored[0]:,} count rows, {stored[1]:,} session rows")
    print(f"import_clicks, whole process: {import_wall:6.2f} s (start-up {read['start']:.2f} s)")
    print(f"  read and aggregate:         {read['read']:6.2f} s, peak RSS {read_mb:.0f} MB")
    print(f"  store (one transaction):    {read['store']:6.2f} s, peak RSS {store_mb:.0f} MB")
    print(f"PBM fit (log_estimates):      {fit['fit']:6.2f} s, peak RSS {fit_mb:.0f} MB")
    print(
        f"  of which the EM {fit['em']:.2f} s ({fit['iterations']} steps, converged "
        f"{fit['converged']}; {fit['pairs']:,} pairs)"
    )
    print(
        f"  (both processes: {read['at_start'] / mb:.0f} and {fit['at_start'] / mb:.0f} MB once "
        "Django is set up, before the log is touched)"
    )
    print(
        f"read + aggregate + fit: {total:.2f} s (target {TARGET_SECONDS:.0f} s): "
        f"{verdict(total <= TARGET_SECONDS)}; peak {peak_mb:.0f} MB (target {TARGET_MB:.0f} MB): "
        f"{verdict(peak_mb <= TARGET_MB)}"
    )
    print(f"with the store: {total + read['store']:.2f} s")
    taus = fit["recovery"]
    if taus:
        print(
            f"recovery: Kendall's tau of fitted and true attractiveness, {len(taus)} most "
            f"searched queries: median {np.median(taus):.2f}, lowest {min(taus):.2f}"
        )


def drop_database() -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    with psycopg.connect(f"{benchkit.SERVER_URL}/postgres", autocommit=True) as server:
        server.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


if __name__ == "__main__":
    main()

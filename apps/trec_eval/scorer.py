"""Score a run against qrels as trec_eval does, with its options, and nothing stored.

The options are trec_eval's: -q (a block per query), -c (judged queries the run lacks
count, scoring 0), -l N (the lowest relevant level, 1 by default), -J (only judged
documents: the rest, and those in the pool nobody judged, leave the ranking first), -M N
(read at most N results per query), -m (the measures, trec_eval's names). A query is
evaluated when the qrels judge it and the run has it (or with -c, whenever the qrels
judge it), exactly the queries trec_eval prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from apps.engine import score_keywords_batch
from apps.engine.conventions import TREC
from apps.engine.scales import HIGHEST_LEVEL, LOWEST_LEVEL, Scale

from .files import Collector, FileProblems, Run, read_qrels, read_run
from .measures import requested_metrics
from .report import Report

# How many results -M may keep per query: far deeper than any TREC run.
MAX_DEPTH = 1_000_000


@dataclass(frozen=True)
class Options:
    per_query: bool = False  # -q
    complete: bool = False  # -c
    relevance_level: int = 1  # -l
    judged_only: bool = False  # -J
    max_results: int | None = None  # -M
    measures: Sequence[str] = ()  # -m, trec_eval's specifications

    def problems(self) -> list[str]:
        problems = []
        if not LOWEST_LEVEL < self.relevance_level <= HIGHEST_LEVEL:
            problems.append(
                f"-l: the relevance level must be from {LOWEST_LEVEL + 1} to {HIGHEST_LEVEL}"
            )
        if self.max_results is not None and not 1 <= self.max_results <= MAX_DEPTH:
            problems.append(f"-M: at most 1 to {MAX_DEPTH} results per query")
        return problems


def score_files(
    qrels: IO[bytes],
    run: IO[bytes],
    options: Options,
    *,
    qrels_name: str = "qrels",
    run_name: str = "run",
) -> Report:
    """The report trec_eval prints for these files. Raises FileProblems (every problem
    with its file and line, or its option) and measures.MeasureError."""
    metrics = requested_metrics(options.measures)
    if option_problems := options.problems():
        raise FileProblems(option_problems)
    problems = Collector()
    judged = read_qrels(qrels, qrels_name, problems)
    ranked = read_run(run, run_name, problems)
    problems.raise_if_any()

    queries = sorted(q for q in judged if q in ranked.rankings or options.complete)
    rankings = [_ranking(ranked, q, judged[q], options) for q in queries]
    retrieved = [set(ranking) for ranking in rankings]
    scores = score_keywords_batch(
        [
            [[judged[q].get(docno)] for docno in ranking]
            for q, ranking in zip(queries, rankings, strict=True)
        ],
        scale=_levels_scale(judged, options.relevance_level),
        metrics=metrics,
        profile=TREC,
        unretrieved=[
            [level for docno, level in judged[q].items() if docno not in found]
            for q, found in zip(queries, retrieved, strict=True)
        ],
        # A query that is evaluated with no results (-c, or -J emptying it) scores 0.
        zero_without_results=True,
    )
    per_query = {q: scores.keyword_score(index).metrics for index, q in enumerate(queries)}
    return Report(run_id=ranked.tag, profile=TREC, metrics=metrics, per_query=per_query)


def _ranking(run: Run, qid: str, levels: dict[str, int], options: Options) -> list[str]:
    ranking = run.rankings.get(qid, [])
    if options.max_results is not None:
        ranking = ranking[: options.max_results]
    if options.judged_only:
        # -J: a document outside the qrels, or in the pool but not judged, leaves first.
        ranking = [docno for docno in ranking if levels.get(docno, -1) >= 0]
    return ranking


def _levels_scale(judged: dict[str, dict[str, int]], relevance_level: int) -> Scale:
    """The qrels' levels as one scale, from 0 (or the lowest below it) to the highest (at
    least the relevance level), relevant from -l: trec_eval's reading of levels."""
    levels = {level for by_doc in judged.values() for level in by_doc.values()}
    lowest = min([0, *levels])
    highest = max([1, relevance_level, *levels])
    grades = tuple(range(lowest, highest + 1))
    return Scale(
        name="qrels",
        grades=grades,
        labels=tuple(map(str, grades)),
        keys=("",) * len(grades),
        relevant_from=relevance_level,
        custom=True,
    )

"""`manage.py trec_eval QRELS RUN [-q] [-c] [-l N] [-J] [-M N] [-m MEASURE ...]`: what
trec_eval prints for these files, computed by Relevo's engine, nothing stored. manage.py
runs it before Django starts, so it answers as fast as a plain script."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .files import FileProblems
from .measures import MeasureError
from .report import Writer, write_report
from .scorer import Options, score_files

USAGE = "manage.py trec_eval QRELS RUN [-q] [-c] [-l N] [-J] [-M N] [-m MEASURE ...]"


def parser() -> argparse.ArgumentParser:
    reader = argparse.ArgumentParser(
        prog="manage.py trec_eval",
        usage=USAGE,
        description="Score a TREC run against qrels as trec_eval does; nothing is stored.",
    )
    reader.add_argument("qrels", help="qrels file: qid iteration docno level")
    reader.add_argument("run", help="run file: qid Q0 docno rank score tag")
    reader.add_argument("-q", action="store_true", help="print each query's values too")
    reader.add_argument("-c", action="store_true", help="count judged queries the run lacks")
    reader.add_argument("-l", type=int, default=1, metavar="N", help="lowest relevant level")
    reader.add_argument("-J", action="store_true", help="read judged documents only")
    reader.add_argument("-M", type=int, metavar="N", help="read at most N results per query")
    reader.add_argument(
        "-m",
        action="append",
        default=[],
        metavar="MEASURE",
        help="a measure as trec_eval names it (P.5,10; map; ndcg_cut; official; all_trec)",
    )
    return reader


def main(argv: Sequence[str], out: Writer = sys.stdout, err: Writer = sys.stderr) -> int:
    """Exit status: 0 printed, 1 the files or a measure are wrong (each problem on err),
    2 the command line is (argparse's own)."""
    arguments = parser().parse_args(argv)
    options = Options(
        per_query=arguments.q,
        complete=arguments.c,
        relevance_level=arguments.l,
        judged_only=arguments.J,
        max_results=arguments.M,
        measures=arguments.m,
    )
    try:
        with open(arguments.qrels, "rb") as qrels, open(arguments.run, "rb") as run:
            report = score_files(
                qrels, run, options, qrels_name=arguments.qrels, run_name=arguments.run
            )
    except OSError as error:
        err.write(f"trec_eval: {error.filename}: {error.strerror}\n")
        return 1
    except FileProblems as problems:
        for problem in problems.problems:
            err.write(f"trec_eval: {problem}\n")
        return 1
    except MeasureError as error:
        err.write(f"trec_eval: {error}\n")
        return 1
    write_report(report, out, per_query_lines=options.per_query)
    return 0

"""A TREC import reads its files query by query: the order of the lines does not matter,
and a problem found after writing began leaves nothing written."""

import io
import random

import pytest

from apps.core.errors import InvalidInput
from apps.evaluations.models import Evaluation, FeedbackSlot, Snapshot, UnretrievedJudgement
from apps.interchange.trec import import_trec
from apps.interchange.writer import BATCH_SNAPSHOTS
from apps.scoring.models import KeywordMetric
from tests.factories import make_team

pytestmark = pytest.mark.django_db


def named(text: str, name: str) -> io.BytesIO:
    stream = io.BytesIO(text.encode())
    stream.name = name
    return stream


def imported(run: str, qrels: str, **settings) -> Evaluation:
    arguments = {
        "team": make_team(),
        "name": "TREC",
        "scale": "graded",
        "metrics": [("ndcg", 10), ("ap", 0)],
        "profile": "trec",
        "run": named(run, "run.txt"),
        "qrels": named(qrels, "qrels.txt"),
    }
    arguments.update(settings)
    return import_trec(**arguments).evaluation


def what_was_stored(evaluation: Evaluation) -> dict[str, object]:
    return {
        "keywords": list(evaluation.keywords.order_by("position").values_list("text", flat=True)),
        "snapshots": sorted(
            Snapshot.objects.filter(keyword__evaluation=evaluation).values_list(
                "keyword__text", "position", "doc_id"
            )
        ),
        "grades": sorted(
            FeedbackSlot.objects.filter(evaluation=evaluation).values_list(
                "keyword__text", "snapshot__doc_id", "grade"
            )
        ),
        "unretrieved": sorted(
            UnretrievedJudgement.objects.filter(keyword__evaluation=evaluation).values_list(
                "keyword__text", "doc_id", "grade"
            )
        ),
        "values": sorted(
            KeywordMetric.objects.filter(evaluation=evaluation).values_list(
                "keyword__text", "metric", "k", "value"
            )
        ),
    }


def random_files(seed: int) -> tuple[list[str], list[str]]:
    chooser = random.Random(seed)
    run, qrels = [], []
    for query in range(6):
        for rank in range(1, chooser.randint(1, 15)):
            run.append(
                f"q{query} Q0 d{chooser.randint(0, 40)}-{rank} {rank} {chooser.random()} t\n"
            )
        for doc in range(chooser.randint(0, 8)):
            qrels.append(f"q{query} 0 d{doc}-{doc + 1} {chooser.randint(0, 3)}\n")
    return run, qrels


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_run_and_qrels_with_their_lines_shuffled_import_as_the_same_evaluation(seed):
    run, qrels = random_files(seed)
    grouped = imported("".join(run), "".join(qrels))
    random.Random(seed).shuffle(run)
    random.Random(seed + 1).shuffle(qrels)
    # Keywords come in the order their qids first appear: the shuffled run's order.
    order = list(dict.fromkeys(line.split()[0] for line in run))
    order += [qid for qid in dict.fromkeys(line.split()[0] for line in qrels) if qid not in order]

    shuffled = imported("".join(run), "".join(qrels))

    expected = what_was_stored(grouped)
    expected["keywords"] = order
    assert what_was_stored(shuffled) == expected


def test_problems_of_interleaved_queries_are_listed_in_line_order():
    run = "q1 Q0 a 1 1 t\nq2 Q0 a 1 x t\nq1 Q0 a 2 1 t\nq2 Q0 b 2\nq1 Q0 c 3 y t\n"

    with pytest.raises(InvalidInput) as raised:
        imported(run, "q2 0 a 9\nq1 0 a x\n")

    assert raised.value.problems == [
        "run.txt line 2: score 'x' is not a number",
        "run.txt line 3: docno 'a' given twice for qid 'q1' (line 1)",
        "run.txt line 4: expected 6 columns (qid Q0 docno rank score tag), got 4",
        "run.txt line 5: score 'y' is not a number",
        "qrels.txt line 1: grade 9 is not a graded grade (0, 1, 2, 3)",
        "qrels.txt line 2: grade 'x' is not a whole number",
    ]


def test_a_problem_in_the_last_query_after_batches_were_written_leaves_nothing():
    depth = 1000
    # Progress is told of what is stored when the next batch is: three batches' worth.
    queries = 2 * BATCH_SNAPSHOTS // depth + 2
    run = "".join(
        f"q{query} Q0 d{rank} {rank} {depth - rank} t\n"
        for query in range(queries)
        for rank in range(1, depth + 1)
    )
    run += f"q{queries - 1} Q0 d7 1 1 t\n"  # the last line: a docno given twice
    stored: list[int] = []
    counts = (Evaluation.objects.count(), Snapshot.objects.count())

    with pytest.raises(InvalidInput) as raised:
        imported(run, "q0 0 d1 3\n", progress=stored.append)

    last = queries * depth + 1
    assert raised.value.problems == [
        f"run.txt line {last}: docno 'd7' given twice for qid 'q{queries - 1}' "
        f"(line {last - depth + 6})"
    ]
    assert stored and stored[-1] >= BATCH_SNAPSHOTS  # batches were written before it
    assert (Evaluation.objects.count(), Snapshot.objects.count()) == counts

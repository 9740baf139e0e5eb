"""TREC files in: runs, qrels and topics; and the TREC exports read back."""

import io
import random
from pathlib import Path

import pytest

from apps.core.errors import InvalidInput
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    Snapshot,
    UnretrievedJudgement,
)
from apps.interchange.export import export_qrels, export_run, export_topics
from apps.interchange.trec import import_trec
from apps.scoring.models import KeywordMetric
from tests.factories import make_team

pytestmark = pytest.mark.django_db

ir_measures = pytest.importorskip("ir_measures")


def named(text: str, name: str) -> io.BytesIO:
    stream = io.BytesIO(text.encode())
    stream.name = name
    return stream


def trec_import(run: str, qrels: str | None = None, topics: str | None = None, **settings):
    arguments = {
        "team": make_team(),
        "name": "TREC",
        "scale": "graded",
        "metrics": [("ndcg", 10)],
        "run": named(run, "run.txt"),
        "qrels": None if qrels is None else named(qrels, "qrels.txt"),
        "topics": None if topics is None else named(topics, "topics.tsv"),
    }
    arguments.update(settings)
    return import_trec(**arguments).evaluation


def snapshots_of(evaluation: Evaluation) -> dict[str, list[tuple[int, str, int | None]]]:
    """keyword -> [(position, doc_id, grade of slot 0)] in position order."""
    result: dict[str, list[tuple[int, str, int | None]]] = {}
    for slot in (
        FeedbackSlot.objects.filter(evaluation=evaluation, index=0)
        .select_related("keyword", "snapshot")
        .order_by("keyword__position", "snapshot__position")
    ):
        result.setdefault(slot.keyword.text, []).append(
            (slot.snapshot.position, slot.snapshot.doc_id, slot.grade)
        )
    return result


# --- agreement with ir_measures ---------------------------------------------------------


def random_trec_files(folder: Path, seed: int) -> tuple[Path, Path]:
    """A run with ties in its scores (in three queries of four) and unjudged documents,
    and its qrels.

    Some judgements are of documents the run did not retrieve, which count in the trec
    profile's pool as they do in trec_eval's.
    """
    rng = random.Random(seed)
    run_lines, qrels_lines = [], []
    for query in range(40):
        qid = str(300 + query)
        documents = rng.sample(range(200), rng.randint(1, 25))
        for rank, number in enumerate(documents, start=1):
            if query % 4:
                score = rng.choice([1.5, 2.0, 2.25, 3.0, 4.75, 10.0])  # many ties
            else:
                score = rank + rng.random() / 2  # no ties, and not in rank order
            run_lines.append(f"{qid} Q0 d{number} {rank} {score} seeded")
            if query % 9 != 0 and rng.random() < 0.7:  # some queries have no judgement
                qrels_lines.append(f"{qid} 0 d{number} {rng.choice([0, 0, 1, 2, 3])}")
        if query % 9 != 0 and query % 3 == 0:  # judged documents the run did not retrieve
            for number in range(200, 200 + rng.randint(1, 5)):
                qrels_lines.append(f"{qid} 0 d{number} {rng.choice([0, 1, 2, 3])}")
    rng.shuffle(run_lines)  # a run need not be grouped or sorted
    qrels_lines.append("999 0 d1 3")  # a query the run does not have
    run, qrels = folder / "run.txt", folder / "qrels.txt"
    run.write_text("\n".join(run_lines) + "\n")
    qrels.write_text("\n".join(qrels_lines) + "\n")
    return run, qrels


@pytest.mark.parametrize("seed", [1, 2])
def test_profile_trec_gives_the_per_keyword_values_of_ir_measures_on_the_same_files(tmp_path, seed):
    from ir_measures import AP, RR, P, nDCG

    run, qrels = random_trec_files(tmp_path, seed)
    metrics = [("ndcg", 10), ("precision", 5), ("ap", 10), ("rr", 10), ("rr", 100)]
    with run.open("rb") as run_file, qrels.open("rb") as qrels_file:
        evaluation = import_trec(
            team=make_team(),
            run=run_file,
            qrels=qrels_file,
            name="seeded",
            scale="graded",
            profile="trec",
            metrics=metrics,
        ).evaluation
    ours = {
        (text, metric, k): value
        for text, metric, k, value in KeywordMetric.objects.filter(
            evaluation=evaluation
        ).values_list("keyword__text", "metric", "k", "value")
    }
    reference = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc(
            [nDCG @ 10, P @ 5, AP @ 10, RR, RR @ 10],
            list(ir_measures.read_trec_qrels(str(qrels))),
            list(ir_measures.read_trec_run(str(run))),
        )
    }
    # pytrec_eval (trec_eval) computes nDCG@10, P@5, AP@10 and RR, ordering tied scores
    # by docno descending as the import does. RR has no cutoff there: rr@100 is beyond
    # every query's depth. ir_measures takes RR@10 from its MS MARCO provider, which
    # orders ties its own way, so RR@10 is compared on queries without tied scores.
    names = {"nDCG@10": ("ndcg", 10), "P@5": ("precision", 5), "AP@10": ("ap", 10)}
    names["RR"] = ("rr", 100)
    untied = queries_without_ties(run)
    compared: dict[str, int] = {}
    for (qid, measure), value in reference.items():
        if qid == "999":
            continue  # only in the qrels: ir_measures scores it 0 (trec_eval -c), Relevo null
        if measure == "RR@10":
            if qid not in untied:
                continue
            key = ("rr", 10)
        else:
            key = names[measure]
        assert ours[(qid, *key)] == pytest.approx(value, abs=1e-12), (qid, measure)
        compared[measure] = compared.get(measure, 0) + 1
    assert min(compared.values()) >= 3 and sum(compared.values()) > 100, compared
    assert set(compared) == {"nDCG@10", "P@5", "AP@10", "RR", "RR@10"}
    judged = {qid for qid, _ in reference}
    for text in Keyword.objects.filter(evaluation=evaluation).values_list("text", flat=True):
        if text not in judged:  # trec_eval skips a query without judgements; we say null
            assert all(ours[(text, metric, k)] is None for metric, k in metrics)


def queries_without_ties(run: Path) -> set[str]:
    scores: dict[str, list[float]] = {}
    for line in run.read_text().split("\n"):
        if line:
            qid, _, _, _, score, _ = line.split()
            scores.setdefault(qid, []).append(float(score))
    return {qid for qid, values in scores.items() if len(set(values)) == len(values)}


# --- how files become keywords, snapshots and grades -------------------------------------


def test_results_are_ordered_by_score_then_by_docno_descending():
    run = "q1 Q0 a 1 2.5 t\nq1 Q0 b 2 7 t\nq1 Q0 c 3 2.5 t\nq1 Q0 d 4 -1 t\n"

    evaluation = trec_import(run)

    assert snapshots_of(evaluation) == {
        "q1": [(1, "b", None), (2, "c", None), (3, "a", None), (4, "d", None)]
    }


def test_keep_rank_takes_the_positions_from_the_rank_column():
    run = "q1 Q0 a 3 2.5 t\nq1 Q0 b 1 0.5 t\nq1 Q0 c 7 9 t\n"

    evaluation = trec_import(run, keep_rank=True)

    assert snapshots_of(evaluation) == {"q1": [(1, "b", None), (3, "a", None), (7, "c", None)]}


def test_keywords_come_in_the_order_their_qids_first_appear_with_topic_texts():
    run = "b Q0 x 1 1 t\na Q0 x 1 1 t\nb Q0 y 2 0 t\nc Q0 z 1 1 t\n"
    topics = "a\tred running shoes\nb\tblue  shirt \nunused\tnever asked\n"

    evaluation = trec_import(run, topics=topics)

    texts = list(evaluation.keywords.order_by("position").values_list("text", flat=True))
    assert texts == ["blue  shirt", "red running shoes", "c"]


def test_qrels_give_one_graded_slot_per_result_and_keep_the_documents_not_retrieved():
    run = "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 1 t\n"
    qrels = "q1 0 a 2\nq1 0 c 0\nq1 0 zz 3\nq9 0 a 3\n"

    evaluation = trec_import(run, qrels, strategy=3)

    assert snapshots_of(evaluation) == {"q1": [(1, "a", 2), (2, "b", None), (3, "c", 0)]}
    # Judged documents the run did not retrieve, and a query judged but not run.
    kept = UnretrievedJudgement.objects.filter(keyword__evaluation=evaluation)
    assert sorted(kept.values_list("keyword__text", "doc_id", "grade")) == [
        ("q1", "zz", 3),
        ("q9", "a", 3),
    ]
    assert list(evaluation.keywords.values_list("text", flat=True)) == ["q1", "q9"]
    assert not Snapshot.objects.filter(keyword__text="q9", keyword__evaluation=evaluation)
    graded = FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False)
    assert [(s.grader, s.external_grader, s.index) for s in graded] == [(None, "", 0)] * 2
    evaluation.refresh_from_db()
    assert (evaluation.graded_slots, evaluation.total_slots) == (2, 9)
    assert evaluation.status == "pending"


def test_on_a_binary_evaluation_grades_of_one_and_more_are_relevant():
    run = "q1 Q0 a 1 4 t\nq1 Q0 b 2 3 t\nq1 Q0 c 3 2 t\nq1 Q0 d 4 1 t\n"
    qrels = "q1 0 a 3\nq1 0 b 1\nq1 0 c 0\nq1 0 d -1\n"

    evaluation = trec_import(run, qrels, scale="binary", metrics=[("precision", 4)])

    grades = [grade for _, _, grade in snapshots_of(evaluation)["q1"]]
    assert grades == [1, 1, 0, 0]
    assert EvaluationMetric.objects.get(evaluation=evaluation).value == 0.5


def test_the_run_qrels_and_topics_an_export_writes_read_back_into_the_same_evaluation():
    run = "q1 Q0 a 1 3 t\nq1 Q0 b%20c 2 2 t\nq2 Q0 a 1 1 t\n"
    qrels = "q1 0 a 2\nq1 0 b%20c 3\nq2 0 a 0\n"
    topics = "q1\tred  running shoes\nq2\t100% cotton\n"
    first = trec_import(run, qrels, topics, metrics=[("ndcg", 5), ("err", 3)])
    exported_run, exported_qrels, exported_topics = io.StringIO(), io.StringIO(), io.StringIO()
    export_run(first, exported_run)
    export_qrels(first, exported_qrels)
    export_topics(first, exported_topics)

    second = trec_import(
        exported_run.getvalue(),
        exported_qrels.getvalue(),
        exported_topics.getvalue(),
        metrics=[("ndcg", 5), ("err", 3)],
    )

    # The qids the import read, not the topics' texts; the topics export maps them.
    assert exported_run.getvalue().split("\n")[0] == "q1 Q0 a 1 2 relevo"
    assert exported_topics.getvalue() == topics
    assert (
        snapshots_of(second)
        == snapshots_of(first)
        == {
            "red  running shoes": [(1, "a", 2), (2, "b c", 3)],
            "100% cotton": [(1, "a", 0)],
        }
    )
    assert metric_values(second) == metric_values(first)


def metric_values(evaluation):
    return list(
        EvaluationMetric.objects.filter(evaluation=evaluation)
        .order_by("position")
        .values_list("metric", "k", "value")
    )


# --- problems -----------------------------------------------------------------------------


def row_counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Evaluation, EvaluationMetric, Keyword, Snapshot, FeedbackSlot, KeywordMetric)
    }


def test_every_problem_of_the_files_is_listed_with_its_line_and_nothing_is_written():
    team = make_team()
    run = (
        "q1 Q0 a 1 2.5 tag\nq1 Q0 b 2 x tag\n\nq1 Q0 c 3 tag\nq1 Q0 a 4 1 tag\nq2 Q0 d 1 nan tag\n"
    )
    qrels = "q1 0 a 2\nq1 0 a 1\nq1 0 b x\nq1 0 a\nq2 0 d 7\nq2 0 zz 9\n"
    topics = "q1\tshoes\nq2 no tab\nq3\tshoes\nq1\tagain\n"
    before = row_counts()

    with pytest.raises(InvalidInput) as raised:
        trec_import(run, qrels, topics, team=team, metrics=[("ndcg", 10), ("magic", 1001)])

    assert raised.value.problems == [
        "metrics[1].metric: unknown metric 'magic'",
        "metrics[1].k: 1001 must be a whole number from 1 to 1000, or null for the whole list",
        "topics.tsv line 2: expected qid<TAB>text",
        "topics.tsv line 4: qid 'q1' given twice (line 1)",
        "run.txt line 2: score 'x' is not a number",
        "run.txt line 4: expected 6 columns (qid Q0 docno rank score tag), got 5",
        "run.txt line 5: docno 'a' given twice for qid 'q1' (line 1)",
        "run.txt line 6: score 'nan' is not a number",
        "qrels.txt line 2: docno 'a' judged twice for qid 'q1' (line 1)",
        "qrels.txt line 3: grade 'x' is not a whole number",
        "qrels.txt line 4: expected 4 columns (qid iteration docno grade), got 3",
        # Judgements of documents the run does not hold are kept, so they are checked too.
        "qrels.txt line 5: grade 7 is not a graded grade (0, 1, 2, 3)",
        "qrels.txt line 6: grade 9 is not a graded grade (0, 1, 2, 3)",
    ]
    assert row_counts() == before


def test_a_grade_off_the_scale_and_clashing_keywords_are_problems_with_their_lines():
    run = "q1 Q0 a 1 1 t\nq2 Q0 a 1 1 t\nq3 Q0 a x 1 t\n"
    qrels = "q1 0 a 4\nq2 0 a 3\n"
    topics = "q1\tshoes\nq2\tshoes\n"
    before = row_counts()

    with pytest.raises(InvalidInput) as raised:
        trec_import(run, qrels, topics, keep_rank=True)

    assert raised.value.problems == [
        "run.txt line 3: rank 'x' is not a whole number from 1 to 2147483647",
        "qrels.txt line 1: grade 4 is not a graded grade (0, 1, 2, 3)",
        "run.txt line 2: qid 'q2' gives the keyword 'shoes' of qid 'q1' (line 1)",
    ]
    assert row_counts() == before


def test_a_rank_given_twice_is_a_problem_when_ranks_are_kept():
    with pytest.raises(InvalidInput) as raised:
        trec_import("q1 Q0 a 1 1 t\nq1 Q0 b 1 2 t\n", keep_rank=True)

    assert raised.value.problems == ["run.txt line 2: rank 1 given twice for qid 'q1' (line 1)"]


def test_a_file_without_a_name_is_called_by_its_role():
    with pytest.raises(InvalidInput) as raised:
        import_trec(
            team=make_team(),
            run=io.BytesIO(b"q1 Q0 a 1 1 t\n"),
            qrels=io.BytesIO(b"q1 0 a x\n"),
            name="n",
            scale="graded",
            metrics=[("ndcg", 10)],
        )

    assert raised.value.problems == ["qrels line 1: grade 'x' is not a whole number"]


def test_lines_that_are_not_utf8_text_or_hold_a_nul_are_problems():
    run = b"q1 Q0 a 1 1 t\nq1 Q0 \xff 2 1 t\nq1 Q0 b\x00c 3 1 t\n"

    with pytest.raises(InvalidInput) as raised:
        import_trec(
            team=make_team(),
            run=io.BytesIO(run),
            topics=io.BytesIO(b"q1\tshoes\x00\n"),
            name="n",
            scale="graded",
            metrics=[("ndcg", 10)],
        )

    assert raised.value.problems == [
        "topics line 1: contains a NUL character",
        "run line 2: not UTF-8 text",
        "run line 3: contains a NUL character",
    ]

"""TREC files in, trec_eval's numbers out: the `trec` profile on files as TREC has them.

The files are built here as TREC's are: runs deeper than 100, relevant documents the run
did not retrieve, queries judged but not run, score ties (trec_eval orders them by docno,
descending), text after the run tag. pytrec_eval runs trec_eval's own code on the same
files; every measure Relevo offers that trec_eval has must match per query and in the
mean, at several cutoffs and over the whole list.
"""

import io
import json
import math
import random
from pathlib import Path

import pytest
from django.core.management import call_command

from apps.engine import WHOLE_LIST
from apps.evaluations.models import EvaluationMetric, Keyword, UnretrievedJudgement
from apps.interchange.document import import_document
from apps.interchange.export import export_document, export_qrels, export_run
from apps.interchange.trec import import_trec
from apps.interchange.trec_eval_output import export_trec_eval
from apps.scoring.models import KeywordMetric
from tests.factories import make_team

pytestmark = pytest.mark.django_db

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTOFFS = (1, 5, 10, 100, 250, 1000)
# Relevo's metric -> (trec_eval name at a cutoff, over the whole list)
TREC_EVAL_NAMES = {
    "precision": ("P_{k}", "set_P"),
    "ap": ("map_cut_{k}", "map"),
    "recall": ("recall_{k}", "set_recall"),
    "ndcg": ("ndcg_cut_{k}", "ndcg"),
}
# Measures trec_eval has over the whole list only.
WHOLE_LIST_NAMES = {
    "rr": "recip_rank",
    "rprec": "Rprec",
    "bpref": "bpref",
    "gm_ap": "gm_map",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "iprec_avg": "11pt_avg",
    **{f"iprec_{level}": f"iprec_at_recall_{level / 100:.2f}" for level in range(0, 101, 10)},
}
COUNTS = ("num_ret", "num_rel", "num_rel_ret")
METRICS = [(metric, k) for metric in TREC_EVAL_NAMES for k in (*CUTOFFS, WHOLE_LIST)]
METRICS += [(metric, WHOLE_LIST) for metric in WHOLE_LIST_NAMES]
METRICS += [("success", k) for k in (1, 5, 10)]
MEASURES = {
    *(f"{name}.{','.join(map(str, CUTOFFS))}" for name in ("P", "map_cut", "recall", "ndcg_cut")),
    *("set_P", "set_recall", "map", "ndcg", "recip_rank", "success.1,5,10"),
    *("Rprec", "bpref", "num_ret", "num_rel", "num_rel_ret", "11pt_avg", "iprec_at_recall"),
    "gm_map",
}


def trec_eval_name(metric: str, k: int) -> str:
    if metric in WHOLE_LIST_NAMES:
        return WHOLE_LIST_NAMES[metric]
    if metric == "success":
        return f"success_{k}"
    at_k, whole = TREC_EVAL_NAMES[metric]
    return whole if k == WHOLE_LIST else at_k.format(k=k)


def trec_eval_printed(metric: str, value: float) -> str:
    """A value as trec_eval -q prints it: counts whole, the rest with four decimals."""
    return str(int(value)) if metric in COUNTS else f"{value:6.4f}"


def write_trec_files(folder: Path, seed: int) -> tuple[Path, Path]:
    """A run of 30 queries up to 1,200 deep, with tied scores and text after some tags;
    qrels judging part of it, documents it did not retrieve, and two queries it lacks."""
    rng = random.Random(seed)
    run_lines, qrels_lines = [], []
    for query in range(30):
        qid = str(401 + query)
        depth = rng.choice([3, 40, 150, 1000, 1200])
        for rank in range(1, depth + 1):
            # Coarse scores: many ties, which trec_eval breaks by docno, descending.
            score = round(rng.uniform(0, 20), 0 if query % 2 else 3)
            tail = " trailing words" if rank % 97 == 0 else ""
            run_lines.append(f"{qid} Q0 D{query}-{rank} {rank} {score} run-a{tail}")
            if rng.random() < 0.15:
                qrels_lines.append(f"{qid} 0 D{query}-{rank} {rng.choice([0, 0, 1, 2, 3])}")
        if query % 5:  # judged documents the run did not retrieve
            for number in range(rng.randint(1, 60)):
                qrels_lines.append(f"{qid} 0 X{query}-{number} {rng.choice([0, 1, 1, 2, 3])}")
    qrels_lines += ["998 0 Z1 2", "999 0 Z2 0"]  # judged, not run
    rng.shuffle(run_lines)
    rng.shuffle(qrels_lines)
    run, qrels = folder / "run.txt", folder / "qrels.txt"
    run.write_text("\n".join(run_lines) + "\n")
    qrels.write_text("\n".join(qrels_lines) + "\n")
    return run, qrels


def reference(run: Path, qrels: Path) -> dict[str, dict[str, float]]:
    """trec_eval's per-query values (pytrec_eval; it ignores text after the tag too)."""
    judged: dict[str, dict[str, int]] = {}
    for line in qrels.read_text().splitlines():
        qid, _, docno, grade = line.split()
        judged.setdefault(qid, {})[docno] = int(grade)
    scored: dict[str, dict[str, float]] = {}
    for line in run.read_text().splitlines():
        qid, _, docno, _, score = line.split()[:5]
        scored.setdefault(qid, {})[docno] = float(score)
    return pytrec_eval.RelevanceEvaluator(judged, MEASURES).evaluate(scored)


def import_files(run: Path, qrels: Path, **settings):
    with run.open("rb") as run_file, qrels.open("rb") as qrels_file:
        return import_trec(
            team=settings.pop("team", None) or make_team(),
            run=run_file,
            qrels=qrels_file,
            name="run-a",
            scale="graded",
            profile=settings.pop("profile_override", "trec"),
            metrics=METRICS,
            **settings,
        )


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory):
    return write_trec_files(tmp_path_factory.mktemp("trec"), seed=7)


def test_every_measure_equals_trec_eval_per_query_and_in_the_mean(trec_files):
    run, qrels = trec_files
    expected = reference(run, qrels)
    evaluation = import_files(run, qrels).evaluation

    ours: dict[str, dict[tuple[str, int], float | None]] = {}
    for text, metric, k, value in KeywordMetric.objects.filter(evaluation=evaluation).values_list(
        "keyword__text", "metric", "k", "value"
    ):
        ours.setdefault(text, {})[(metric, k)] = value
    assert set(expected) <= set(ours)
    for qid, values in ours.items():
        if qid not in expected:
            # Judged but not run: trec_eval skips it, and so do Relevo's means.
            assert qid in ("998", "999")
            assert all(value is None for value in values.values())
            continue
        for metric, k in METRICS:
            reference_value = expected[qid][trec_eval_name(metric, k)]
            assert values[(metric, k)] == pytest.approx(reference_value, abs=1e-9), (qid, metric, k)
    for row in EvaluationMetric.objects.filter(evaluation=evaluation):
        name = trec_eval_name(row.metric, row.k)
        # (trec_eval's `all` line sums the counts; the export test checks that.)
        mean = sum(measures[name] for measures in expected.values()) / len(expected)
        if name == "gm_map":  # per query log AP; in all, exp of their mean
            mean = math.exp(mean)
        assert row.value == pytest.approx(mean, abs=1e-9), (row.metric, row.k)


def test_with_c_a_judged_query_without_results_counts_as_zero_in_the_means(trec_files):
    run, qrels = trec_files
    expected = reference(run, qrels)
    evaluation = import_files(run, qrels, zero_without_results=True).evaluation

    map_row = EvaluationMetric.objects.get(evaluation=evaluation, metric="ap", k=WHOLE_LIST)
    total = sum(measures["map"] for measures in expected.values())
    # trec_eval -c: the two judged queries without results count, as 0.
    assert map_row.value == pytest.approx(total / (len(expected) + 2), abs=1e-9)
    assert map_row.value_count == len(expected) + 2


def test_the_import_keeps_unretrieved_judgements_and_reports_what_it_did(trec_files):
    run, qrels = trec_files
    qrels_lines = qrels.read_text().splitlines()
    unretrieved_lines = [line for line in qrels_lines if " X" in line or " Z" in line]

    imported = import_files(run, qrels)

    report = imported.report
    assert report.keywords == 32
    assert report.results == len(run.read_text().splitlines())
    assert report.judged_not_retrieved == len(unretrieved_lines)
    assert report.queries_with_judgements_only == 2
    judged_results = len(qrels_lines) - len(unretrieved_lines)
    assert report.results_without_judgements == report.results - judged_results
    assert report.score_ties_broken_by_docno > 0
    kept = UnretrievedJudgement.objects.filter(keyword__evaluation=imported.evaluation)
    assert kept.count() == len(unretrieved_lines)
    # They are no results: no snapshot, so no slot in any grader's queue.
    assert not imported.evaluation.keywords.filter(snapshots__doc_id__startswith="X").exists()
    assert Keyword.objects.get(evaluation=imported.evaluation, text="998").snapshots.count() == 0


def test_the_trec_eval_export_prints_what_trec_eval_q_prints(trec_files):
    run, qrels = trec_files
    expected = reference(run, qrels)
    evaluation = import_files(run, qrels).evaluation
    out = io.StringIO()

    export_trec_eval(evaluation, out)

    lines = out.getvalue().splitlines()
    values = {}
    for line in lines:
        measure, query, value = line.split("\t")
        assert len(measure) >= 22  # padded as trec_eval pads it
        values[(measure.strip(), query)] = value
    for qid, measures in expected.items():
        for metric, k in METRICS:
            name = trec_eval_name(metric, k)
            if name == "gm_map":
                assert (name, qid) not in values  # trec_eval prints it in `all` only
                continue
            assert values[(name, qid)] == trec_eval_printed(metric, measures[name]), (name, qid)
    assert ("map", "998") not in values  # not evaluated, as trec_eval leaves it out
    assert values[("num_q", "all")] == str(len(expected))
    assert values[("runid", "all")] == "run-a"  # the run file's tag
    mean_map = sum(m["map"] for m in expected.values()) / len(expected)
    assert values[("map", "all")] == f"{mean_map:6.4f}"
    mean_log = sum(m["gm_map"] for m in expected.values()) / len(expected)
    assert values[("gm_map", "all")] == f"{math.exp(mean_log):6.4f}"
    for count in COUNTS:
        assert values[(count, "all")] == str(int(sum(m[count] for m in expected.values())))
    # Queries in trec_eval's order (ids as text), measures in its order within each.
    queries = [line.split("\t")[1] for line in lines if not line.endswith("run-a")]
    blocks = list(dict.fromkeys(query for query in queries if query != "all"))
    assert blocks == sorted(blocks)
    first_block = [line.split("\t")[0].strip() for line in lines if f"\t{blocks[0]}\t" in line]
    assert first_block.index("num_ret") < first_block.index("map") < first_block.index("bpref")
    assert first_block.index("map") < first_block.index("recip_rank") < first_block.index("P_1")
    assert first_block.index("iprec_at_recall_0.00") < first_block.index("iprec_at_recall_0.10")
    assert first_block.index("iprec_at_recall_0.90") < first_block.index("iprec_at_recall_1.00")
    assert first_block.index("P_5") < first_block.index("P_10") < first_block.index("P_100")


def test_an_export_round_trip_gives_back_the_same_trec_files(trec_files):
    """Import TREC, export JSON, import that JSON, export TREC: the same run and qrels."""
    run, qrels = trec_files
    first = import_files(run, qrels).evaluation
    document = io.StringIO()
    export_document(first, document)
    assert '"unretrieved"' in document.getvalue()

    second = import_document(team=make_team(), source=io.BytesIO(document.getvalue().encode()))

    for export in (export_run, export_qrels):
        before, after = io.StringIO(), io.StringIO()
        export(first, before)
        export(second, after)
        assert after.getvalue() == before.getvalue()
        assert before.getvalue()
    assert second.zero_without_results == first.zero_without_results
    metrics = EvaluationMetric.objects.filter
    assert [(m.metric, m.k, m.value) for m in metrics(evaluation=second)] == [
        (m.metric, m.k, m.value) for m in metrics(evaluation=first)
    ]


def test_the_exported_trec_files_import_back_to_the_same_metrics(tmp_path, trec_files):
    run, qrels = trec_files
    first = import_files(run, qrels).evaluation
    run_out, qrels_out = tmp_path / "out.run", tmp_path / "out.qrels"
    with run_out.open("w") as out:
        export_run(first, out)
    with qrels_out.open("w") as out:
        export_qrels(first, out)

    second = import_files(run_out, qrels_out).evaluation

    first_values = EvaluationMetric.objects.filter(evaluation=first).values_list("metric", "k")
    for metric, k in first_values:
        a = EvaluationMetric.objects.get(evaluation=first, metric=metric, k=k).value
        b = EvaluationMetric.objects.get(evaluation=second, metric=metric, k=k).value
        assert b == pytest.approx(a, abs=1e-12), (metric, k)


def test_the_commands_report_the_import_and_print_trec_eval_lines(tmp_path, trec_files):
    run, qrels = trec_files
    team = make_team()
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "import_trec",
        *("--team", str(team.id), "--run", str(run), "--qrels", str(qrels)),
        *("--scale", "graded", "--profile", "trec", "--metrics", "ap,ndcg@10,precision@5"),
        "--zero-without-results",
        "--no-progress",
        stdout=out,
        stderr=err,
    )
    evaluation_id = int(out.getvalue().strip())
    assert "judged documents not retrieved" in err.getvalue()
    assert "2 queries with judgements only" in err.getvalue()

    printed = io.StringIO()
    call_command("export_evaluation", str(evaluation_id), "--format", "trec_eval", stdout=printed)

    names = {line.split("\t")[0].strip() for line in printed.getvalue().splitlines()}
    assert {"map", "ndcg_cut_10", "P_5", "num_q", "runid"} <= names
    num_q = [line for line in printed.getvalue().splitlines() if line.startswith("num_q")]
    assert num_q[0].split("\t")[2] == "32"  # -c: the two judged queries without results


def test_a_json_document_carries_unretrieved_judgements_checked_like_grades():
    document = {
        "format": "relevo.evaluation/1",
        "name": "pool",
        "scale": "graded",
        "profile": "trec",
        "metrics": [{"metric": "ap", "k": None}, {"metric": "recall", "k": 1000}],
        "keywords": [
            {
                "keyword": "q",
                "snapshots": [{"position": 1, "doc_id": "a", "grades": [3]}],
                "unretrieved": [{"doc_id": "b", "grade": 2}, {"doc_id": "c", "grade": 0}],
            }
        ],
    }
    evaluation = import_document(team=make_team(), source=io.BytesIO(json.dumps(document).encode()))
    values = dict(
        EvaluationMetric.objects.filter(evaluation=evaluation).values_list("metric", "value")
    )
    # R = 2 (a and b): AP = (1/1) / 2, recall = 1/2.
    assert values == {"ap": 0.5, "recall": 0.5}

    from apps.core.errors import InvalidInput

    document["keywords"][0]["unretrieved"] = [
        {"doc_id": "a", "grade": 1},
        {"doc_id": "b", "grade": 9},
        {"doc_id": "c", "grade": 1},
        {"doc_id": "c", "grade": 1},
        {"doc_id": "", "grade": 1},
        {"doc_id": "d"},
        "e",
    ]
    with pytest.raises(InvalidInput) as raised:
        import_document(team=make_team(), source=io.BytesIO(json.dumps(document).encode()))
    assert raised.value.problems == [
        "keywords[0].unretrieved[0].doc_id: 'a' is among the keyword's results; judge it there",
        "keywords[0].unretrieved[1].grade: 9 is not a graded grade (0, 1, 2, 3)",
        "keywords[0].unretrieved[3].doc_id: duplicate of keywords[0].unretrieved[2]",
        "keywords[0].unretrieved[4].doc_id: required, a text of 1 to 500",
        "keywords[0].unretrieved[5].grade: required",
        'keywords[0].unretrieved[6]: must be an object {"doc_id", "grade"}',
    ]


def test_changing_the_profile_of_a_pending_import_rescores_it_as_a_fresh_import(
    trec_files, django_capture_on_commit_callbacks
):
    """A settings change marks every keyword, so the recompute stores over what the old
    settings gave (the version guard would otherwise keep it as fresh)."""
    from apps.lifecycle.editing import evaluation_update

    run, qrels = trec_files
    fresh = import_files(run, qrels).evaluation
    changed = import_files(run, qrels, profile_override="searchtweak").evaluation
    ap = {"metric": "ap", "k": WHOLE_LIST}
    assert (
        EvaluationMetric.objects.get(evaluation=changed, **ap).value
        != EvaluationMetric.objects.get(evaluation=fresh, **ap).value
    )

    with django_capture_on_commit_callbacks(execute=True):
        evaluation_update(evaluation=changed, profile="trec", zero_without_results=True)
    with django_capture_on_commit_callbacks(execute=True):
        evaluation_update(evaluation=fresh, zero_without_results=True)

    def values(evaluation):
        return sorted(
            KeywordMetric.objects.filter(evaluation=evaluation).values_list(
                "keyword__text", "metric", "k", "value"
            )
        )

    assert values(changed) == values(fresh)
    means = EvaluationMetric.objects.filter
    assert [m.value for m in means(evaluation=changed)] == [
        m.value for m in means(evaluation=fresh)
    ]
    assert not Keyword.objects.filter(evaluation=changed, needs_scoring=True).exists()

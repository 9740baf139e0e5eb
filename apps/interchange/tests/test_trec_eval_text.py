"""The `trec_eval` export line by line against trec_eval's rules, on small files: which
queries it prints and counts, the names it gives, the `all` block, negative levels and
the -c edges. pytrec_eval runs trec_eval's own code for the expected values."""

import io
import math

import pytest

from apps.engine import WHOLE_LIST
from apps.interchange.trec import import_trec
from apps.interchange.trec_eval_output import export_trec_eval
from tests.factories import make_team

pytestmark = pytest.mark.django_db

pytrec_eval = pytest.importorskip("pytrec_eval")

RUN = """\
q1 Q0 a 1 9 tagged-run
q1 Q0 b 2 8 tagged-run
q1 Q0 c 3 7 tagged-run
q2 Q0 d 1 9 tagged-run
q2 Q0 e 2 8 tagged-run
q3 Q0 f 1 9 tagged-run
q3 Q0 g 2 8 tagged-run
"""
# q3 has no judgements; q4 is judged but not in the run.
QRELS = """\
q1 0 a 1
q1 0 b -1
q1 0 x 2
q2 0 e 1
q2 0 d 0
q4 0 z 1
q4 0 y 2
"""


def exported(metrics, *, scale="custom", **settings) -> dict[tuple[str, str], str]:
    imported = import_trec(
        team=make_team(),
        run=io.BytesIO(RUN.encode()),
        qrels=io.BytesIO(QRELS.encode()),
        name="small",
        scale=scale,
        profile="trec",
        metrics=metrics,
        **settings,
    )
    out = io.StringIO()
    export_trec_eval(imported.evaluation, out)
    lines = [line.split("\t") for line in out.getvalue().splitlines()]
    return {(measure.strip(), query): value for measure, query, value in lines}


def trec_eval(measures, *, judged_only=False) -> dict[str, dict[str, float]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in QRELS.splitlines():
        qid, _, docno, level = line.split()
        qrels.setdefault(qid, {})[docno] = int(level)
    run: dict[str, dict[str, float]] = {}
    for line in RUN.splitlines():
        qid, _, docno, _, score, _ = line.split()
        run.setdefault(qid, {})[docno] = float(score)
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


def test_coverage_measures_print_and_count_only_the_queries_the_qrels_judge():
    values = exported([("judged", 10), ("unjudged", 10), ("ap", WHOLE_LIST)])
    queries = {query for _, query in values} - {"all"}
    assert queries == {"q1", "q2"}  # q3 has results but no judgements
    assert values[("num_q", "all")] == "2"
    assert values[("runid", "all")] == "tagged-run"  # the run file's tag
    # q1: a judged, b pooled but unjudged (-1), c outside the pool; q2: both judged.
    assert values[("unjudged_cut_10", "q1")] == "2.0000"
    assert values[("unjudged_cut_10", "all")] == "1.0000"  # over q1 and q2 only


def test_gm_map_is_printed_in_the_all_block_only():
    values = exported([("gm_ap", WHOLE_LIST), ("ap", WHOLE_LIST)])
    assert ("gm_map", "q1") not in values and ("map", "q1") in values
    expected = trec_eval({"map"})
    mean_log = sum(math.log(max(q["map"], 0.00001)) for q in expected.values()) / 2
    assert values[("gm_map", "all")] == f"{math.exp(mean_log):6.4f}"


def test_whole_list_f1_is_set_f_and_inferred_ap_is_infap_as_trec_eval_prints_them():
    values = exported([("f1", WHOLE_LIST), ("infap", WHOLE_LIST), ("bpref", WHOLE_LIST)])
    expected = trec_eval({"set_F", "infAP", "bpref"})
    for query in ("q1", "q2"):
        for name in ("set_F", "infAP", "bpref"):
            assert values[(name, query)] == f"{expected[query][name]:6.4f}", (name, query)


def test_with_c_the_query_without_results_floors_gm_map_and_keeps_its_r_in_num_rel():
    values = exported(
        [("gm_ap", WHOLE_LIST), ("num_rel", WHOLE_LIST), ("ap", WHOLE_LIST)],
        zero_without_results=True,
    )
    assert values[("num_q", "all")] == "3"  # q1, q2 and the judged q4 without results
    assert values[("num_rel", "q4")] == "2"
    assert values[("num_rel", "all")] == "5"  # q1: a and x; q2: e; q4: z and y
    expected = trec_eval({"map"})
    logs = [math.log(max(expected[q]["map"], 0.00001)) for q in ("q1", "q2")]
    logs.append(math.log(0.00001))
    assert values[("gm_map", "all")] == f"{math.exp(sum(logs) / 3):6.4f}"


def test_the_trec_eval_command_scores_files_without_storing_anything(tmp_path):
    from django.core.management import call_command

    from apps.evaluations.models import Evaluation

    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    out = io.StringIO()
    call_command(
        "trec_eval", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "map", stdout=out
    )
    expected = trec_eval({"map"})
    mean = (expected["q1"]["map"] + expected["q2"]["map"]) / 2
    assert out.getvalue().splitlines() == [
        "runid                 \tall\ttagged-run",
        "num_q                 \tall\t2",
        f"map                   \tall\t{mean:6.4f}",
    ]
    assert not Evaluation.objects.exists()

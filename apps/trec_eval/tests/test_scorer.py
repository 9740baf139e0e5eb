"""`manage.py trec_eval` prints what trec_eval prints: every value on every line against
pytrec_eval (trec_eval's own code) on generated files with score ties, negative levels,
queries judged but not run and run but not judged, under -q, -c, -J, -l and -M."""

import io
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from apps.trec_eval.cli import main
from apps.trec_eval.files import FileProblems
from apps.trec_eval.measures import MeasureError
from apps.trec_eval.report import write_report
from apps.trec_eval.scorer import Options, score_files

pytrec_eval = pytest.importorskip("pytrec_eval")

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = Path(__file__).parent / "golden"
# pytrec_eval's names for every measure Relevo has (-m all_trec).
PYTREC_MEASURES = {
    "P", "recall", "map", "map_cut", "ndcg", "ndcg_cut", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "num_ret", "num_rel", "num_rel_ret", "infAP", "11pt_avg", "success",
    "set_P", "set_recall", "set_F", "gm_map",
}  # fmt: skip
COUNTS = {"num_ret", "num_rel", "num_rel_ret"}


def generated_files(seed: int) -> tuple[str, str]:
    """qrels with levels -1 to 3 and a run of 40 queries up to 1,200 deep with score
    ties; two queries judged but not run, two run but not judged."""
    rng = random.Random(seed)
    qrels, run = [], []
    for query in range(40):
        qid = f"{301 + query}"
        depth = rng.choice([1, 8, 60, 300, 1200])
        for rank in range(depth):
            score = round(rng.uniform(0, 30), 0 if query % 3 == 0 else 4)  # ties
            run.append(f"{qid} Q0 doc{query}-{rank} {rank + 1} {score} seeded-run")
            if query < 38 and rng.random() < 0.3:
                qrels.append(f"{qid} 0 doc{query}-{rank} {rng.choice([-1, 0, 0, 1, 2, 3])}")
        if query < 38:
            for extra in range(rng.choice([0, 2, 10])):
                qrels.append(f"{qid} 0 other{query}-{extra} {rng.choice([-1, 0, 1, 3])}")
    qrels += ["398 0 lone-1 2", "398 0 lone-2 0", "399 0 lone-3 -1"]  # judged, not run
    rng.shuffle(run)
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def reference(qrels_text, run_text, *, level=1, judged_only=False, depth=None):
    """pytrec_eval's values per query: name -> value, as trec_eval -q prints them."""
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_text.splitlines():
        qid, _, docno, grade = line.split()
        qrels.setdefault(qid, {})[docno] = int(grade)
    run: dict[str, dict[str, float]] = {}
    for line in run_text.splitlines():
        qid, _, docno, _, score = line.split()[:5]
        run.setdefault(qid, {})[docno] = float(score)
    if depth is not None:  # -M: the first `depth` results in trec_eval's order
        for qid, scored in run.items():
            kept = sorted(scored, key=lambda d: (scored[d], d), reverse=True)[:depth]
            run[qid] = {docno: scored[docno] for docno in kept}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, PYTREC_MEASURES, relevance_level=level, judged_docs_only_flag=judged_only
    )
    return evaluator.evaluate(run), qrels


def scored(qrels_text, run_text, **options):
    report = score_files(
        io.BytesIO(qrels_text.encode()), io.BytesIO(run_text.encode()), Options(**options)
    )
    out = io.StringIO()
    write_report(report, out, per_query_lines=True)
    lines = {}
    for line in out.getvalue().splitlines():
        name, query, value = line.split("\t")
        lines[(name.rstrip(), query)] = value
    return lines


def printed(name: str, value: float) -> str:
    return str(int(value)) if name in COUNTS else f"{value:6.4f}"


@pytest.mark.parametrize(
    "options",
    [{}, {"relevance_level": 2}, {"judged_only": True}, {"max_results": 50}],
    ids=["plain", "-l 2", "-J", "-M 50"],
)
def test_every_line_of_every_query_equals_trec_eval(options):
    qrels_text, run_text = generated_files(seed=3)
    expected, _ = reference(
        qrels_text,
        run_text,
        level=options.get("relevance_level", 1),
        judged_only=options.get("judged_only", False),
        depth=options.get("max_results"),
    )
    lines = scored(qrels_text, run_text, measures=["all_trec"], **options)
    compared = 0
    for qid, measures in expected.items():
        for name, value in measures.items():
            if name == "gm_map":
                assert (name, qid) not in lines  # trec_eval prints it in `all` only
                continue
            if math.isnan(value):
                # -J left the query no result: trec_eval divides 0 by 0 for the recall
                # levels no relevant result is needed for; Relevo says 0 (docs/metrics.md).
                assert name.startswith("iprec_at_recall") or name == "11pt_avg"
                assert measures["num_ret"] == 0 and lines[(name, qid)] == "0.0000"
                continue
            assert lines[(name, qid)] == printed(name, value), (name, qid)
            compared += 1
    queries = {query for _, query in lines} - {"all"}
    assert queries == set(expected)  # judged and run: neither 398 nor the unjudged 339, 340
    assert lines[("num_q", "all")] == str(len(expected))
    assert lines[("runid", "all")] == "seeded-run"
    for name in ("map", "P_10", "ndcg_cut_10", "infAP", "set_F", "bpref", "iprec_at_recall_0.50"):
        values = [measures[name] for measures in expected.values()]
        mean = sum(0.0 if math.isnan(value) else value for value in values) / len(values)
        assert lines[(name, "all")] == printed(name, mean), name
    logs = [measures["gm_map"] for measures in expected.values()]
    assert lines[("gm_map", "all")] == printed("gm_map", math.exp(sum(logs) / len(logs)))
    assert compared > 30 * 60  # some 36 queries of 63 measures each


def test_with_c_judged_queries_the_run_lacks_count_as_zero_with_their_r():
    qrels_text, run_text = generated_files(seed=4)
    expected, qrels = reference(qrels_text, run_text)
    lines = scored(qrels_text, run_text, measures=["all_trec"], complete=True)
    assert lines[("num_q", "all")] == str(len(qrels))
    assert lines[("map", "398")] == "0.0000" and lines[("num_rel", "398")] == "1"
    assert lines[("map", "399")] == "0.0000" and lines[("num_rel", "399")] == "0"
    num_rel = sum(1 for levels in qrels.values() for level in levels.values() if level >= 1)
    assert lines[("num_rel", "all")] == str(num_rel)
    maps = [expected.get(qid, {}).get("map", 0.0) for qid in qrels]
    assert lines[("map", "all")] == printed("map", sum(maps) / len(maps))
    gmap = math.exp(sum(math.log(max(value, 0.00001)) for value in maps) / len(maps))
    assert lines[("gm_map", "all")] == printed("gm_map", gmap)


def test_the_text_equals_the_golden_file_line_for_line(tmp_path):
    """The golden file was written once from pytrec_eval's values and trec_eval's rules
    of printing (order, padding, `all`); see make_golden below."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text((GOLDEN / "small.qrels").read_text())
    run.write_text((GOLDEN / "small.run").read_text())
    out, err = io.StringIO(), io.StringIO()
    assert main([str(qrels), str(run), "-q", "-c"], out, err) == 0, err.getvalue()
    assert out.getvalue() == (GOLDEN / "small.q.c.out").read_text()


def test_manage_py_trec_eval_runs_before_django_starts_and_says_what_is_wrong(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 a 1\nq1 0 b two\n")
    run.write_text("q1 Q0 a 1 2.5 r\nq1 Q0 a 2 2.0 r\n")
    answer = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "trec_eval", str(qrels), str(run)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin"},  # no DJANGO_SETTINGS_MODULE, no database
    )
    assert answer.returncode == 1
    assert f"{qrels} line 2: level 'two' must be a whole number from -100 to 100" in answer.stderr
    assert f"{run} line 2: docno 'a' retrieved twice for qid 'q1'" in answer.stderr
    assert answer.stdout == ""


@pytest.mark.parametrize(
    ("qrels_text", "run_text", "problem"),
    [
        ("q1 0 a 1 extra\n", "q1 Q0 a 1 1 r\n", "qrels line 1: expected 4 columns"),
        ("q1 0 a 101\n", "q1 Q0 a 1 1 r\n", "level '101' must be a whole number"),
        ("q1 0 a ²\n", "q1 Q0 a 1 1 r\n", "level '²' must be a whole number"),
        ("q1 0 a 1\n", "q1 Q0 a 1 nan r\n", "run line 1: score 'nan' is not a finite number"),
        ("q1 0 a 1\n", "q1 Q0 a 1 ١ r\n", "score '١' is not a finite number"),
        ("q1 0 a 1\n", "q1 Q0 a 1\n", "run line 1: expected 6 columns"),
        ("q1 0 a 1\n", "q1 Q0 " + "d" * 501 + " 1 1 r\n", "docno longer than 500"),
        ("q1 0 a 1\n", "x" * 5000, "run line 1: longer than 4096 bytes"),
        ("q1 0 a 1\n", "q1 Q0 \xff 1 1 r\n", None),
    ],
)
def test_bad_lines_are_refused_naming_the_file_and_line(qrels_text, run_text, problem):
    run_bytes = run_text.encode("latin-1") if problem is None else run_text.encode()
    with pytest.raises(FileProblems) as refused:
        score_files(io.BytesIO(qrels_text.encode()), io.BytesIO(run_bytes), Options())
    assert any((problem or "run line 1: not UTF-8 text") in p for p in refused.value.problems)


def test_a_measure_relevo_does_not_compute_is_refused_by_name():
    with pytest.raises(MeasureError, match="-m utility: not a measure Relevo computes"):
        score_files(
            io.BytesIO(b"q 0 a 1\n"), io.BytesIO(b"q Q0 a 1 1 r\n"), Options(measures=["utility"])
        )
    with pytest.raises(FileProblems, match="-M: at most"):
        score_files(io.BytesIO(b"q 0 a 1\n"), io.BytesIO(b"q Q0 a 1 1 r\n"), Options(max_results=0))


def make_golden() -> None:
    """Write the golden files (run once by hand: python -m apps.trec_eval.tests.test_scorer):
    the values from pytrec_eval, the printing by trec_eval's rules written out here."""
    qrels_text, run_text = generated_files(seed=9)
    qrels_lines = qrels_text.splitlines()
    qrels_text = "\n".join([*qrels_lines[:120], *qrels_lines[-3:]]) + "\n"  # 398, 399 too
    run_text = "\n".join(line for line in run_text.splitlines() if int(line.split()[0]) < 306)
    run_text += "\n"
    expected, qrels = reference(qrels_text, run_text)
    run_queries = {line.split()[0] for line in run_text.splitlines()}
    for qid, levels in qrels.items():  # -c: judged queries the run lacks, all 0 but R
        if qid not in run_queries:
            zeros = dict.fromkeys(next(iter(expected.values())), 0.0)
            zeros["num_rel"] = sum(1 for level in levels.values() if level >= 1)
            zeros["gm_map"] = math.log(0.00001)
            expected[qid] = zeros
    order = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref"]
    order += ["recip_rank"] + [f"iprec_at_recall_{level / 10:.2f}" for level in range(11)]
    order += [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    lines = []
    for qid in sorted(expected):
        for name in order:
            if name != "gm_map":
                lines.append(f"{name:<22}\t{qid}\t{printed(name, expected[qid][name])}")
    lines.append(f"{'runid':<22}\tall\tseeded-run")
    lines.append(f"{'num_q':<22}\tall\t{len(expected)}")
    for name in order:
        values = [measures[name] for measures in expected.values()]
        total = sum(values) if name in COUNTS else sum(values) / len(values)
        if name == "gm_map":
            total = math.exp(total)
        lines.append(f"{name:<22}\tall\t{printed(name, total)}")
    GOLDEN.mkdir(exist_ok=True)
    (GOLDEN / "small.qrels").write_text(qrels_text)
    (GOLDEN / "small.run").write_text(run_text)
    (GOLDEN / "small.q.c.out").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    make_golden()

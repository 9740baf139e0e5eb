"""Property: for any small qrels and run, with any of -l, -J, -M and -c, every value the
scorer prints equals what trec_eval (pytrec_eval) computes for the same files."""

import io
import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from apps.trec_eval.report import write_report
from apps.trec_eval.scorer import Options, score_files

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = {"map", "P", "ndcg", "ndcg_cut", "bpref", "Rprec", "recip_rank", "infAP", "num_rel"}
MEASURES |= {"num_ret", "num_rel_ret", "set_F", "recall", "success", "iprec_at_recall"}
DOCS = [f"d{n}" for n in range(12)]

queries = st.sampled_from(["q1", "q2", "q3"])
# pytrec_eval crashes on levels below -1, so -1 stands for every negative level here.
qrels_lines = st.dictionaries(st.tuples(queries, st.sampled_from(DOCS)), st.integers(-1, 3))
run_lines = st.dictionaries(
    st.tuples(queries, st.sampled_from(DOCS)), st.integers(0, 5).map(float), max_size=30
)
options = st.fixed_dictionaries(
    {},
    optional={
        "relevance_level": st.integers(1, 3),
        "judged_only": st.booleans(),
        "max_results": st.integers(1, 6),
        "complete": st.booleans(),
    },
)


def as_text(lines, run: bool) -> bytes:
    if run:
        rows = [f"{q} Q0 {d} 1 {score} prop" for (q, d), score in lines.items()]
    else:
        rows = [f"{q} 0 {d} {level}" for (q, d), level in lines.items()]
    return ("\n".join(rows) + "\n").encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_lines, run=run_lines, chosen=options)
def test_every_printed_value_equals_trec_eval(qrels, run, chosen):
    report = score_files(
        io.BytesIO(as_text(qrels, False)),
        io.BytesIO(as_text(run, True)),
        Options(measures=["all_trec"], **chosen),
    )
    out = io.StringIO()
    write_report(report, out)
    printed = {
        (name.strip(), query): value
        for name, query, value in (line.split("\t") for line in out.getvalue().splitlines())
    }

    judged: dict[str, dict[str, int]] = {}
    for (q, d), level in qrels.items():
        judged.setdefault(q, {})[d] = level
    # pytrec_eval crashes on a query whose qrels are all below 0; Relevo's reading of one
    # is tested against trec_eval's rule in apps/engine/tests/test_trec_eval_edges.py.
    assume(all(any(level >= 0 for level in levels.values()) for levels in judged.values()))
    scored: dict[str, dict[str, float]] = {}
    for (q, d), score in run.items():
        scored.setdefault(q, {})[d] = score
    if "max_results" in chosen:  # -M: the first N in trec_eval's order
        for q, docs in scored.items():
            kept = sorted(docs, key=lambda d: (docs[d], d), reverse=True)[: chosen["max_results"]]
            scored[q] = {d: docs[d] for d in kept}
    expected = pytrec_eval.RelevanceEvaluator(
        judged,
        MEASURES,
        relevance_level=chosen.get("relevance_level", 1),
        judged_docs_only_flag=chosen.get("judged_only", False),
    ).evaluate(scored)

    evaluated = set(judged) if chosen.get("complete") else set(judged) & set(scored)
    assert printed.get(("num_q", "all")) == str(len(evaluated))
    for q in evaluated:
        for name, value in expected.get(q, {}).items():
            shown = printed[(name, q)]
            if math.isnan(value):  # -J emptied the query: trec_eval's 0/0, Relevo's 0
                assert shown == "0.0000"
            elif name.startswith("num_"):
                assert shown == str(int(value)), (name, q)
            else:
                assert shown == f"{value:6.4f}", (name, q)

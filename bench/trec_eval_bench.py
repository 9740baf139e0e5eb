"""The standalone scorer's speed against pytrec_eval's, as whole processes.

Run: .venv/bin/python bench/trec_eval_bench.py [--runs N] [--folder DIR]

Two file pairs, written into a folder of the bench's own: a run of 1,500 lines (trec_eval's
sample test files are of that size) and one of 30,000 lines (50 queries, 600 deep), each
with qrels judging part of it on -1..3, documents it did not retrieve and queries it
lacks. For each, `farm-bench --vs` starts the two commands in turn:

  A  manage.py trec_eval QRELS RUN -q -m all_trec   (Relevo: read, score, print)
  B  a script that reads the same files, scores them with pytrec_eval on the same
     measures and prints a line per query and measure (pytrec_eval: the same work)

and prints their wall seconds (median of the runs) and A/B taken pair by pair. The
target is A/B at most 2. Before timing, both outputs are compared: every per-query value
Relevo prints must equal pytrec_eval's (the bench says how many it compared).
"""

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTREC_SCRIPT = """
import sys, pytrec_eval
qrels, run = {}, {}
for line in open(sys.argv[1]):
    q, _, d, level = line.split()
    qrels.setdefault(q, {})[d] = int(level)
for line in open(sys.argv[2]):
    q, _, d, _, score = line.split()[:5]
    run.setdefault(q, {})[d] = float(score)
measures = {"P", "recall", "map", "map_cut", "ndcg", "ndcg_cut", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "num_ret", "num_rel", "num_rel_ret", "infAP",
    "11pt_avg", "success", "set_P", "set_recall", "set_F", "gm_map"}
out = []
for q, values in sorted(pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run).items()):
    for name, value in values.items():
        out.append(f"{name:<22}\\t{q}\\t{value:6.4f}\\n")
sys.stdout.write("".join(out))
"""


def write_files(folder: Path, queries: int, depth: int, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    run_lines, qrels_lines = [], []
    for query in range(queries):
        qid = str(101 + query)
        for rank in range(depth):
            score = round(rng.uniform(0, 50), 2)
            run_lines.append(f"{qid} Q0 D{query}-{rank} {rank + 1} {score} bench-run")
            if rng.random() < (0.6 if rank < 100 else 0.05):
                qrels_lines.append(f"{qid} 0 D{query}-{rank} {rng.choice([-1, 0, 0, 1, 2, 3])}")
        for extra in range(rng.randint(0, 20)):
            qrels_lines.append(f"{qid} 0 U{query}-{extra} {rng.choice([0, 1, 2])}")
    qrels_lines += [f"{9000 + n} 0 Z{n} 1" for n in range(3)]  # judged, not run
    qrels, run = folder / f"qrels.{len(run_lines)}", folder / f"run.{len(run_lines)}"
    qrels.write_text("\n".join(qrels_lines) + "\n")
    run.write_text("\n".join(run_lines) + "\n")
    return qrels, run


def compare(qrels: Path, run: Path, script: Path) -> int:
    ours = subprocess.run(
        [sys.executable, "manage.py", "trec_eval", str(qrels), str(run), "-q", "-m", "all_trec"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    theirs = subprocess.run(
        [sys.executable, str(script), str(qrels), str(run)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    relevo = {tuple(line.split("\t")[:2]): line.split("\t")[2] for line in ours.splitlines()}
    compared = 0
    for line in theirs.splitlines():
        name, query, value = line.split("\t")
        if name.strip() == "gm_map" or query == "all":
            continue
        key = (name, query)
        expected = str(int(float(value))) if name.strip().startswith("num_") else value
        assert relevo[key] == expected, (key, relevo[key], expected)
        compared += 1
    return compared


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--folder", type=Path)
    arguments = parser.parse_args()
    folder = arguments.folder or Path(tempfile.mkdtemp(prefix="relevo-trec-eval-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "pytrec_eval_q.py"
    script.write_text(PYTREC_SCRIPT)
    for queries, depth in ((15, 100), (50, 600)):
        qrels, run = write_files(folder, queries, depth, seed=queries)
        judgements = len(qrels.read_text().splitlines())
        print(f"\n== run of {queries * depth:,} lines, qrels of {judgements:,}")
        compared = compare(qrels, run, script)
        print(f"per-query values compared with pytrec_eval: {compared:,}, all equal")
        relevo = f"{sys.executable} manage.py trec_eval {qrels} {run} -q -m all_trec"
        reference = f"{sys.executable} {script} {qrels} {run}"
        subprocess.run(
            [
                "farm-bench",
                "-n",
                str(arguments.runs),
                "--timeout",
                "600",
                "--vs",
                reference,
                "--",
                *relevo.split(),
            ],
            cwd=ROOT,
            check=True,
        )


if __name__ == "__main__":
    main()

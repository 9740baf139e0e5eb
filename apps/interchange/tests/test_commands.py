"""import_evaluation, import_trec and export_evaluation as a person runs them."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from apps.evaluations.models import Evaluation
from tests.factories import make_evaluation, make_team

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "format": "relevo.evaluation/1",
    "name": "From a file",
    "scale": "binary",
    "strategy": 1,
    "metrics": [{"metric": "precision", "k": 2}],
    "keywords": [
        {
            "keyword": "q",
            "snapshots": [
                {"position": 1, "doc_id": "a", "grades": [1]},
                {"position": 2, "doc_id": "b", "grades": [0]},
            ],
        }
    ],
}


def run(*arguments: str) -> tuple[str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command(*arguments, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


def test_import_evaluation_prints_the_new_evaluations_id_and_shows_progress(tmp_path):
    team = make_team()
    path = tmp_path / "evaluation.json"
    path.write_text(json.dumps(DOCUMENT))

    stdout, stderr = run("import_evaluation", str(path), "--team", team.name)

    evaluation = Evaluation.objects.get(id=int(stdout))
    assert (evaluation.team, evaluation.name) == (team, "From a file")
    assert evaluation.metrics.get().value == 0.5
    assert "2 snapshots" in stderr


def test_import_evaluation_of_a_bad_file_lists_every_problem_and_imports_nothing(tmp_path):
    team = make_team()
    path = tmp_path / "bad.json"
    bad = dict(DOCUMENT, scale="huge", keywords=[{"keyword": "q", "snapshots": [{}]}])
    path.write_text(json.dumps(bad))

    with pytest.raises(CommandError) as raised:
        run("import_evaluation", str(path), "--team", str(team.id), "--no-progress")

    assert str(raised.value).split("\n") == [
        f"{path} rejected; nothing was imported:",
        "scale: 'huge' is not one of binary, graded, detail, custom",
        "keywords[0].snapshots[0].position: required a whole number from 1 to 2147483647",
        "keywords[0].snapshots[0].doc_id: required, a text",
    ]
    assert not Evaluation.objects.filter(team=team).exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.json", "--team", "{team}"], "cannot read missing.json"),
        (["{file}", "--team", "nobody"], "no team 'nobody'"),
    ],
)
def test_import_evaluation_names_a_missing_file_or_team(tmp_path, arguments, message):
    team = make_team()
    path = tmp_path / "evaluation.json"
    path.write_text(json.dumps(DOCUMENT))
    filled = [a.format(team=team.id, file=path) for a in arguments]

    with pytest.raises(CommandError, match=message):
        run("import_evaluation", *filled)


def test_import_trec_reads_run_qrels_and_topics(tmp_path):
    team = make_team()
    (tmp_path / "run.txt").write_text("1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n2 Q0 c 1 1 t\n")
    (tmp_path / "qrels.txt").write_text("1 0 a 3\n1 0 b 0\n2 0 c 1\n")
    (tmp_path / "topics.tsv").write_text("1\tred shoes\n2\tblue shirt\n")

    stdout, _ = run(
        "import_trec",
        "--team",
        team.name,
        "--run",
        str(tmp_path / "run.txt"),
        "--qrels",
        str(tmp_path / "qrels.txt"),
        "--topics",
        str(tmp_path / "topics.tsv"),
        "--scale",
        "graded",
        "--metrics",
        "ndcg@10,precision@1",
        "--profile",
        "trec",
        "--no-progress",
    )

    evaluation = Evaluation.objects.get(id=int(stdout))
    assert (evaluation.name, evaluation.profile, evaluation.graded_slots) == ("run.txt", "trec", 3)
    assert list(evaluation.keywords.values_list("text", flat=True)) == ["red shoes", "blue shirt"]
    assert list(evaluation.metrics.values_list("metric", "k", "value")) == [
        ("ndcg", 10, 1.0),
        ("precision", 1, 1.0),
    ]


def test_import_trec_lists_the_problems_of_the_files_with_their_lines(tmp_path):
    team = make_team()
    (tmp_path / "run.txt").write_text("1 Q0 a 1 2 t\n1 Q0 b 2\n")
    (tmp_path / "qrels.txt").write_text("1 0 a three\n")

    with pytest.raises(CommandError) as raised:
        run(
            "import_trec",
            *("--team", str(team.id), "--scale", "binary", "--metrics", "precision@5"),
            *("--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt")),
            "--keep-rank",
        )

    assert str(raised.value).split("\n")[1:] == [
        "run.txt line 2: expected 6 columns (qid Q0 docno rank score tag), got 4",
        "qrels.txt line 1: grade 'three' is not a whole number",
    ]
    assert not Evaluation.objects.filter(team=team).exists()


def test_import_trec_refuses_metrics_that_are_not_metric_at_k(tmp_path):
    (tmp_path / "run.txt").write_text("1 Q0 a 1 2 t\n")

    with pytest.raises(CommandError, match="--metrics: 'ndcg@ten' is not metric@k"):
        run(
            "import_trec",
            *("--team", str(make_team().id), "--run", str(tmp_path / "run.txt")),
            *("--scale", "graded", "--metrics", "precision@5,ndcg@ten"),
        )


def test_export_evaluation_writes_each_format_to_stdout_or_a_file(tmp_path):
    evaluation = make_evaluation(keywords={"red shoes": 2})

    stdout, _ = run("export_evaluation", str(evaluation.id))
    assert json.loads(stdout)["id"] == evaluation.id

    stdout, _ = run("export_evaluation", str(evaluation.id), "--format", "run")
    assert stdout == (
        "red%20shoes Q0 red%20shoes-doc-1 1 2 relevo\nred%20shoes Q0 red%20shoes-doc-2 2 1 relevo\n"
    )

    output = tmp_path / "out.csv"
    stdout, _ = run(
        "export_evaluation", str(evaluation.id), "--format", "csv", "--output", str(output)
    )
    assert stdout == ""
    assert output.read_text().startswith("keyword,position,doc_id,name,value,grades,graders,")


def test_export_evaluation_of_an_unknown_id_is_an_error():
    with pytest.raises(CommandError, match="no evaluation 999999"):
        run("export_evaluation", "999999")


def test_an_exported_file_imports_again_through_the_commands(tmp_path):
    team = make_team()
    path = tmp_path / "evaluation.json"
    path.write_text(json.dumps(DOCUMENT))
    first, _ = run("import_evaluation", str(path), "--team", team.name, "--no-progress")
    exported = tmp_path / "exported.json"
    run("export_evaluation", first, "--output", str(exported))
    # The team has the first one's name, and names are unique per team: the copy gets its own.
    renamed = json.loads(exported.read_text())
    exported.write_text(json.dumps({**renamed, "name": renamed["name"] + " (copy)"}))

    second, _ = run("import_evaluation", str(exported), "--team", team.name, "--no-progress")

    assert int(second) != int(first)
    values = [Evaluation.objects.get(id=int(i)).metrics.get().value for i in (first, second)]
    assert values == [0.5, 0.5]


def test_an_exported_file_imports_into_its_own_team_under_the_name_given(tmp_path):
    evaluation = make_evaluation(keywords={"q": 2})
    exported = tmp_path / "exported.json"
    run("export_evaluation", str(evaluation.id), "--output", str(exported))

    copy, _ = run(
        "import_evaluation",
        str(exported),
        "--team",
        evaluation.team.name,
        "--name",
        "Copy",
        "--no-progress",
    )

    assert Evaluation.objects.get(id=int(copy)).name == "Copy"


def test_import_evaluation_of_a_picture_says_so_in_one_line(tmp_path):
    team = make_team()
    picture = tmp_path / "photo.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)

    with pytest.raises(CommandError) as raised:
        run("import_evaluation", str(picture), "--team", team.name, "--no-progress")

    assert str(raised.value).split("\n") == [
        f"{picture} rejected; nothing was imported:",
        "photo.png: this is not a text file (JSON and TREC files are UTF-8 text)",
    ]

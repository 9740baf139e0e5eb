"""`manage.py try_model` runs the try in its own process, prints the report and exits as
the regression gate does."""

import pytest
from django.core.management import CommandError, call_command

from .tuned import KEYWORDS, import_grades

pytestmark = pytest.mark.django_db


def try_model(*arguments):
    import io

    out = io.StringIO()
    try:
        call_command("try_model", *arguments, stdout=out)
    except SystemExit as exit:
        return exit.code, out.getvalue()
    return 0, out.getvalue()


def queries():
    return [part for keyword in KEYWORDS for part in ("--query", keyword)]


def test_the_command_exits_3_without_a_baseline_0_for_no_change_and_1_for_worse(
    team_a, tuned_model
):
    import_grades(team_a, ranks=range(1, 11))
    code, out = try_model("--team", team_a.name, "--model", "Tuned", *queries())
    assert code == 3 and "verdict: no baseline" in out
    code, out = try_model("--team", team_a.name, "--model", "Tuned", *queries())
    assert code == 0 and "verdict: no change" in out
    code, out = try_model(
        "--team", team_a.name, "--model", "Tuned", *queries(), "--knob", "b=1",
        "--param", "boost=#b#", "--baseline-try", "1", "--metrics", "ndcg@5",
    )  # fmt: skip
    assert code == 1
    assert "verdict: worse" in out and "judged@k 100%" in out


def test_a_usage_problem_exits_2_naming_the_option(team_a, tuned_model):
    with pytest.raises(CommandError, match="--depth") as raised:
        call_command(
            "try_model", "--team", team_a.name, "--model", "Tuned", "--query", "a", "--depth", "0"
        )
    assert raised.value.returncode == 2

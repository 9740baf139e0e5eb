"""A keyword's information need and the lead's notes in the exports, with each grade's
reason (a grader's note) in the CSV; read-only additions an import ignores."""

import csv
import io
import json

import pytest

from apps.evaluations.keyword_notes import keyword_notes_set
from apps.evaluations.models import KeywordNotes
from apps.interchange.document import import_document
from apps.interchange.export import export_csv, export_document
from tests.factories import make_evaluation, make_team

pytestmark = pytest.mark.django_db
NEED = "Red running shoes for trail, not road; any brand."


def written(export, evaluation) -> str:
    out = io.StringIO()
    export(evaluation, out)
    return out.getvalue()


def test_the_exports_carry_the_need_and_the_notes_and_import_back_without_them(team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2})
    keyword_notes_set(keyword=evaluation.keywords.get(), information_need=NEED, notes="=Ask Ann")

    document = json.loads(written(export_document, evaluation))
    rows = list(csv.DictReader(io.StringIO(written(export_csv, evaluation))))

    [exported] = document["keywords"]
    assert (exported["information_need"], exported["notes"]) == (NEED, "=Ask Ann")
    assert rows[0]["information_need"] == NEED
    assert rows[0]["keyword_notes"] == "'=Ask Ann"  # a spreadsheet would run it otherwise
    # Read-only additions: the export imports back (into another team), without them.
    again = import_document(
        team=make_team("Team C"), source=io.BytesIO(json.dumps(document).encode())
    )
    assert again.keywords.get().text == "red shoes"
    assert not KeywordNotes.objects.filter(keyword__evaluation=again).exists()

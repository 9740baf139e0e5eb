"""Stale judgements through export and import: a copied grade names the content it was
given on, and an import marks it stale when its document shows other content."""

import io
import json

import pytest

from apps.core.errors import InvalidInput
from apps.evaluations.fingerprints import content_fingerprint
from apps.evaluations.models import FeedbackSlot
from apps.interchange.document import import_document
from apps.lifecycle.stale import stale_count
from apps.lifecycle.tests.test_reuse import graded_evaluation, new_evaluation, start
from apps.lifecycle.tests.test_stale_judgements import change_document
from tests.factories import make_grader, make_team

from .test_ai_judge_exports import api_client, exported

pytestmark = pytest.mark.django_db


def document_of(**grade):
    return {
        "format": "relevo.evaluation/1",
        "name": "Imported",
        "scale": "graded",
        "strategy": 1,
        "metrics": [{"metric": "ndcg", "k": 10}],
        "keywords": [
            {
                "keyword": "red shoes",
                "snapshots": [
                    {"position": 1, "doc_id": "d1", "name": "Red shoe", "grades": [grade]}
                ],
            }
        ],
    }


def imported(team, document):
    return import_document(team=team, source=io.BytesIO(json.dumps(document).encode()))


def test_a_grade_given_on_other_content_imports_stale_and_on_the_same_content_not(team_a):
    before = content_fingerprint("Red shoe (old)", "", {})
    same = content_fingerprint("Red shoe", "", {})

    stale = imported(team_a, document_of(grade=2, content_fingerprint=before))
    fresh = imported(make_team(), document_of(grade=2, content_fingerprint=same))

    assert stale_count(stale.id) == 1
    assert FeedbackSlot.objects.get(evaluation=stale).content_fingerprint == before
    assert stale_count(fresh.id) == 0
    assert FeedbackSlot.objects.get(evaluation=fresh).content_fingerprint == ""


def test_a_fingerprint_that_is_not_32_hex_digits_is_refused_naming_it(team_a):
    with pytest.raises(InvalidInput) as refused:
        imported(team_a, document_of(grade=2, content_fingerprint="not a fingerprint"))

    assert any(
        "keywords[0].snapshots[0].grades[0].content_fingerprint" in problem
        for problem in refused.value.problems
    )


def test_an_export_and_import_keep_a_stale_judgement_stale(
    team_a, django_capture_on_commit_callbacks
):
    graded_evaluation(team_a, [(make_grader(team_a, "ann@example.test"), 3)])
    evaluation = new_evaluation(team_a)
    change_document(evaluation, name="Result 1, new edition")
    evaluation = start(evaluation, django_capture_on_commit_callbacks)
    assert stale_count(evaluation.id) == 1

    document = json.loads(exported(api_client(team_a), evaluation, "json"))
    copy = imported(make_team(), document)

    assert stale_count(copy.id) == 1

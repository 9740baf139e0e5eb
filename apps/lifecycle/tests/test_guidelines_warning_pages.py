"""The lead's evaluation form warns when the scoring guidelines name grades the scale
does not have, and saves all the same (through real URLs)."""

import pytest

from apps.evaluations.models import Evaluation
from apps.lifecycle.tests.test_pages_forms import NEW, text, valid_post
from tests.factories import client_for, make_evaluation

pytestmark = pytest.mark.django_db

GRADED_GUIDELINES = "**3 · Perfect**: exactly what was asked. 2 · Good: close."
WARNING = "The scoring guidelines name grades 2, 3, which the binary scale (0, 1) does not have"


def test_creating_a_binary_evaluation_with_guidelines_for_grades_0_to_3_warns_and_saves(owner):
    post = valid_post(scale="binary", metrics="precision@5", scoring_guidelines=GRADED_GUIDELINES)

    response = client_for(owner).post(NEW, post, follow=True)

    evaluation = Evaluation.objects.get(name="Shoes 1")
    assert response.redirect_chain == [(f"/evaluations/{evaluation.id}/", 302)]
    assert '<li class="message warning">' + WARNING in text(response)
    assert evaluation.scoring_guidelines == GRADED_GUIDELINES


def test_guidelines_naming_only_the_scales_grades_save_without_a_warning(owner):
    post = valid_post(scoring_guidelines=GRADED_GUIDELINES)

    response = client_for(owner).post(NEW, post, follow=True)

    assert response.status_code == 200
    assert "message warning" not in text(response)


def test_the_edit_form_shows_the_warning_beside_the_guidelines_until_they_fit(owner, team_a):
    evaluation = make_evaluation(
        team=team_a,
        scale="binary",
        metrics=[("precision", 5)],
        start=False,
        scoring_guidelines=GRADED_GUIDELINES,
    )
    client = client_for(owner)
    edit = f"/evaluations/{evaluation.id}/edit/"

    page = text(client.get(edit))
    assert f'<p class="warning" role="note" data-testid="guidelines-warning">{WARNING}' in page

    saved = client.post(
        edit,
        valid_post(
            scale="graded", metrics="ndcg@10", keywords="", scoring_guidelines=GRADED_GUIDELINES
        ),
        follow=True,
    )
    assert "Saved " in text(saved) and "message warning" not in text(saved)
    assert "guidelines-warning" not in text(client.get(edit))

"""Judge what decides speaks plainly, and its help is a page of the app: the evaluation
page's line and the option's page link to "How it works" inside Relevo, never to a file
of the repository."""

import re

import pytest
from django.urls import reverse

from tests.factories import client_for, make_evaluation

pytestmark = pytest.mark.django_db


def links_of(html):
    return re.findall(r'href="([^"]+)"', html)


def test_the_evaluation_page_says_what_it_does_and_links_to_help_in_the_app(team_a, owner):
    evaluation = make_evaluation(team=team_a)
    page = client_for(owner).get(reverse("insights:evaluation_detail", args=[evaluation.id]))
    line = page.content.decode().split('data-testid="decisive-order"')[1].split("</section>")[0]
    assert "the results that can still change which one is ahead" in line
    help_link = reverse("insights:decisive_order", args=[evaluation.id]) + "#how-it-works"
    assert help_link in links_of(line)
    assert ".md" not in line and "github" not in line.lower()


def test_the_options_page_explains_how_it_works_in_plain_words(team_a, owner):
    evaluation = make_evaluation(team=team_a)
    make_evaluation(team=team_a)  # a rival to compare with
    page = client_for(owner).get(reverse("insights:decisive_order", args=[evaluation.id]))
    text = page.content.decode()
    assert 'id="how-it-works"' in text
    assert "Most grades do not change which of two rankings is better." in text
    assert "grading can stop" in text
    assert ".md" not in text and "github" not in text.lower()
    assert all(link.startswith(("/", "#")) for link in links_of(text))

"""The library page through real URLs: a lead browses the team's judgements, filters
them, downloads them as a judgement list in every format, imports a list whole or not at
all, and removes it; a grader and another team see none of it."""

import io
import re

import pytest
from django.urls import reverse

from apps.judging.judgements import Giver, slot_judge
from apps.judging.sources import JudgeMade, judge_source
from apps.library import formats
from apps.library.models import JudgementList, ListedJudgement
from tests.factories import client_for, make_evaluation, make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db

LIBRARY = reverse("library:library")
EXPORT = reverse("library:library_export")
IMPORT = reverse("library:list_import")


@pytest.fixture
def team_with_judgements():
    """One query judged by a person (grade 1) and an AI judge (grade 3), another by an
    AI judge alone (grade 2)."""
    team = make_team()
    people = make_evaluation(team=team, keywords={"shoes": 2, "socks": 1})
    judged = make_evaluation(team=team, keywords={"shoes": 2, "socks": 1})
    source = judge_source(team_id=team.id, made=JudgeMade(judge_id=3, name="Quick"))
    slot_judge(
        slot_id=slots_of(people, "shoes")[0].id,
        giver=Giver.recorded(name="ann@example.test"),
        grade=1,
        team_id=team.id,
    )
    slot_judge(
        slot_id=slots_of(judged, "shoes")[0].id,
        giver=Giver.judge_recorded(None, source),
        grade=3,
        team_id=team.id,
    )
    slot_judge(
        slot_id=slots_of(judged, "socks")[0].id,
        giver=Giver.judge_recorded(None, source),
        grade=2,
        team_id=team.id,
    )
    return team


def lead_of(team):
    return make_grader(team, role="admin")


def shown_queries(response):
    page = response.content.decode()
    return re.findall(r'data-testid="library-query">\s*<h2>([^<]+)</h2>', page)


def test_a_lead_sees_every_query_with_its_library_grade_and_whose_it_is(team_with_judgements):
    response = client_for(lead_of(team_with_judgements)).get(LIBRARY)

    assert response.status_code == 200
    assert shown_queries(response) == ["shoes", "socks"]
    page = response.content.decode()
    assert "from people" in page and "from AI judges" in page
    assert 'data-testid="disagreeing"' in page


def test_filters_keep_the_disagreeing_or_one_source(team_with_judgements):
    client = client_for(lead_of(team_with_judgements))

    assert shown_queries(client.get(LIBRARY, {"disagreeing": "on"})) == ["shoes"]
    assert shown_queries(client.get(LIBRARY, {"kind": "person"})) == ["shoes"]
    assert shown_queries(client.get(LIBRARY, {"query": "sock"})) == ["socks"]
    assert shown_queries(client.get(LIBRARY, {"stale": "on"})) == []


def test_a_grader_may_not_open_the_library(team_with_judgements):
    grader = make_grader(team_with_judgements)

    assert client_for(grader).get(LIBRARY).status_code == 403


def test_another_teams_lead_sees_none_of_it(team_with_judgements):
    outsider = lead_of(make_team())

    response = client_for(outsider).get(LIBRARY)

    assert shown_queries(response) == []


@pytest.mark.parametrize("name", list(formats.FORMATS))
def test_the_library_downloads_in_every_format_and_reads_back(team_with_judgements, name):
    client = client_for(lead_of(team_with_judgements))

    response = client.get(EXPORT, {"format": name, "scale": "graded"})

    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    queries = None
    if name == "qrels":
        queries = client.get(EXPORT, {"format": "qrels-queries", "scale": "graded"}).content
    read = formats.FORMATS[name].read(response.content, queries)
    assert read.problems == []
    assert sorted((j.query, j.doc_id, j.grade) for j in read.judgements) == [
        ("shoes", "shoes-doc-1", 1),  # people's grade, not the judge's 3
        ("socks", "socks-doc-1", 2),
    ]


def test_people_only_leaves_out_what_only_ai_judges_judged(team_with_judgements):
    client = client_for(lead_of(team_with_judgements))

    response = client.get(EXPORT, {"format": "quepid", "scale": "graded", "people_only": "1"})

    read = formats.FORMATS["quepid"].read(response.content, None)
    assert [(j.query, j.grade) for j in read.judgements] == [("shoes", 1)]


def test_a_download_of_an_unknown_format_or_scale_is_refused_naming_it(team_with_judgements):
    client = client_for(lead_of(team_with_judgements))

    unknown_format = client.get(EXPORT, {"format": "xml", "scale": "graded"})
    unknown_scale = client.get(EXPORT, {"format": "quepid", "scale": "detail"})

    assert unknown_format.status_code == 400
    assert unknown_format.content.decode().startswith("format: one of qrels")
    assert unknown_scale.status_code == 400
    assert "scale: not a scale" in unknown_scale.content.decode()


def test_a_qrels_download_of_a_document_id_with_a_space_is_refused_naming_it():
    team = make_team()
    evaluation = make_evaluation(team=team, keywords={"red shoes": 1})
    slot_judge(
        slot_id=slots_of(evaluation)[0].id,
        giver=Giver.recorded(name="ann"),
        grade=2,
        team_id=team.id,
    )

    response = client_for(lead_of(team)).get(EXPORT, {"format": "qrels", "scale": "graded"})

    assert response.status_code == 400
    assert "red shoes-doc-1" in response.content.decode()


def upload(text, name="list.csv"):
    file = io.BytesIO(text.encode())
    file.name = name
    return file


def import_list(client, text, *, name, scale="graded", made_by="people"):
    """Send a Quepid CSV through the library's import page."""
    form = {"file_format": "quepid", "name": name, "scale": scale, "made_by": made_by}
    return client.post(IMPORT, {"judgements": upload(text), **form})


def test_a_lead_imports_a_quepid_list_into_the_library_without_an_evaluation():
    team = make_team()
    client = client_for(lead_of(team))

    response = import_list(
        client, 'query,docid,rating\n"shoes, red",d1,3\nshoes,d2,0\n', name="Vendor 2025"
    )

    assert response.status_code == 302
    listed = JudgementList.objects.get(team=team)
    assert (listed.name, listed.judgement_count) == ("Vendor 2025", 2)
    assert str(listed.source) == "Vendor 2025"
    assert sorted(ListedJudgement.objects.values_list("query", "doc_id", "grade")) == [
        ("shoes", "d2", 0),
        ("shoes, red", "d1", 3),
    ]
    page = client.get(LIBRARY).content.decode()
    assert "Import: Vendor 2025" in page


def test_a_list_with_a_grade_off_the_scale_is_refused_whole_naming_the_line():
    team = make_team()
    client = client_for(lead_of(team))

    response = import_list(client, "query,docid,rating\nshoes,d1,1\nshoes,d2,7\n", name="Bad")

    assert response.status_code == 200
    page = response.content.decode()
    assert "line 3" in page and "grade 7" in page
    assert not JudgementList.objects.exists() and not ListedJudgement.objects.exists()


def test_a_list_made_by_an_ai_judge_counts_as_a_judges():
    team = make_team()
    client = client_for(lead_of(team))
    import_list(
        client,
        "query,docid,rating\nshoes,d1,1\n",
        name="LLM run 4",
        scale="binary",
        made_by="judge",
    )

    listed = JudgementList.objects.get(team=team)
    assert listed.source.kind == "judge"


def test_removing_a_list_takes_its_judgements_out_of_the_library():
    team = make_team()
    client = client_for(lead_of(team))
    import_list(client, "query,docid,rating\nshoes,d1,1\n", name="Old")
    listed = JudgementList.objects.get(team=team)

    delete = reverse("library:list_delete", args=[listed.id])
    assert client_for(lead_of(make_team())).post(delete).status_code == 404
    response = client.post(delete)

    assert response.status_code == 302
    assert not ListedJudgement.objects.exists()

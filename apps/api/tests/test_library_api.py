"""The judgement library over the API with a real team token: judgements of query texts
with their library grades, a list imported whole or refused naming its lines, the
library downloaded as a list, another team's lists not found."""

import io

import pytest

from apps.judging.judgements import Giver, slot_judge
from apps.library import formats
from apps.library.models import JudgementList, ListedJudgement
from tests.factories import make_evaluation, make_team, slots_of

pytestmark = pytest.mark.django_db

LISTS = "/api/v1/library/lists/"


def upload(text: str) -> io.BytesIO:
    file = io.BytesIO(text.encode())
    file.name = "list.csv"
    return file


def import_list(api, text, **fields):
    data = {"judgements": upload(text), "format": "quepid", "name": "Vendor", "scale": "graded"}
    return api.post(LISTS, {**data, **fields})


def test_a_list_imported_over_the_api_is_read_with_a_persons_grade(api, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"shoes": 2})
    slot_judge(
        slot_id=slots_of(evaluation)[0].id,
        giver=Giver.recorded(name="ann"),
        grade=3,
        team_id=team_a.id,
    )
    created = import_list(api, "query,docid,rating\nshoes,shoes-doc-1,1\nshoes,other,2\n")
    assert created.status_code == 201
    assert created.json()["judgement_count"] == 2
    assert created.json()["made_by"] == "people"

    read = api.get("/api/v1/library/", {"query": "shoes", "scale": "graded"})

    assert read.status_code == 200
    by_doc = {entry["doc_id"]: entry for entry in read.json()}
    assert sorted(by_doc) == ["other", "shoes-doc-1"]
    judged = by_doc["shoes-doc-1"]
    assert sorted((j["grade"], j["kind"]) for j in judged["judgements"]) == [
        (1, "import"),
        (3, "person"),
    ]
    assert judged["basis"] == "people"
    assert judged["disagreeing"] is True


def test_a_list_with_problems_is_refused_whole_naming_each_line(api):
    response = import_list(api, "query,docid,rating\nshoes,d1,9\n,d2,1\n")

    assert response.status_code == 400
    text = response.content.decode()
    assert "line 3" in text and "line 2" in text
    assert not JudgementList.objects.exists() and not ListedJudgement.objects.exists()


def test_a_read_without_a_query_or_with_too_many_is_refused(api):
    assert api.get("/api/v1/library/").status_code == 400
    many = [f"q{n}" for n in range(201)]
    response = api.get("/api/v1/library/", {"query": many})
    assert response.status_code == 400
    assert "at most 200" in response.content.decode()


def test_the_library_downloads_as_the_search_relevance_workbenchs_list(api):
    import_list(api, "query,docid,rating\nshoes,d1,1\n")

    response = api.get("/api/v1/library/export/", {"format": "srw", "scale": "graded"})

    assert response.status_code == 200
    read = formats.FORMATS["srw"].read(response.content)
    assert [(j.query, j.doc_id, j.grade) for j in read.judgements] == [("shoes", "d1", 1)]


def test_another_teams_list_is_not_found(api):
    other = make_team()
    from django.utils import timezone

    from apps.judging.sources import import_source

    theirs = JudgementList.objects.create(
        team=other,
        name="Theirs",
        file_format="quepid",
        scale="graded",
        source_id=import_source(team_id=other.id, label="Theirs"),
        imported_at=timezone.now(),
    )

    assert api.get(f"{LISTS}{theirs.id}/").status_code == 404
    assert api.delete(f"{LISTS}{theirs.id}/").status_code == 404
    assert JudgementList.objects.filter(id=theirs.id).exists()

"""Reuse copies the grades of the team's imported judgement lists too: a list's grade fills
a new evaluation's matching result with the list's source and says which list it came
from, lists on another scale or of another team are not read, an AI judge's list only as
its judge's grades are, and the library counts such a copy once, as the list's judgement,
until the list is removed."""

import io

import pytest
from django.urls import reverse

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.fingerprints import content_fingerprint
from apps.evaluations.models import FeedbackSlot, Snapshot, Source
from apps.judges.calibration import gate_set
from apps.judges.services import judge_create
from apps.judging.judgements import Giver, slot_judge
from apps.judging.sources import JudgeMade, judge_source, provenance_of
from apps.library.grades import grades_from_entries, library_grades
from apps.library.models import JudgementList
from apps.lifecycle.steps import evaluation_start
from tests.factories import client_for, finish, make_evaluation, make_team, slots_of

pytestmark = pytest.mark.django_db

IMPORT = reverse("library:list_import")
LIBRARY = reverse("library:library")
DOC = "red shoes-doc-1"
KEYWORDS = {"red shoes": 2}


def lead_of(team):
    return team.memberships.get(role="owner").user


def import_list(team, lines, *, name="Vendor 2025", scale="graded", made_by="people"):
    """A lead imports a Quepid CSV through the library's import page."""
    file = io.BytesIO(("query,docid,rating\n" + "".join(f"{line}\n" for line in lines)).encode())
    file.name = "list.csv"
    form = {"file_format": "quepid", "name": name, "scale": scale, "made_by": made_by}
    response = client_for(lead_of(team)).post(IMPORT, {"judgements": file, **form})
    assert response.status_code == 302, response.content.decode()
    return JudgementList.objects.get(team=team, name=name)


def graded(evaluation):
    return list(
        FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False)
        .select_related("snapshot")
        .order_by("snapshot__position", "index")
    )


def copied_grades(evaluation):
    return [(slot.snapshot.doc_id, slot.grade) for slot in graded(evaluation)]


def reusing(team, **settings):
    settings = {"reuse": "keyword_doc", "strategy": 3, "keywords": KEYWORDS, **settings}
    return make_evaluation(team=team, **settings)


def test_an_imported_lists_grade_fills_the_matching_result_with_its_source_and_names_the_list():
    team = make_team()
    listed = import_list(team, [f"red shoes,{DOC},3", "blue hat,blue hat-doc-1,2"])

    evaluation = reusing(team)

    [copy] = graded(evaluation)
    assert (copy.snapshot.doc_id, copy.grade) == (DOC, 3)
    assert copy.reused and copy.reused_from_list_id == listed.id and copy.reused_from_id is None
    assert (copy.source, copy.source_detail_id) == (Source.IMPORT, listed.source_id)
    assert (copy.grader_id, copy.external_grader) == (None, "Vendor 2025")
    assert copy.graded_at == listed.imported_at
    snapshot = copy.snapshot
    assert copy.content_fingerprint == content_fingerprint(
        snapshot.name, snapshot.image, snapshot.attributes
    )
    assert not copy.stale
    # The list is one grader: the result's two other slots wait for people.
    assert FeedbackSlot.objects.filter(snapshot=snapshot, grade__isnull=True).count() == 2
    keyword_page = client_for(lead_of(team)).get(
        reverse("insights:keyword_detail", args=[evaluation.id, snapshot.keyword_id])
    )
    assert "copied from the judgement list Vendor 2025" in keyword_page.content.decode()
    assert (
        provenance_of(copy).text
        == "Imported (Vendor 2025), copied from the judgement list Vendor 2025"
    )


def test_a_list_fills_one_slot_beside_each_persons_grade_newest_first():
    team = make_team()
    earlier = make_evaluation(team=team, keywords=KEYWORDS)
    slot_judge(slot_id=slots_of(earlier)[0].id, giver=Giver.recorded(name="ann"), grade=1)
    finish(earlier)
    import_list(team, [f"red shoes,{DOC},3"])  # imported after Ann graded

    evaluation = reusing(team)

    assert [(s.external_grader, s.grade) for s in graded(evaluation)] == [
        ("Vendor 2025", 3),
        ("ann", 1),
    ]


@pytest.mark.parametrize(
    "elsewhere", ["another scale", "other custom levels", "another team", "another query"]
)
def test_a_list_is_not_read_from(elsewhere):
    team = make_team()
    listing_team = make_team() if elsewhere == "another team" else team
    query = "blue hat" if elsewhere == "another query" else "red shoes"
    scale = {"another scale": "binary", "other custom levels": "custom"}.get(elsewhere, "graded")
    import_list(listing_team, [f"{query},{DOC},1"], scale=scale)
    levels = {"lowest": 0, "highest": 4}  # the list's custom levels go from 0 to 1

    evaluation = reusing(
        team,
        scale="custom" if scale == "custom" else "graded",
        scale_levels=levels if scale == "custom" else None,
    )

    assert copied_grades(evaluation) == []


def test_a_list_on_the_same_custom_levels_is_read():
    team = make_team()
    import_list(team, [f"red shoes,{DOC},4", "red shoes,red shoes-doc-2,0"], scale="custom")

    evaluation = reusing(team, scale="custom", scale_levels={"lowest": 0, "highest": 4})

    assert copied_grades(evaluation) == [(DOC, 4), ("red shoes-doc-2", 0)]


def test_the_position_strategy_copies_nothing_from_a_list_which_knows_no_positions():
    team = make_team()
    import_list(team, [f"red shoes,{DOC},3"])

    evaluation = reusing(team, reuse="keyword_doc_position")

    assert copied_grades(evaluation) == []


def test_a_lists_grade_is_never_stale_so_a_fresh_only_evaluation_copies_it_too():
    team = make_team()
    import_list(team, [f"red shoes,{DOC},3"])
    evaluation = reusing(team, start=False)
    evaluation.reuse_fresh_only = True
    evaluation.save(update_fields=["reuse_fresh_only"])
    Snapshot.objects.filter(keyword__evaluation=evaluation).update(name="A new title")

    evaluation_start(evaluation=evaluation)

    [copy] = graded(evaluation)
    assert copy.grade == 3 and not copy.stale
    shown = copy.snapshot
    assert shown.name == "A new title"
    assert copy.content_fingerprint == content_fingerprint(
        shown.name, shown.image, shown.attributes
    )


@pytest.fixture
def judges_list(settings):
    """A list graded by the team's AI judge Quick (gpt-test), as a judge's run could have
    left it in the library."""
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    team = make_team()
    judge = judge_create(
        team=team,
        name="Quick",
        protocol="openai",
        base_url="http://127.0.0.1:9/v1",
        model_name="gpt-test",
        api_key="not-a-real-key",
    )
    made = JudgeMade(judge_id=judge.id, name="Quick", model_name="gpt-test")
    listed = import_list(team, [f"red shoes,{DOC},2"], name="Quick's run", made_by="judge")
    listed.source_id = judge_source(team_id=team.id, made=made)
    listed.save(update_fields=["source"])
    return listed


def test_an_ai_judges_list_is_copied_only_when_the_lead_asks_for_judges_grades(judges_list):
    team = judges_list.team

    assert copied_grades(reusing(team)) == []
    copies = graded(reusing(team, reuse_judges=True))

    assert [(slot.grade, slot.source) for slot in copies] == [(2, Source.JUDGE)]
    assert copies[0].source_detail.judge_id > 0
    assert copies[0].reused_from_list_id == judges_list.id


def test_an_ai_judges_list_is_not_copied_when_the_judge_fails_the_calibration_rule(judges_list):
    gate_set(team=judges_list.team, min_alpha=0.8)  # the judge was never calibrated

    assert copied_grades(reusing(judges_list.team, reuse_judges=True)) == []


def test_a_list_imported_as_an_ai_judges_names_no_judge_of_the_team_and_is_not_copied():
    team = make_team()
    import_list(team, [f"red shoes,{DOC},1"], name="LLM run 4", made_by="judge")

    assert copied_grades(reusing(team, reuse_judges=True)) == []


def library_judgements(team):
    """The library's judgements of the pair through the API, and the page's total."""
    _token, text = api_token_create(team=team, name="library")
    api = client_for(None, headers={"Authorization": f"Bearer {text}"})
    entries = api.get("/api/v1/library/", {"query": "red shoes", "scale": "graded"}).json()
    [entry] = [entry for entry in entries if entry["doc_id"] == DOC]
    page = client_for(lead_of(team)).get(LIBRARY).content.decode()
    total = page.split("<dt>Judgements</dt><dd>")[1].split("<")[0]
    fast = library_grades(team_id=team.id, pairs=[("red shoes", DOC)], scale="graded")
    built = grades_from_entries(team_id=team.id, pairs=[("red shoes", DOC)], scale="graded")
    assert fast == built
    assert fast[("red shoes", DOC)].judgements == len(entry["judgements"])
    return [(j["grade"], j["origin"]) for j in entry["judgements"]], int(total)


def test_the_library_counts_a_lists_grade_copied_into_evaluations_once_as_the_lists():
    team = make_team()
    import_list(team, [f"red shoes,{DOC},3"])
    first = reusing(team)
    finish(first)
    second = reusing(team)  # a copy of the first's copy: it names both

    [copy] = graded(second)
    assert copy.reused_from_id == first.id and copy.reused_from_list_id is not None
    assert library_judgements(team) == ([(3, "Vendor 2025")], 1)


def test_once_the_list_is_removed_its_copy_counts_in_the_library_once():
    team = make_team()
    listed = import_list(team, [f"red shoes,{DOC},3"])
    first = reusing(team)
    finish(first)
    reusing(team)
    delete = reverse("library:list_delete", args=[listed.id])

    assert client_for(lead_of(team)).post(delete).status_code == 302

    assert not FeedbackSlot.objects.filter(reused_from_list__isnull=False).exists()
    assert library_judgements(team) == ([(3, first.name)], 1)


def test_the_start_page_counts_a_lists_grades_under_their_source(judges_list):
    team = judges_list.team
    import_list(team, [f"red shoes,{DOC},3"])
    pending = reusing(team, reuse_judges=True, start=False)

    page = client_for(lead_of(team)).get(f"/evaluations/{pending.id}/").content.decode()

    assert "Starting copies <strong>2</strong> earlier grades: 1 imported, 1 by AI judges." in (
        page
    )


def test_a_lead_who_grades_a_lists_copy_again_makes_it_theirs_and_it_names_the_list_no_more():
    team = make_team()
    import_list(team, [f"red shoes,{DOC},3"])
    [copy] = graded(reusing(team))

    slot_judge(slot_id=copy.id, giver=Giver.lead(lead_of(team)), grade=1, team_id=team.id)

    copy.refresh_from_db()
    assert (copy.grade, copy.source, copy.reused) == (1, Source.PERSON, False)
    assert copy.reused_from_list_id is None
    assert library_judgements(team)[1] == 2  # the list's grade and the lead's

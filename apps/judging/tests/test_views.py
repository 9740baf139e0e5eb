"""The grader's pages: the dashboard, Give feedback, grading and skipping (with and without
htmx) and Previous, used by the cast of team A (owner, admin, evaluator), a lead of team B
(the outsider) and someone not logged in."""

import re
from unittest import mock

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Membership, Tag, User
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    SnapshotSkip,
    Status,
)
from apps.evaluations.services import Document, keywords_add, snapshots_add
from apps.judging import services
from apps.judging.judgements import Giver, slot_judge
from tests.factories import (
    assign,
    client_for,
    import_graded_by,
    make_evaluation,
    make_grader,
    slots_of,
    start,
)

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


# --- The cast ---------------------------------------------------------------------------


@pytest.fixture
def evaluation(team_a):
    """Team A's graded evaluation: one keyword with five results."""
    return make_evaluation(team=team_a, keywords={"red shoes": 5})


def text(response) -> str:
    return response.content.decode()


def shown_slot(response) -> FeedbackSlot | None:
    """The slot the card shows (data-slot), or None for the empty state."""
    match = re.search(r'id="card" class="feedback-card" data-slot="(\d*)"', text(response))
    assert match, text(response)
    return FeedbackSlot.objects.get(id=int(match.group(1))) if match.group(1) else None


def grade_buttons(response) -> list[tuple[str, str, str]]:
    """(grade, key, label) of each grade button on the card."""
    return [
        (grade, key, label)
        for grade, key, label, shown_key in re.findall(
            r'<button type="submit" name="grade" value="(\d+)" data-key="(\w)"'
            r'[^>]*>\s*([^<]+?) <kbd title="key \w">(\w)</kbd>\s*</button>',
            text(response),
        )
        if shown_key == key
    ]


def held(user: User) -> FeedbackSlot:
    return FeedbackSlot.objects.get(grader=user, grade__isnull=True)


def evaluation_with_documents(team, documents: list[Document], **settings) -> Evaluation:
    """An active evaluation of one keyword, 'red shoes', with exactly these results."""
    evaluation = make_evaluation(team=team, keywords={}, start=False, **settings)
    [keyword] = keywords_add(evaluation=evaluation, texts=["red shoes"])
    snapshots_add(keyword=keyword, documents=documents)
    return start(evaluation)


# --- Someone not logged in --------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/feedback/", "/feedback/previous/"])
def test_someone_not_logged_in_is_sent_to_log_in(path):
    response = Client().get(path)

    assert response.status_code == 302
    assert response.url == f"/accounts/login/?next={path}"


@pytest.mark.parametrize("action", ["grade", "skip"])
def test_a_post_by_someone_not_logged_in_is_sent_to_log_in_and_changes_nothing(
    action, evaluation, evaluator
):
    slot = assign(slots_of(evaluation)[0], evaluator)

    response = Client().post(f"/feedback/slots/{slot.id}/{action}/", {"grade": 2})

    assert response.status_code == 302 and response.url.startswith("/accounts/login/?next=")
    slot.refresh_from_db()
    assert (slot.grade, slot.grader) == (None, evaluator)
    assert SnapshotSkip.objects.count() == 0


def test_someone_in_no_team_is_told_to_ask_for_an_invitation(team_a):
    loner = User.objects.create_user(email="loner@x.test")

    response = client_for(loner).get("/")

    assert response.status_code == 403
    assert "You are not in a team yet" in text(response)
    assert client_for(loner).get("/feedback/").status_code == 403


# --- Dashboard --------------------------------------------------------------------------


@pytest.fixture
def three_evaluations(team_a):
    """Two evaluations open to everyone (5 + 9 slots) and one that needs the tag 'german'."""
    german = Tag.objects.create(team=team_a, name="german")
    return [
        make_evaluation(team=team_a, keywords={"red shoes": 5}),
        make_evaluation(team=team_a, scale="binary", strategy=3, keywords={"boots": 3}),
        make_evaluation(team=team_a, keywords={"rote schuhe": 4}, tags=[german]),
    ]


def test_the_dashboard_shows_what_waits_and_the_evaluations_open_to_the_evaluator(
    three_evaluations, evaluator
):
    plain, binary, german_only = three_evaluations

    response = client_for(evaluator).get("/")

    page = text(response)
    assert response.status_code == 200
    assert "<h1>Team A</h1>" in page
    # 5 results of the plain evaluation, and 3 of the binary one: it has 9 free slots,
    # but one grader grades each result once.
    assert '<strong data-testid="waiting">8</strong> results wait for you' in page
    mine = page.split("<h2>My evaluations</h2>")[1].split("<h2>")[0]
    for shown in (plain, binary):  # each card opens its queue
        assert f'<h3><a href="/feedback/?evaluation={shown.id}">{shown.name}</a></h3>' in mine
    assert german_only.name not in mine
    assert "Binary (0-1) · 3 grades per result" in mine
    assert "0.0% · 0 of 9 grades" in mine
    team_active = page.split("<h2>The team's active evaluations</h2>")[1]
    for evaluation in three_evaluations:
        assert f"{evaluation.name}</td>" in team_active
    assert "Open its queue" not in page


def test_a_grader_holding_the_tag_also_waits_on_the_tagged_evaluation(
    team_a, three_evaluations, evaluator
):
    Membership.objects.get(team=team_a, user=evaluator).tags.add(Tag.objects.get(name="german"))

    response = client_for(evaluator).get("/")

    assert '<strong data-testid="waiting">12</strong>' in text(response)
    assert f">{three_evaluations[2].name}</a></h3>" in text(response)


@pytest.mark.parametrize("lead", ["owner", "admin"])
def test_a_lead_sees_a_link_to_each_active_evaluations_queue(
    lead, request, three_evaluations, owner, admin
):
    page = text(client_for(request.getfixturevalue(lead)).get("/"))

    for evaluation in three_evaluations:
        assert f'href="/feedback/?evaluation={evaluation.id}">Open its queue</a>' in page


def test_results_the_grader_graded_or_skipped_no_longer_wait_for_them(team_a, evaluator):
    make_evaluation(team=team_a, strategy=3, keywords={"boots": 3})
    client = client_for(evaluator)
    client.get("/feedback/")
    first = held(evaluator)
    client.post(f"/feedback/slots/{first.id}/grade/", {"grade": 1}, headers=HTMX)
    second = held(evaluator)
    client.post(f"/feedback/slots/{second.id}/skip/", headers=HTMX)

    # Two free slots are left on each of the first two results, but not for this grader.
    assert '<strong data-testid="waiting">1</strong> result waits for you' in text(client.get("/"))
    other = make_grader(team_a)
    assert '<strong data-testid="waiting">3</strong>' in text(client_for(other).get("/"))


def test_past_a_thousand_results_the_dashboard_says_or_more(team_a, evaluator, monkeypatch):
    monkeypatch.setattr(services, "WAITING_COUNTED_UP_TO", 4)
    make_evaluation(team=team_a, strategy=3, keywords={"boots": 3, "hats": 2})

    page = text(client_for(evaluator).get("/"))

    assert '<strong data-testid="waiting">4 or more</strong> results wait for you' in page


def test_a_count_of_exactly_the_limit_is_exact(team_a, evaluator, monkeypatch):
    monkeypatch.setattr(services, "WAITING_COUNTED_UP_TO", 5)
    make_evaluation(team=team_a, strategy=3, keywords={"boots": 3, "hats": 2})

    assert '<strong data-testid="waiting">5</strong>' in text(client_for(evaluator).get("/"))


def test_the_dashboard_says_when_nothing_waits(team_a, evaluator):
    make_evaluation(team=team_a, start=False)

    page = text(client_for(evaluator).get("/"))

    assert 'data-testid="waiting-none"' in page
    assert "No active evaluation is open to you." in page
    assert "The team has no active evaluation." in page


def test_the_dashboard_leaves_out_finished_and_archived_evaluations(team_a, evaluator):
    finished = make_evaluation(team=team_a)
    archived = make_evaluation(team=team_a)
    Evaluation.objects.filter(id=finished.id).update(status=Status.FINISHED)
    Evaluation.objects.filter(id=archived.id).update(archived=True)

    page = text(client_for(evaluator).get("/"))

    assert finished.name not in page and archived.name not in page
    assert 'data-testid="waiting-none"' in page


def test_the_outsiders_dashboard_shows_none_of_team_a(three_evaluations, outsider):
    page = text(client_for(outsider).get("/"))

    assert "<h1>Team B</h1>" in page
    for evaluation in three_evaluations:
        assert evaluation.name not in page
    assert 'data-testid="waiting-none"' in page


# --- Give feedback: the card --------------------------------------------------------------


def test_the_card_shows_the_keyword_the_result_and_its_attributes(team_a, evaluator):
    evaluation_with_documents(
        team_a,
        [
            Document(
                "sku-1",
                "Red running shoe",
                attributes={"price": "59.90", "colours": ["red", "black"], "brand": "Acme"},
            ),
            Document("sku-2", "Blue shoe"),
        ],
    )

    response = client_for(evaluator).get("/feedback/")

    page = text(response)
    assert response.status_code == 200
    assert '<h1 class="keyword">“red shoes”</h1>' in page
    assert '<h2 class="doc-name" data-testid="doc-name">Red running shoe</h2>' in page
    assert "sku-1" in page
    attributes = re.findall(r"<dt>([^<]+)</dt><dd>([^<]+)</dd>", page)
    assert attributes == [("brand", "Acme"), ("colours", "red, black"), ("price", "59.90")]
    assert shown_slot(response) == held(evaluator)
    assert held(evaluator).snapshot.doc_id == "sku-1"


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx card"])
def test_markup_in_a_keyword_a_result_or_an_attribute_is_shown_as_text(headers, team_a, evaluator):
    evaluation = make_evaluation(team=team_a, keywords={}, start=False)
    [keyword] = keywords_add(evaluation=evaluation, texts=["<b>shoes</b>"])
    snapshots_add(
        keyword=keyword,
        documents=[
            Document(
                '"><script>alert(1)</script>',
                "<img src=x onerror=alert(2)>",
                attributes={"<i>brand</i>": "<u>Acme</u>", "tags": ["<s>a</s>", "b & c"]},
            )
        ],
    )
    # Stored before images were checked on the way in: the page still never shows it.
    keyword.snapshots.update(image='javascript:alert(3)" onerror="alert(4)')
    start(evaluation)

    page = text(client_for(evaluator).get("/feedback/", headers=headers))

    assert "<script>" not in page and "<img src=x" not in page and "<b>shoes" not in page
    assert "javascript:" not in page and "alert(4)" not in page
    assert "“&lt;b&gt;shoes&lt;/b&gt;”" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "<dt>&lt;i&gt;brand&lt;/i&gt;</dt><dd>&lt;u&gt;Acme&lt;/u&gt;</dd>" in page
    assert "<dd>&lt;s&gt;a&lt;/s&gt;, b &amp; c</dd>" in page


@pytest.mark.parametrize(
    ("scale", "buttons"),
    [
        ("binary", [("0", "0", "0 · Irrelevant"), ("1", "1", "1 · Relevant")]),
        (
            "graded",
            [
                ("0", "0", "0 · Poor"),
                ("1", "1", "1 · Fair"),
                ("2", "2", "2 · Good"),
                ("3", "3", "3 · Perfect"),
            ],
        ),
        ("detail", [(str(g), str(g % 10), str(g)) for g in range(1, 11)]),
    ],
)
def test_the_card_offers_the_scales_labelled_buttons_with_their_keys(
    scale, buttons, team_a, evaluator
):
    make_evaluation(team=team_a, scale=scale)

    response = client_for(evaluator).get("/feedback/")

    assert grade_buttons(response) == buttons


@pytest.mark.parametrize("show_position", [True, False])
def test_the_card_shows_the_position_only_when_the_evaluation_says_so(
    show_position, team_a, evaluator
):
    make_evaluation(team=team_a, show_position=show_position)

    page = text(client_for(evaluator).get("/feedback/"))

    assert ('data-testid="position">1</strong>' in page) is show_position


def test_the_guidelines_are_rendered_from_markdown_without_scripts(team_a, evaluator):
    make_evaluation(
        team=team_a,
        scoring_guidelines=(
            "**Exact colour** wins.\n\n<script>alert('stolen')</script>\n\n"
            '<img src="x.png" onerror="alert(1)">\n\n[more](javascript:alert(2))'
        ),
    )

    page = text(client_for(evaluator).get("/feedback/"))

    guidelines = page.split('<div class="markdown">')[1].split("</div>")[0]
    assert "<strong>Exact colour</strong> wins." in guidelines
    assert "<script" not in guidelines and "alert" not in guidelines
    assert "onerror" not in guidelines and "javascript:" not in guidelines


def test_the_card_has_no_guidelines_block_when_there_are_none(team_a, evaluator):
    make_evaluation(team=team_a)

    assert "Scoring guidelines" not in text(client_for(evaluator).get("/feedback/"))


def test_the_empty_state_shows_when_nothing_waits(team_a, evaluator):
    response = client_for(evaluator).get("/feedback/")

    assert response.status_code == 200
    assert 'data-testid="empty-state"' in text(response)
    assert "All done for now" in text(response)
    assert shown_slot(response) is None


def test_grades_an_import_names_the_grader_for_are_not_their_work_today(team_a, evaluator):
    import_graded_by(team_a, "evaluator@a.test", [3, 2])
    make_evaluation(team=team_a, keywords={"red shoes": 2})
    client = client_for(evaluator)
    assert "You graded 0 results today." in text(client.get("/"))
    client.get("/feedback/")

    response = client.post(
        f"/feedback/slots/{held(evaluator).id}/grade/", {"grade": 1}, headers=HTMX
    )

    assert "You today: <strong>1</strong>" in text(response)
    assert "You graded 1 result today." in text(client.get("/"))


def test_an_imported_grade_the_grader_changes_here_becomes_their_work_today(team_a, evaluator):
    imported = start(import_graded_by(team_a, "evaluator@a.test", [3]))
    (slot,) = slots_of(imported)
    client = client_for(evaluator)

    changed = client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": 1}, headers=HTMX)

    assert changed.status_code == 200
    slot.refresh_from_db()
    assert (slot.grade, slot.imported) == (1, False)
    assert "You graded 1 result today." in text(client.get("/"))


def test_the_empty_state_shows_once_every_result_is_graded(team_a, evaluator):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 1})
    client = client_for(evaluator)
    client.get("/feedback/")

    response = client.post(
        f"/feedback/slots/{held(evaluator).id}/grade/", {"grade": 1}, headers=HTMX
    )

    assert 'data-testid="empty-state"' in text(response)
    assert "You graded <strong>1</strong> today." in text(response)
    assert slots_of(evaluation)[0].grade == 1


def test_opening_the_page_again_shows_the_same_held_result(evaluation, evaluator):
    client = client_for(evaluator)

    first = shown_slot(client.get("/feedback/"))
    second = shown_slot(client.get("/feedback/"))

    assert first == second
    assert FeedbackSlot.objects.filter(grader=evaluator).count() == 1


def test_two_graders_are_given_different_results(evaluation, evaluator, admin):
    first = shown_slot(client_for(evaluator).get("/feedback/"))
    second = shown_slot(client_for(admin).get("/feedback/"))

    assert first.snapshot_id != second.snapshot_id


def test_the_outsider_is_never_given_a_result_of_team_a(evaluation, outsider):
    response = client_for(outsider).get("/feedback/")

    assert shown_slot(response) is None
    assert not FeedbackSlot.objects.filter(grader=outsider).exists()


def test_the_feedback_page_without_htmx_is_a_whole_page_and_with_htmx_a_fragment(
    evaluation, evaluator
):
    client = client_for(evaluator)

    page = text(client.get("/feedback/"))
    fragment = text(client.get("/feedback/", headers=HTMX))

    assert page.startswith("<!doctype html>") and "js/grading.js" in page
    assert fragment.lstrip().startswith('<section id="card"') and "<html" not in fragment


# --- A lead's queue of one evaluation -----------------------------------------------------


@pytest.fixture
def german_only(team_a):
    """An evaluation that only graders holding 'german' see in their own queue."""
    german = Tag.objects.create(team=team_a, name="german")
    return make_evaluation(team=team_a, keywords={"rote schuhe": 3}, tags=[german])


@pytest.mark.parametrize("lead", ["owner", "admin"])
def test_a_lead_opens_one_evaluations_queue_tags_aside(lead, request, german_only, owner, admin):
    client = client_for(request.getfixturevalue(lead))
    assert shown_slot(client.get("/feedback/")) is None

    response = client.get(f"/feedback/?evaluation={german_only.id}")

    slot = shown_slot(response)
    assert slot.evaluation_id == german_only.id
    assert f'<input type="hidden" name="evaluation" value="{german_only.id}">' in text(response)


def test_grading_in_a_leads_queue_stays_in_that_queue(german_only, evaluation, admin):
    client = client_for(admin)
    client.get(f"/feedback/?evaluation={german_only.id}")
    first = held(admin)

    response = client.post(
        f"/feedback/slots/{first.id}/grade/",
        {"grade": 3, "evaluation": german_only.id},
        headers=HTMX,
    )

    following = shown_slot(response)
    assert following.evaluation_id == german_only.id and following != first
    assert f'name="evaluation" value="{german_only.id}"' in text(response)
    first.refresh_from_db()
    assert first.grade == 3


def test_skipping_without_htmx_in_a_leads_queue_returns_to_that_queue(german_only, admin):
    client = client_for(admin)
    client.get(f"/feedback/?evaluation={german_only.id}")

    response = client.post(
        f"/feedback/slots/{held(admin).id}/skip/", {"evaluation": german_only.id}
    )

    assert response.status_code == 302
    assert response.url == f"/feedback/?evaluation={german_only.id}"


def test_an_evaluator_opens_one_evaluation_of_their_pool_and_grades_in_it(
    german_only, evaluation, evaluator
):
    other = make_evaluation(team=evaluation.team, keywords={"boots": 2})
    client = client_for(evaluator)

    response = client.get(f"/feedback/?evaluation={other.id}")

    slot = shown_slot(response)
    assert response.status_code == 200 and slot.evaluation_id == other.id
    assert f'<input type="hidden" name="evaluation" value="{other.id}">' in text(response)
    graded = client.post(
        f"/feedback/slots/{slot.id}/grade/", {"grade": 2, "evaluation": other.id}, headers=HTMX
    )
    assert shown_slot(graded).evaluation_id == other.id


def test_an_evaluator_cannot_open_the_queue_of_an_evaluation_whose_tags_they_lack(
    german_only, evaluator
):
    response = client_for(evaluator).get(f"/feedback/?evaluation={german_only.id}")

    assert response.status_code == 404
    assert not FeedbackSlot.objects.filter(grader=evaluator).exists()


@pytest.mark.parametrize("value", ["abc", "999999", "1.5"])
def test_a_lead_asking_for_a_malformed_or_missing_queue_gets_not_found(value, evaluation, owner):
    assert client_for(owner).get(f"/feedback/?evaluation={value}").status_code == 404


def test_the_outsider_cannot_open_a_team_a_evaluations_queue(evaluation, outsider):
    response = client_for(outsider).get(f"/feedback/?evaluation={evaluation.id}")

    assert response.status_code == 404
    assert not FeedbackSlot.objects.filter(grader=outsider).exists()


def test_the_queue_of_a_finished_evaluation_sends_the_lead_back_with_a_reason(evaluation, owner):
    Evaluation.objects.filter(id=evaluation.id).update(status=Status.FINISHED)
    client = client_for(owner)

    response = client.get(f"/feedback/?evaluation={evaluation.id}", follow=True)

    assert response.redirect_chain == [("/", 302)]
    assert "this evaluation is not open for grading" in text(response)


# --- Grading ------------------------------------------------------------------------------


def test_grading_with_htmx_saves_the_grade_and_returns_the_next_card(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")
    first = held(evaluator)

    response = client.post(
        f"/feedback/slots/{first.id}/grade/", {"grade": 2, "reason": " exact match "}, headers=HTMX
    )

    fragment = text(response)
    assert response.status_code == 200
    assert "<html" not in fragment and fragment.lstrip().startswith('<section id="card"')
    first.refresh_from_db()
    assert (first.grade, first.reason, first.grader) == (2, "exact match", evaluator)
    assert first.graded_at is not None
    following = shown_slot(response)
    assert following == held(evaluator)
    assert following.snapshot_id != first.snapshot_id
    assert "You today: <strong>1</strong>" in fragment
    assert Keyword.objects.get(id=first.keyword_id).needs_scoring


def test_grading_without_htmx_saves_the_grade_and_redirects_to_the_next_result(
    evaluation, evaluator
):
    client = client_for(evaluator)
    client.get("/feedback/")
    first = held(evaluator)

    response = client.post(f"/feedback/slots/{first.id}/grade/", {"grade": 0})

    assert response.status_code == 302 and response.url == "/feedback/"
    first.refresh_from_db()
    assert first.grade == 0
    assert shown_slot(client.get(response.url)) != first


@pytest.mark.parametrize(
    ("scale", "value"),
    [("binary", "9"), ("binary", "2"), ("graded", "4"), ("graded", "-1"), ("detail", "0")],
)
def test_a_grade_off_the_scale_is_refused_on_the_card_and_not_saved(
    scale, value, team_a, evaluator
):
    make_evaluation(team=team_a, scale=scale)
    client = client_for(evaluator)
    client.get("/feedback/")
    slot = held(evaluator)

    response = client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": value}, headers=HTMX)

    assert response.status_code == 400
    assert "<html" not in text(response)
    assert f'<p class="error" role="alert">grade: {value} is not a {scale} grade' in text(response)
    assert shown_slot(response) == slot
    slot.refresh_from_db()
    assert (slot.grade, slot.graded_at) == (None, None)
    assert not Keyword.objects.get(id=slot.keyword_id).needs_scoring


@pytest.mark.parametrize("value", ["", "abc", "1.5", "true"])
def test_a_grade_that_is_not_a_number_is_refused_naming_the_grade(value, team_a, evaluator):
    make_evaluation(team=team_a, scale="binary")
    client = client_for(evaluator)
    client.get("/feedback/")
    slot = held(evaluator)

    response = client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": value}, headers=HTMX)

    assert response.status_code == 400
    assert "grade: None is not a binary grade (0, 1)" in text(response)
    slot.refresh_from_db()
    assert slot.grade is None


def test_a_bad_grade_without_htmx_redirects_with_the_message(team_a, evaluator):
    make_evaluation(team=team_a, scale="binary")
    client = client_for(evaluator)
    client.get("/feedback/")
    slot = held(evaluator)

    response = client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": 9}, follow=True)

    assert response.redirect_chain == [("/feedback/", 302)]
    assert "grade: 9 is not a binary grade (0, 1)" in text(response)
    slot.refresh_from_db()
    assert slot.grade is None


def test_grading_a_teammates_result_is_refused_and_not_saved(evaluation, evaluator, admin):
    theirs = assign(slots_of(evaluation)[0], admin)
    client = client_for(evaluator)

    response = client.post(f"/feedback/slots/{theirs.id}/grade/", {"grade": 3}, headers=HTMX)

    assert response.status_code == 400
    assert "this result is not yours to grade" in text(response)
    theirs.refresh_from_db()
    assert (theirs.grade, theirs.grader) == (None, admin)
    # The card offers the evaluator a result of their own instead.
    assert shown_slot(response) == held(evaluator)


def test_grading_a_result_nobody_was_given_is_refused(evaluation, evaluator):
    free = slots_of(evaluation)[0]

    response = client_for(evaluator).post(f"/feedback/slots/{free.id}/grade/", {"grade": 3})

    assert response.status_code == 302
    free.refresh_from_db()
    assert (free.grade, free.grader) == (None, None)


def test_the_outsider_cannot_grade_a_team_a_result(evaluation, evaluator, outsider):
    slot = assign(slots_of(evaluation)[0], evaluator)

    response = client_for(outsider).post(
        f"/feedback/slots/{slot.id}/grade/", {"grade": 3}, headers=HTMX
    )

    assert response.status_code == 404
    slot.refresh_from_db()
    assert (slot.grade, slot.grader) == (None, evaluator)


def test_grading_a_missing_result_is_not_found(evaluation, evaluator):
    assert (
        client_for(evaluator).post("/feedback/slots/999999/grade/", {"grade": 1}).status_code == 404
    )


def test_grading_by_get_is_refused(evaluation, evaluator):
    slot = assign(slots_of(evaluation)[0], evaluator)

    assert client_for(evaluator).get(f"/feedback/slots/{slot.id}/grade/").status_code == 405


def test_grading_without_the_csrf_token_is_refused(evaluation, evaluator):
    slot = assign(slots_of(evaluation)[0], evaluator)
    client = client_for(evaluator, enforce_csrf_checks=True)

    response = client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": 3}, headers=HTMX)

    assert response.status_code == 403
    slot.refresh_from_db()
    assert slot.grade is None


def test_grading_with_the_csrf_token_the_page_carries_works(evaluation, evaluator):
    client = client_for(evaluator, enforce_csrf_checks=True)
    page = text(client.get("/feedback/"))
    # htmx sends the token from the body's hx-headers, as the page sets it.
    token = re.search(r"hx-headers='\{\"X-CSRFToken\": \"([^\"]+)\"\}'", page).group(1)
    slot = held(evaluator)

    response = client.post(
        f"/feedback/slots/{slot.id}/grade/", {"grade": 1}, headers={**HTMX, "X-CSRFToken": token}
    )

    assert response.status_code == 200
    slot.refresh_from_db()
    assert slot.grade == 1


def test_the_next_card_posts_with_the_pages_token_and_carries_none_of_its_own(
    evaluation, evaluator
):
    client = client_for(evaluator, enforce_csrf_checks=True)
    page = text(client.get("/feedback/"))
    assert "csrfmiddlewaretoken" in page  # the whole page's forms work without htmx
    token = re.search(r"hx-headers='\{\"X-CSRFToken\": \"([^\"]+)\"\}'", page).group(1)
    headers = {**HTMX, "X-CSRFToken": token}

    card = client.post(
        f"/feedback/slots/{held(evaluator).id}/grade/", {"grade": 1}, headers=headers
    )
    assert card.status_code == 200 and "csrfmiddlewaretoken" not in text(card)
    second = client.post(
        f"/feedback/slots/{held(evaluator).id}/grade/", {"grade": 2}, headers=headers
    )

    assert second.status_code == 200
    assert FeedbackSlot.objects.filter(grader=evaluator, grade__isnull=False).count() == 2


def test_an_evaluator_sending_a_queue_they_may_not_open_is_refused_before_anything_is_saved(
    german_only, evaluation, evaluator
):
    client = client_for(evaluator)
    client.get("/feedback/")
    slot = held(evaluator)

    response = client.post(
        f"/feedback/slots/{slot.id}/grade/",
        {"grade": 1, "evaluation": german_only.id},
        headers=HTMX,
    )

    slot.refresh_from_db()
    assert (response.status_code, slot.grade) == (404, None)


@pytest.mark.django_db(transaction=True)
def test_a_lead_grading_the_last_result_of_a_queue_sees_the_empty_state(team_a, owner):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 1})
    client = client_for(owner)
    client.raise_request_exception = False
    client.get(f"/feedback/?evaluation={evaluation.id}")

    response = client.post(
        f"/feedback/slots/{held(owner).id}/grade/",
        {"grade": 1, "evaluation": evaluation.id},
        headers=HTMX,
    )

    assert response.status_code == 200
    assert 'data-testid="empty-state"' in text(response)


def test_grading_in_a_finished_evaluation_is_refused(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")
    slot = held(evaluator)
    Evaluation.objects.filter(id=evaluation.id).update(status=Status.FINISHED)

    response = client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": 1}, headers=HTMX)

    assert response.status_code == 400
    assert "the evaluation is not open for grading" in text(response)
    slot.refresh_from_db()
    assert slot.grade is None


# --- Skipping -----------------------------------------------------------------------------


def test_skipping_records_why_releases_the_result_and_shows_another(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")
    skipped = held(evaluator)

    response = client.post(
        f"/feedback/slots/{skipped.id}/skip/", {"reason": " cannot read German "}, headers=HTMX
    )

    assert response.status_code == 200 and "<html" not in text(response)
    skip = SnapshotSkip.objects.get()
    assert (skip.snapshot_id, skip.user, skip.reason) == (
        skipped.snapshot_id,
        evaluator,
        "cannot read German",
    )
    skipped.refresh_from_db()
    assert (skipped.grader, skipped.grade) == (None, None)
    following = shown_slot(response)
    assert following.snapshot_id != skipped.snapshot_id


def test_a_skipped_result_is_never_offered_again_to_the_same_grader(team_a, evaluator):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2})
    client = client_for(evaluator)
    client.get("/feedback/")
    skipped = held(evaluator)
    client.post(f"/feedback/slots/{skipped.id}/skip/", headers=HTMX)

    response = client.post(
        f"/feedback/slots/{held(evaluator).id}/grade/", {"grade": 1}, headers=HTMX
    )

    assert shown_slot(response) is None
    assert [s.grade for s in slots_of(evaluation)] == [None, 1]


def test_a_skipped_result_goes_to_another_grader(evaluation, evaluator, admin):
    client_for(evaluator).get("/feedback/")
    skipped = held(evaluator)
    client_for(evaluator).post(f"/feedback/slots/{skipped.id}/skip/", headers=HTMX)

    assert shown_slot(client_for(admin).get("/feedback/")) == skipped


def test_skipping_without_htmx_redirects_to_the_queue(evaluation, evaluator):
    client = client_for(evaluator)
    client.get("/feedback/")

    response = client.post(f"/feedback/slots/{held(evaluator).id}/skip/")

    assert response.status_code == 302 and response.url == "/feedback/"
    assert SnapshotSkip.objects.count() == 1


def test_skipping_a_teammates_result_is_refused_and_changes_nothing(evaluation, evaluator, admin):
    theirs = assign(slots_of(evaluation)[0], admin)

    response = client_for(evaluator).post(f"/feedback/slots/{theirs.id}/skip/", follow=True)

    assert "this result is not yours to skip" in text(response)
    assert SnapshotSkip.objects.count() == 0
    theirs.refresh_from_db()
    assert theirs.grader == admin


def test_the_outsider_cannot_skip_a_team_a_result(evaluation, evaluator, outsider):
    slot = assign(slots_of(evaluation)[0], evaluator)

    response = client_for(outsider).post(f"/feedback/slots/{slot.id}/skip/", headers=HTMX)

    assert response.status_code == 404
    assert SnapshotSkip.objects.count() == 0
    slot.refresh_from_db()
    assert slot.grader == evaluator


def test_skipping_by_get_is_refused(evaluation, evaluator):
    slot = assign(slots_of(evaluation)[0], evaluator)

    assert client_for(evaluator).get(f"/feedback/slots/{slot.id}/skip/").status_code == 405


def test_skipping_without_the_csrf_token_is_refused(evaluation, evaluator):
    slot = assign(slots_of(evaluation)[0], evaluator)
    client = client_for(evaluator, enforce_csrf_checks=True)

    response = client.post(f"/feedback/slots/{slot.id}/skip/", headers=HTMX)

    assert response.status_code == 403
    assert SnapshotSkip.objects.count() == 0
    slot.refresh_from_db()
    assert slot.grader == evaluator


# --- Previous -----------------------------------------------------------------------------


def grade_next(client, user: User, grade: int) -> FeedbackSlot:
    client.get("/feedback/")
    slot = held(user)
    client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": grade}, headers=HTMX)
    slot.refresh_from_db()
    return slot


def test_previous_reopens_the_last_graded_result_and_regrading_changes_it(evaluation, evaluator):
    client = client_for(evaluator)
    grade_next(client, evaluator, 1)
    last = grade_next(client, evaluator, 2)

    response = client.get("/feedback/previous/", headers=HTMX)

    page = text(response)
    assert response.status_code == 200 and "<html" not in page
    assert shown_slot(response) == last
    assert "<strong>changing an earlier grade</strong>" in page
    assert re.search(r'value="2" data-key="2"\s+class="grade current" aria-pressed="true"', page)
    assert "Back to the queue" in page and 'data-action="skip"' not in page

    regraded = client.post(f"/feedback/slots/{last.id}/grade/", {"grade": 0}, headers=HTMX)

    assert regraded.status_code == 200
    last.refresh_from_db()
    assert last.grade == 0
    assert FeedbackSlot.objects.filter(grader=evaluator, grade__isnull=False).count() == 2
    # Back in the queue: the result held before going back.
    assert shown_slot(regraded) == held(evaluator)


def test_previous_walks_further_back_with_before(evaluation, evaluator):
    client = client_for(evaluator)
    first = grade_next(client, evaluator, 1)
    second = grade_next(client, evaluator, 2)

    newest = client.get("/feedback/previous/")
    link = re.search(r'href="(/feedback/previous/\?before=[^"]+)"', text(newest)).group(1)
    older = client.get(link.replace("&amp;", "&"))

    assert shown_slot(newest) == second
    assert shown_slot(older) == first


def test_previous_without_htmx_is_a_whole_page(evaluation, evaluator):
    client = client_for(evaluator)
    last = grade_next(client, evaluator, 3)

    response = client.get("/feedback/previous/")

    assert response.status_code == 200 and text(response).startswith("<!doctype html>")
    assert shown_slot(response) == last


def test_previous_with_nothing_graded_says_so_on_the_card(evaluation, evaluator):
    response = client_for(evaluator).get("/feedback/previous/", headers=HTMX)

    assert response.status_code == 200
    assert "There is no earlier grade to go back to." in text(response)
    assert shown_slot(response) == held(evaluator)


def test_previous_with_nothing_graded_without_htmx_redirects_with_the_message(
    evaluation, evaluator
):
    response = client_for(evaluator).get("/feedback/previous/", follow=True)

    assert response.redirect_chain == [("/feedback/", 302)]
    assert "There is no earlier grade to go back to." in text(response)


def test_previous_never_shows_another_graders_or_another_teams_grades(
    evaluation, evaluator, admin, outsider
):
    grade_next(client_for(admin), admin, 3)

    mine = client_for(evaluator).get("/feedback/previous/", headers=HTMX)
    theirs = client_for(outsider).get("/feedback/previous/", headers=HTMX)

    assert "There is no earlier grade to go back to." in text(mine)
    assert "There is no earlier grade to go back to." in text(theirs)
    assert shown_slot(theirs) is None


def test_previous_with_an_impossible_before_date_is_refused_not_a_server_error(
    evaluation, evaluator
):
    client = client_for(evaluator)
    client.raise_request_exception = False
    grade_next(client, evaluator, 1)

    response = client.get("/feedback/previous/", {"before": "2024-13-45T00:00:00"})

    assert response.status_code < 500


def test_previous_ignores_a_before_that_is_not_a_date(evaluation, evaluator):
    client = client_for(evaluator)
    last = grade_next(client, evaluator, 1)

    response = client.get("/feedback/previous/", {"before": "yesterday"})

    assert shown_slot(response) == last


# --- Metrics follow the grades (real commits) -----------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_grade_through_the_page_updates_the_metrics_and_the_dashboard(team_a, evaluator):
    evaluation = make_evaluation(
        team=team_a, metrics=[("precision", 5), ("cg", 5)], keywords={"red shoes": 5}
    )
    client = client_for(evaluator)
    client.get("/feedback/")
    assert '<strong data-testid="waiting">5</strong>' in text(client.get("/"))

    first = held(evaluator)
    client.post(f"/feedback/slots/{first.id}/grade/", {"grade": 3}, headers=HTMX)
    second = held(evaluator)
    client.post(f"/feedback/slots/{second.id}/grade/", {"grade": 0}, headers=HTMX)

    evaluation.refresh_from_db()
    assert (evaluation.graded_slots, evaluation.progress) == (2, pytest.approx(0.4))
    values = dict(
        EvaluationMetric.objects.filter(evaluation=evaluation).values_list("metric", "value")
    )
    # searchtweak precision: relevant among the judged results, 1 of 2.
    assert values == {"precision": pytest.approx(0.5), "cg": pytest.approx(3.0)}
    assert not Keyword.objects.get(evaluation=evaluation).needs_scoring
    assert '<strong data-testid="waiting">3</strong>' in text(client.get("/"))


@pytest.mark.django_db(transaction=True)
def test_changing_an_earlier_grade_through_previous_updates_the_metrics(team_a, evaluator):
    evaluation = make_evaluation(team=team_a, metrics=[("cg", 5)], keywords={"red shoes": 5})
    client = client_for(evaluator)
    client.get("/feedback/")
    slot = held(evaluator)
    client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": 3}, headers=HTMX)
    assert EvaluationMetric.objects.get(evaluation=evaluation).value == pytest.approx(3.0)

    assert shown_slot(client.get("/feedback/previous/", headers=HTMX)) == slot
    client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": 1}, headers=HTMX)

    assert EvaluationMetric.objects.get(evaluation=evaluation).value == pytest.approx(1.0)
    evaluation.refresh_from_db()
    assert evaluation.graded_slots == 1


# --- Query counts -------------------------------------------------------------------------


def build_team_work(team, size: int) -> User:
    """3 evaluations and 10 graders per size unit, some results held or graded by them.

    Returns a fresh evaluator of the team, who holds nothing yet.
    """
    graders = [make_grader(team, f"member{size}-{i}@a.test") for i in range(10 * size)]
    for number in range(3 * size):
        evaluation = make_evaluation(
            team=team,
            scale=("binary", "graded", "detail")[number % 3],
            strategy=(1, 3)[number % 2],
            keywords={f"query {number}-{k}": 4 for k in range(3)},
            scoring_guidelines="**Be strict.**",
        )
        slots = slots_of(evaluation)
        for grader, slot in zip(graders, slots[::3], strict=False):
            assign(slot, grader)
        for slot in slots[1::3][:4]:
            slot_judge(slot_id=slot.id, giver=Giver.recorded(None, "import"), grade=1)
    return make_grader(team, f"fresh{size}@a.test")


# Measured on SQLite and PostgreSQL, the same at both sizes, savepoints included; one
# statement reads the session, the person and their memberships. A lead's dashboard 9
# (its pins' reads, and the AI judges' grades of today counted apart); Give
# feedback 8 on SQLite (the open evaluations, the pick, the take, the read for the card,
# the count of today's grades) and 6 on PostgreSQL (the grader's lock and its release
# around one statement that claims, reads and counts), 8 and 7 for a lead's queue; a
# grade posted with htmx 14 and 6 (the grade with its snapshot and keyword marks, then
# the next claim); Previous 3. A little headroom above each.
DASHBOARD_QUERIES = 10
FEEDBACK_QUERIES = 10
GRADE_QUERIES = 16
PREVIOUS_QUERIES = 5


@pytest.mark.parametrize("size", [1, 2])
def test_the_dashboard_reads_a_fixed_number_of_queries(size, team_a, django_assert_max_num_queries):
    grader = build_team_work(team_a, size)
    client = client_for(grader)

    with django_assert_max_num_queries(DASHBOARD_QUERIES):
        response = client.get("/")

    assert response.status_code == 200
    assert text(response).count('">Evaluation ') == 3 * size


@pytest.mark.parametrize("size", [1, 2])
def test_the_dashboard_of_a_lead_reads_a_fixed_number_of_queries(
    size, team_a, owner, django_assert_max_num_queries
):
    build_team_work(team_a, size)
    client = client_for(owner)

    with django_assert_max_num_queries(DASHBOARD_QUERIES):
        response = client.get("/")

    assert text(response).count("Open its queue") == 3 * size


@pytest.mark.parametrize("size", [1, 2])
def test_give_feedback_reads_a_fixed_number_of_queries(size, team_a, django_assert_max_num_queries):
    grader = build_team_work(team_a, size)
    client = client_for(grader)

    with django_assert_max_num_queries(FEEDBACK_QUERIES):
        claimed = client.get("/feedback/")
    with django_assert_max_num_queries(FEEDBACK_QUERIES):
        again = client.get("/feedback/")

    assert shown_slot(claimed) == shown_slot(again) == held(grader)


@pytest.mark.parametrize("size", [1, 2])
def test_a_leads_queue_reads_a_fixed_number_of_queries(
    size, team_a, owner, django_assert_max_num_queries
):
    build_team_work(team_a, size)
    last = Evaluation.objects.filter(team=team_a).order_by("-id").first()
    client = client_for(owner)

    with django_assert_max_num_queries(FEEDBACK_QUERIES):
        response = client.get(f"/feedback/?evaluation={last.id}")

    assert shown_slot(response).evaluation_id == last.id


@pytest.mark.parametrize("size", [1, 2])
def test_a_grade_reads_and_writes_a_fixed_number_of_queries(
    size, team_a, django_assert_max_num_queries
):
    grader = build_team_work(team_a, size)
    client = client_for(grader)
    client.get("/feedback/")

    grades_held_within(GRADE_QUERIES, client, grader, django_assert_max_num_queries)


def grades_held_within(queries: int, client, grader: User, assert_max_num_queries) -> None:
    """The grader grades the result they hold, with htmx, in at most `queries` statements,
    and the card shows the next one they hold."""
    slot = held(grader)

    with assert_max_num_queries(queries):
        response = client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": 1}, headers=HTMX)

    assert response.status_code == 200
    slot.refresh_from_db()
    assert slot.grade == 1
    assert shown_slot(response) == held(grader)


# PostgreSQL, a grade committed as in production, where the recompute it queues runs on
# a worker: the session with the person and their teams; the grade writer's transaction
# (BEGIN, lock the snapshot's slots, write the grade, mark the keyword, COMMIT); the
# grader's claim lock, the claim with the card's reads, the lock's release. (One statement
# once graded, marked and took the claim lock; the one grade writer every path shares
# costs five round trips more.)
HOT_GRADE_QUERIES = 9


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("keywords", [2, 20])
def test_a_grade_takes_nine_statements_on_postgresql(
    keywords, postgres, team_a, evaluator, django_assert_max_num_queries
):
    evaluation = make_evaluation(
        team=team_a, strategy=3, keywords={f"query {k}": 4 for k in range(keywords)}
    )
    slot_judge(slot_id=slots_of(evaluation)[0].id, giver=Giver.recorded(None, "import"), grade=1)
    client = client_for(evaluator)
    client.get("/feedback/")
    assert held(evaluator).snapshot_started

    with mock.patch("apps.scoring.pipeline.start_recompute"):
        grades_held_within(HOT_GRADE_QUERIES, client, evaluator, django_assert_max_num_queries)


@pytest.mark.parametrize("size", [1, 2])
def test_previous_reads_a_fixed_number_of_queries(size, team_a, django_assert_max_num_queries):
    grader = build_team_work(team_a, size)
    client = client_for(grader)
    last = grade_next(client, grader, 1)

    with django_assert_max_num_queries(PREVIOUS_QUERIES):
        response = client.get("/feedback/previous/", headers=HTMX)

    assert shown_slot(response) == last


def feedback_queries(client) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get("/feedback/")
    assert response.status_code == 200
    return len(captured)


def done_by(grader: User, team, count: int) -> None:
    """Three-grade evaluations where the grader gave their one grade per result already;
    the other two grades of each result wait for other graders."""
    for _ in range(count):
        evaluation = make_evaluation(team=team, strategy=3, keywords={"done": 2})
        for slot in slots_of(evaluation)[::3]:
            slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=1)


def test_give_feedback_reads_as_many_queries_with_twice_the_evaluations_done(team_a, evaluator):
    client = client_for(evaluator)
    done_by(evaluator, team_a, 3)
    with_three = feedback_queries(client)

    done_by(evaluator, team_a, 3)
    with_six = feedback_queries(client)

    assert with_six == with_three

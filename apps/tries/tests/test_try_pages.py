"""The tries' pages through real URLs, on a real local search server whose ranking turns
on a `boost` parameter: a lead starts a try from the model's page, reads its verdict with
judged@k and whose grades it rests on, fills its holes, sends it to people, promotes it,
compares it with another try; a form with problems names each field and saves nothing;
another team's tries and models are not found, and an evaluator is refused."""

import io
import re
from html import unescape

import pytest
from django.urls import reverse

from apps.endpoints.models import SearchModel
from apps.evaluations.models import Status
from apps.judges.services import judge_create
from apps.library.lists import judgement_list_import
from apps.tries.models import Try, TryState
from apps.tries.starting import TryRequest, try_start
from tests.factories import client_for

from .test_try_actions import true_judge  # noqa: F401  (a fixture: an AI judge that is right)
from .tuned import GRADES, KEYWORDS, doc_id, import_grades

# Transactional, as in production: what a commit queues (the try's run, a judge's
# lanes) runs at once, in this process.
pytestmark = pytest.mark.django_db(transaction=True)

ASKED = KEYWORDS[:6]  # six queries all worse: p = 2 / 64, significant


def judges_grade(team, ranks, keywords=ASKED):
    """Put an AI judge's grades for documents `ranks` of every keyword into the library."""
    lines = ["query,docid,rating"]
    lines += [f"{k},{doc_id(k, r)},{GRADES[r]}" for k in keywords for r in ranks]
    judgement_list_import(
        team=team,
        name="Graded by a judge",
        file_format="quepid",
        judgements=io.BytesIO("\n".join(lines).encode()),
        queries=None,
        scale="graded",
        made_by="judge",
    )


def started(team, **asked):
    return Try.objects.get(id=try_start(team=team, user=None, asked=TryRequest(**asked)).id)


def as_model_runs(team):
    """Try 1: the model as it is (best first), over the six queries."""
    return started(team, model="Tuned", queries=ASKED, metrics="ndcg@5")


def boost_down(team):
    """Try 2: boost 1, which ranks the pool worst first, against try 1."""
    return started(
        team, model="Tuned", queries=ASKED, metrics="ndcg@5", params={"boost": "1"}, baseline_try=1
    )


def text_of(page: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())


def text(response) -> str:
    """The page's words, tags left out, spaces as one."""
    return text_of(response.content.decode())


def tries_url(model) -> str:
    return reverse("tries:model_tries", args=[model.id])


def try_url(attempt) -> str:
    return reverse("tries:try_detail", args=[attempt.id])


@pytest.fixture
def lead(owner):
    return client_for(owner)


NEW_TRY = {
    "evaluation": "",
    "queries": "\n".join(ASKED),
    "params": "",
    "headers": "",
    "body": "",
    "knobs": "",
    "baseline": "",
    "metrics": "ndcg@5",
    "depth": "5",
    "notes": "",
}


def test_a_lead_tries_a_worse_boost_from_the_models_page_and_reads_worse(team_a, tuned_model, lead):
    import_grades(team_a, ranks=range(1, 11))
    as_model_runs(team_a)
    model_page = lead.get(reverse("endpoints:search_model_detail", args=[tuned_model.id]))
    assert f'href="{tries_url(tuned_model)}#new-try"' in model_page.content.decode()
    assert "Try a change" in text(model_page)

    answer = lead.post(
        tries_url(tuned_model),
        {
            **NEW_TRY,
            "params": "boost=#boost#",
            "knobs": "boost=1",
            "baseline": "try:1",
            "notes": "Less boost",
        },
        follow=True,
    )

    attempt = Try.objects.get(search_model=tuned_model, number=2)
    assert answer.redirect_chain[-1][0] == try_url(attempt)
    assert attempt.state == TryState.DONE and attempt.notes == "Less boost"
    page = text(answer)
    assert "Started try 2 of Tuned." in page
    verdict = answer.content.decode().split('data-testid="verdict"')[1].split("</section>")[0]
    assert 'data-verdict="worse"' in answer.content.decode()
    assert "judged@5 100.0%" in text_of(verdict)
    assert "against try 1" in page
    assert "param boost: #boost#" in page and "knob boost: 1" in page
    assert "30 grades by people" in page  # the try's top 5 of six queries
    assert "mean RBO 0.000" in page


def test_every_problem_of_the_form_names_its_field_and_nothing_is_saved(team_a, tuned_model, lead):
    answer = lead.post(
        tries_url(tuned_model),
        {
            **NEW_TRY,
            "queries": "",
            "knobs": "Bad=1",
            "metrics": "nonsense@5",
            "depth": "0",
        },
    )

    page = text(answer)
    assert answer.status_code == 200
    assert "Nothing was saved" in page
    for said in (
        "Or these queries, one per line: At least one.",
        "Knobs: Bad: a name of lower-case letters",
        "Metrics: Unknown metric 'nonsense'",
        "Depth: From 1 to 100.",
    ):
        assert said in page, said
    assert not Try.objects.exists()


def test_a_line_the_form_cannot_read_is_named_by_its_number_beside_every_other_problem(
    team_a, tuned_model, lead
):
    answer = lead.post(
        tries_url(tuned_model),
        {**NEW_TRY, "params": "boost=2\n\nfq", "headers": "X-Debug", "depth": "0"},
    )

    page = text(answer)
    assert "Parameters: Line 3: no '=' (write name=value, or -name to drop it)." in page
    assert "Headers: Line 1: no ':'" in page
    assert "Depth: From 1 to 100." in page  # the service's problems come at once too
    assert not Try.objects.exists()


def test_an_empty_value_keeps_the_parameter_and_a_minus_drops_it(team_a, tuned_model, lead):
    lead.post(tries_url(tuned_model), {**NEW_TRY, "params": "boost=\n-debug\nq=#query#"})

    attempt = Try.objects.get()
    assert attempt.draft().params == [("boost", ""), ("debug", None), ("q", "#query#")]


def test_the_list_shows_each_try_with_its_state_verdict_and_baseline(team_a, tuned_model, lead):
    import_grades(team_a, ranks=range(1, 11))
    as_model_runs(team_a)
    worse = boost_down(team_a)
    Try.objects.filter(id=worse.id).update(notes="Boost down to 1")

    page = lead.get(tries_url(tuned_model)).content.decode()

    assert re.findall(r'data-testid="try-row" data-number="(\d+)"', page) == ["2", "1"]
    rows = page.split('data-testid="try-row"')[1:]
    shown = [text_of(row.split("</tr>")[0]) for row in rows]
    assert "Try 2" in shown[0] and "Boost down to 1" in shown[0] and "Done" in shown[0]
    assert "Worse" in shown[0] and "try 1" in shown[0]
    assert "Try 1" in shown[1] and "No baseline" in shown[1] and "none" in shown[1]


def test_the_try_page_marks_ai_grades_apart_from_peoples(team_a, tuned_model, lead):
    import_grades(team_a, ranks=range(1, 6), keywords=ASKED)
    judges_grade(team_a, ranks=range(6, 11))
    as_model_runs(team_a)
    worse = boost_down(team_a)

    answer = lead.get(try_url(worse))

    page = answer.content.decode()
    assert 'data-verdict="worse"' in page
    assert "30 grades by AI judges" in text(answer)
    tried = page.split('data-testid="tried-list"')[1].split("</table>")[0]
    baseline = page.split('data-testid="baseline-list"')[1].split("</table>")[0]
    assert tried.count('data-basis="judges"') == 5 and "AI</span>" in tried
    assert baseline.count('data-basis="people"') == 5 and "AI</span>" not in baseline
    assert tried.count('data-move="new"') == 5 and baseline.count('data-move="dropped"') == 5


def test_too_little_judged_says_so_in_a_sentence_and_offers_the_judge_with_its_budget(
    team_a, tuned_model, lead, settings
):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    import_grades(team_a, ranks=range(1, 6), keywords=ASKED)
    as_model_runs(team_a)
    worse = boost_down(team_a)
    judge_create(
        team=team_a,
        name="Careful",
        protocol="openai",
        base_url="http://127.0.0.1:9/v1",
        model_name="gpt-test",
        budget_calls=100,
        budget_cost="2.50",
    )

    answer = lead.get(try_url(worse))

    page = text(answer)
    assert "Not enough judged to tell: the library grades 0% of the try's top 5" in page
    assert 'data-testid="condensed"' in answer.content.decode()  # judged@5 0% against 100%
    assert "judged@5 0.0%" in page and "judged@5 100.0%" in page
    assert "Unjudged in the top k 30 of the try's, 0 of try 1's" in page
    assert "100 calls, US$2.50 a run" in page
    assert "Fill the 30 unjudged with an AI judge" in page


def test_filling_the_holes_with_an_ai_judge_turns_the_verdict(
    team_a,
    tuned_model,
    lead,
    true_judge,  # noqa: F811  (the fixture imported above)
):
    import_grades(team_a, ranks=range(1, 6), keywords=ASKED)
    as_model_runs(team_a)
    worse = boost_down(team_a)
    assert 'data-verdict="not enough judged"' in lead.get(try_url(worse)).content.decode()

    answer = lead.post(
        reverse("tries:try_fill", args=[worse.id]), {"judge": true_judge.id}, follow=True
    )

    page = answer.content.decode()
    assert "Truthful is grading the try's unjudged results" in text(answer)
    assert 'data-verdict="worse"' in page
    assert "30 grades by AI judges" in text(answer)


def test_send_to_people_and_promote_link_to_what_they_made(team_a, tuned_model, lead):
    import_grades(team_a, ranks=range(1, 6), keywords=ASKED)
    as_model_runs(team_a)
    worse = boost_down(team_a)

    sent = lead.post(reverse("tries:try_send", args=[worse.id]), follow=True)
    promoted = lead.post(reverse("tries:try_promote", args=[worse.id]), follow=True)

    worse.refresh_from_db()
    assert worse.evaluation.status == Status.ACTIVE
    assert "Sent to people" in text(sent)
    evaluation_url = reverse("insights:evaluation_detail", args=[worse.evaluation_id])
    assert f'href="{evaluation_url}"' in promoted.content.decode()
    model = SearchModel.objects.get(name="Tuned (try 2)")
    assert "Promoted to the search model Tuned (try 2)." in text(promoted)
    model_url = reverse("endpoints:search_model_detail", args=[model.id])
    assert f'href="{model_url}"' in promoted.content.decode()


def test_a_refusal_of_a_service_is_a_message_not_an_error(team_a, tuned_model, lead):
    queued = Try.objects.create(team=team_a, search_model=tuned_model, number=1)

    answer = lead.post(reverse("tries:try_send", args=[queued.id]), follow=True)

    assert answer.status_code == 200
    assert "the try has not finished running" in text(answer)


def test_try_again_fills_the_form_from_the_try(team_a, tuned_model, lead):
    import_grades(team_a, ranks=range(1, 6), keywords=ASKED)
    as_model_runs(team_a)
    worse = started(
        team_a,
        model="Tuned",
        queries=ASKED,
        metrics="ndcg@5",
        params=[["boost", "#b#"], ["debug", None]],
        headers={"X-Secret": "s3cret-value"},
        knobs={"b": "1"},
        baseline_try=1,
        depth=7,
    )
    try_page = lead.get(try_url(worse)).content.decode()
    again = f"{tries_url(tuned_model)}?from={worse.id}#new-try"
    assert f'href="{again}"' in try_page

    form = lead.get(f"{tries_url(tuned_model)}?from={worse.id}").content.decode()

    assert "boost=#b#\n-debug</textarea>" in form
    assert "b=1</textarea>" in form
    assert '<option value="try:1" selected>' in form
    assert 'value="7"' in form and "ndcg@5" in form
    assert "s3cret-value" not in form and "<code>X-Secret</code>" in form
    lead.post(
        f"{tries_url(tuned_model)}?from={worse.id}",
        {**NEW_TRY, "params": "boost=#b#", "knobs": "b=2", "keep_headers_of": worse.id},
    )
    assert Try.objects.get(number=3).draft().headers == [("X-Secret", "s3cret-value")]


def test_the_progress_polls_every_second_until_the_try_is_done(team_a, tuned_model, lead):
    queued = Try.objects.create(team=team_a, search_model=tuned_model, number=1, queries_total=4)
    progress = reverse("tries:try_progress", args=[queued.id])

    page = lead.get(try_url(queued)).content.decode()
    assert f'hx-get="{progress}" hx-trigger="every 1s"' in page
    assert "Running queries: 0 of 4" in text_of(page)
    assert "HX-Refresh" not in lead.get(progress)

    Try.objects.filter(id=queued.id).update(state=TryState.DONE, queries_done=4)
    polled = lead.get(progress)
    assert polled["HX-Refresh"] == "true" and "hx-trigger" not in polled.content.decode()


def test_two_tries_of_any_models_compare_side_by_side(team_a, tuned_model, lead):
    from apps.endpoints.tests.factories import make_model

    import_grades(team_a, ranks=range(1, 11), keywords=ASKED)
    make_model(team_a, tuned_model.endpoint, name="Other", params="q=#query#\nboost=1")
    ours = as_model_runs(team_a)
    theirs = started(team_a, model="Other", queries=ASKED, metrics="ndcg@5")

    chosen = lead.get(reverse("tries:try_compare", args=[ours.id]), {"other": theirs.id})
    against = reverse("tries:try_against", args=[ours.id, theirs.id])
    assert chosen.status_code == 302 and chosen["Location"] == against

    page = lead.get(against)
    assert "Tuned, try 1 against Other, try 1" in text(page)
    assert 'data-verdict="better"' in page.content.decode()
    assert "Two search models: Tuned and Other" in text(page)


def test_a_knob_nothing_uses_is_warned_of(team_a, tuned_model, lead):
    attempt = started(team_a, model="Tuned", queries=ASKED[:1], knobs={"bost": "2"})

    page = text(lead.get(try_url(attempt)))

    assert "#bost# appears nowhere in the request: the knob changes nothing" in page


def test_notes_are_edited_on_the_try_page(team_a, tuned_model, lead):
    attempt = as_model_runs(team_a)

    lead.post(reverse("tries:try_notes", args=[attempt.id]), {"notes": "The model as it is"})

    attempt.refresh_from_db()
    assert attempt.notes == "The model as it is"
    assert "The model as it is" in lead.get(try_url(attempt)).content.decode()


def test_another_teams_try_and_model_are_not_found(team_a, team_b, tuned_model, outsider):
    attempt = as_model_runs(team_a)
    theirs = client_for(outsider)
    mine_against = as_model_runs(team_a)

    for url in (
        tries_url(tuned_model),
        try_url(attempt),
        reverse("tries:try_progress", args=[attempt.id]),
        reverse("tries:try_against", args=[attempt.id, mine_against.id]),
    ):
        assert theirs.get(url).status_code == 404, url
    for name in ("try_promote", "try_send", "try_notes", "try_fill"):
        assert theirs.post(reverse(f"tries:{name}", args=[attempt.id])).status_code == 404
    assert not SearchModel.objects.filter(name__startswith="Tuned (try").exists()


def test_a_try_of_another_team_is_no_other_side_to_compare_with(
    team_a, team_b, tuned_model, lead, search_server
):
    from apps.endpoints.tests.factories import make_endpoint, make_model

    ours = as_model_runs(team_a)
    make_model(team_b, make_endpoint(team_b, url=search_server.url("/tuned")), name="Theirs")
    theirs = started(team_b, model="Theirs", queries=ASKED)

    assert lead.get(reverse("tries:try_against", args=[ours.id, theirs.id])).status_code == 404
    refused = lead.get(reverse("tries:try_compare", args=[ours.id]), {"other": theirs.id})
    assert refused["Location"] == try_url(ours)


def test_an_evaluator_is_refused_the_tries_pages(team_a, tuned_model, evaluator):
    attempt = as_model_runs(team_a)
    grader = client_for(evaluator)

    assert grader.get(tries_url(tuned_model)).status_code == 403
    assert grader.get(try_url(attempt)).status_code == 403
    assert grader.post(tries_url(tuned_model), NEW_TRY).status_code == 403
    assert grader.post(reverse("tries:try_promote", args=[attempt.id])).status_code == 403
    assert Try.objects.count() == 1

"""A try on real parts: posted over the API, its queries run on a Celery worker on Redis
against a real search server, at most SEARCH_CONCURRENCY_PER_ENDPOINT calls at once, and
its URL then gives the verdict from the judgement library."""

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.tries.models import Try, TryState
from apps.tries.tests.tuned import KEYWORDS, import_grades, make_tuned_model
from tests.factories import make_team
from tests.worker import stop_worker, wait_for


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_a_posted_try_and_its_url_gives_the_verdict(
    celery_worker_process, search_server, settings
):
    team = make_team()
    make_tuned_model(team, search_server)
    import_grades(team, ranks=range(1, 11))
    _token, text = api_token_create(team=team, name="ci")
    api = Client(headers={"Authorization": f"Bearer {text}"})
    search_server.delay_seconds = 0.05

    def posted(**draft) -> str:
        answer = api.post(
            "/api/v1/tries/",
            {"model": "Tuned", "queries": KEYWORDS, "metrics": "ndcg@5", **draft},
            content_type="application/json",
        )
        assert answer.status_code == 202, answer.content
        try_id = answer.json()["id"]

        def finished() -> bool:
            return Try.objects.get(id=try_id).state == TryState.DONE

        if not wait_for(finished, seconds=30):
            output = stop_worker(celery_worker_process)
            pytest.fail(f"the worker did not run the try in 30 s; its output:\n{output}")
        return answer.json()["url"]

    posted()
    body = api.get(posted(params={"boost": 1})).json()

    assert (body["state"], body["queries_done"], body["verdict"]) == ("done", 10, "worse")
    assert body["metrics"][0]["judged"] == 1.0
    assert 1 < search_server.most_in_flight <= settings.SEARCH_CONCURRENCY_PER_ENDPOINT

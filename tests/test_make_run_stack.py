"""`make run` runs everything: the test starts it as a newcomer does (`make run PORT=...`,
no broker, no Redis, an SQLite file of its own) and changes nothing in the process but
data. The demo's nightly schedule, set to every minute, fires on the stack's own beat;
its worker fetches the run's results from the demo search API at the port served, the
demo judge grades them through the demo model at that port, the finished run is
compared with the team's baseline, and the webhook that tells of it, refused once by a
local receiver, is retried and delivered. Meanwhile the lead's open dashboard, which
every web process answered "nothing changed", is told of the worker's changes (the
three share one cache). Ctrl-C then stops the web server, the worker and beat together."""

import contextlib
import html
import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urlencode

import pytest

from apps.demo import seed as demo
from tests.redis_server import free_port
from tests.webhook_receiver import WebhookReceiver
from tests.worker import wait_for

ROOT = Path(__file__).resolve().parent.parent
# What a newcomer's shell does not have: the make run stack must find no broker, no
# Redis and no database of the test run's own.
NOT_A_NEWCOMERS = (
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CACHE_URL",
    "LIVE_STREAM_URL",
    "LIVE_REDIS_URL",
    "THROTTLE_REDIS_URL",
    "SITE_URL",
    "DEMO_SEARCH_URL",
    "DEMO_JUDGE_URL",
    # Nor what an outer make (`make test`) hands its commands.
    "MAKEFLAGS",
    "MAKELEVEL",
    "MFLAGS",
    "HOST",
    "PORT",
)

# The setup, as a lead would make it on the pages, written through the services: the
# demo's schedule every minute, the model's last weekly run as the team's baseline, a
# webhook told of compared runs. Prints the webhook's signing secret.
SETUP = """
from apps.accounts.models import Team
from apps.demo import seed as demo
from apps.lifecycle.steps import team_set_baseline
from apps.evaluations.models import Evaluation
from apps.notifications.services import webhook_create
from apps.schedules.models import Schedule
from apps.schedules.services import schedule_update

team = Team.objects.get(name=demo.TEAM_NAME)
last_week = Evaluation.objects.get(team=team, name="Default ranking, week 3")
team_set_baseline(team=team, evaluation=last_week)
nightly = Schedule.objects.get(team=team, name=demo.DEMO_SCHEDULE)
schedule_update(schedule=nightly, cron="* * * * *")
webhook, secret = webhook_create(
    team=team, name="CI", url="{url}", events=["schedule.run_compared"]
)
print(secret)
"""

# What the run left behind, as JSON.
STATE = """
import contextlib
import html
import json
from apps.notifications.models import Delivery
from apps.schedules.models import ScheduledRun

run = ScheduledRun.objects.select_related("evaluation").get()
delivery = Delivery.objects.get()
print(json.dumps({
    "state": run.state,
    "status": run.evaluation.status,
    "results": run.evaluation.total_slots,
    "judged": run.evaluation.graded_slots,
    "delivery": [delivery.status, delivery.attempts],
}))
"""


def manage_shell(code: str, env: dict[str, str]) -> str:
    """Run `code` on the stack's database; its last printed line. A receiver on this
    machine is allowed, as on the pages `make run` serves."""
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env={**env, "WEBHOOKS_ALLOW_PRIVATE_ADDRESSES": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def processes_of(run_folder: Path) -> list[int]:
    """The processes started with this RUN_FOLDER in their environment: the stack's own,
    whatever their command line."""
    mark = f"RUN_FOLDER={run_folder}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if mark in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
        except OSError:  # ended meanwhile
            continue
    return found


class Lead:
    """The demo's lead in a browser: logged in on the stack, its session kept."""

    def __init__(self, site: str) -> None:
        self.site = site
        self.browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        form = self.get("/accounts/login/")[1]
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
        assert token, form
        fields = {"csrfmiddlewaretoken": token[1], "username": demo.LEAD, "password": demo.PASSWORD}
        with self.browser.open(f"{site}/accounts/login/", urlencode(fields).encode()) as page:
            assert page.url == f"{site}/", "logged in, on the dashboard"

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
        """The status, the page and its ETag."""
        request = urllib.request.Request(f"{self.site}{path}", headers=headers or {})
        try:
            with self.browser.open(request, timeout=10) as answer:
                return answer.status, answer.read().decode(), answer.headers.get("ETag", "")
        except HTTPError as answer:  # 304 among them
            return answer.code, "", answer.headers.get("ETag", "")

    def live_dashboard(self) -> tuple[str, str]:
        """The dashboard's live URL and the ETag it was drawn at (templates/_live.html)."""
        page = self.get("/")[1]
        found = re.search(r'data-live-url="([^"]+)" data-live-etag="([^"]+)"', page)
        assert found, page
        return html.unescape(found[1]), html.unescape(found[2])


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture
def newcomers_environment(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in NOT_A_NEWCOMERS}
    env.update(
        # The files make run would keep in the clone, kept in the test's folder instead.
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        RUN_FOLDER=str(tmp_path / "run"),
        STATIC_ROOT=str(tmp_path / "static"),
        SECRET_KEY="the-make-run-stack-test-" + "k" * 40,
        # Beat looks for due schedules every 2 s instead of 60, and a failed webhook is
        # tried again 2 s later instead of 30: the same code, sooner.
        SCHEDULES_CHECK_SECONDS="2",
        WEBHOOK_RETRY_SECONDS="2",
    )
    return env


def test_make_run_fires_a_schedule_compares_its_run_and_retries_its_webhook(
    newcomers_environment, tmp_path
):
    env = newcomers_environment
    port = free_port()
    site = f"http://127.0.0.1:{port}"
    log = tmp_path / "make-run.log"
    with log.open("wb") as output:
        stack = subprocess.Popen(
            ["make", "run", f"PORT={port}"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
    try:
        # Migrating and loading the demo come first: up to a few minutes on a busy machine.
        if not wait_for(lambda: answers(f"{site}/accounts/login/"), seconds=300):
            pytest.fail(f"make run did not serve {site}:\n{log.read_text()[-5000:]}")

        # The lead's dashboard asks whether anything changed: every web process reads
        # the one version the page was drawn at ("nothing changed", 304).
        lead = Lead(site)
        live_url, drawn_at = lead.live_dashboard()
        asked = [lead.get(live_url, {"If-None-Match": drawn_at})[0] for _ in range(6)]
        assert asked == [304] * 6

        with WebhookReceiver(fail_first=1) as receiver:
            receiver.secret = manage_shell(SETUP.format(url=receiver.url), env)
            # The next minute's time, then the run's fetch, judge and comparison.
            if not wait_for(lambda: bool(receiver.delivered()), seconds=150):
                pytest.fail(f"no webhook delivered in 150 s:\n{log.read_text()[-5000:]}")
            received = list(receiver.received)

        # The worker's changes renewed the version the web reads: the dashboard redraws.
        status, _, now_at = lead.get(live_url, {"If-None-Match": drawn_at})
        assert (status, now_at != drawn_at) == (200, True)

        state = json.loads(manage_shell(STATE, env))
        assert state["state"] == "compared"
        assert state["status"] == "finished"
        # The demo search API answered the worker at this port: 8 queries, 8 results each.
        assert state["results"] == 64
        assert state["judged"] == 64
        assert state["delivery"] == ["delivered", 2]
        assert [r.answered for r in received] == [500, 200]
        assert all(r.signed_right for r in received)
        told = received[-1].json
        assert told["event"] == "schedule.run_compared"
        [against_baseline] = told["data"]["comparisons"]
        assert against_baseline["against"] == "baseline"
        assert against_baseline["evaluation"]["name"] == "Default ranking, week 3"
        assert against_baseline["outcome"] in {"pass", "fail", "undecided"}
    finally:
        with contextlib.suppress(ProcessLookupError):  # make ended already
            os.killpg(stack.pid, signal.SIGINT)  # Ctrl-C, as a terminal sends it to its job
        try:
            stack.wait(timeout=60)
        except subprocess.TimeoutExpired:
            for pid in processes_of(tmp_path / "run"):  # in sessions of their own
                os.kill(pid, signal.SIGKILL)
            raise
    # Ctrl-C stopped all three: nothing serves, nothing of the stack runs.
    assert not answers(f"{site}/accounts/login/")
    assert processes_of(tmp_path / "run") == []


def test_when_one_part_cannot_start_the_others_are_stopped_and_the_run_fails(
    newcomers_environment, tmp_path
):
    # The port is taken: gunicorn cannot listen, and a worker and beat alone would
    # leave a newcomer with a stack that looks started and serves nothing.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        stack = subprocess.run(
            [sys.executable, "-m", "config.run_stack"],
            cwd=ROOT,
            env={**newcomers_environment, "BIND": f"127.0.0.1:{port}"},
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert stack.returncode != 0
    assert "run_stack: web ended" in stack.stdout
    assert "stopping the others" in stack.stdout
    assert processes_of(tmp_path / "run") == []

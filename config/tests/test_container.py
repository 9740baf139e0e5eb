"""The container set-up: every compose service restarts by itself and says whether it is
healthy, the image runs as an unprivileged user, and the build leaves local files out."""

from pathlib import Path

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[2]


def compose_services() -> dict[str, dict]:
    # safe_load resolves the `<<: *app` merges, as docker compose does.
    compose = yaml.safe_load((PROJECT / "docker-compose.yml").read_text())
    return compose["services"]


SERVICES = sorted(compose_services())


def test_the_compose_file_has_the_expected_services():
    assert set(SERVICES) == {
        "web",
        "live",
        "worker",
        "pipeline-worker",
        "beat",
        "postgres",
        "redis",
    }


def test_the_worker_reads_every_queue_and_the_pipeline_worker_only_the_pipelines():
    # Without --queues a worker reads the default queue and the pipeline's (settings'
    # CELERY_TASK_QUEUES); the pipeline's own worker is never held by a judge's lanes.
    services = compose_services()

    assert "--queues" not in services["worker"]["command"]
    assert "--queues=pipeline" in services["pipeline-worker"]["command"].split()


@pytest.mark.parametrize("name", SERVICES)
def test_every_service_restarts_unless_stopped(name):
    assert compose_services()[name].get("restart") == "unless-stopped"


@pytest.mark.parametrize("name", SERVICES)
def test_every_service_has_a_health_check(name):
    healthcheck = compose_services()[name].get("healthcheck")

    assert healthcheck, f"{name} has no healthcheck"
    assert healthcheck["test"], f"{name}'s healthcheck runs nothing"
    assert healthcheck.get("disable") is not True


@pytest.mark.parametrize(
    ("service", "name"), [("worker", "worker"), ("pipeline-worker", "pipeline")]
)
def test_each_worker_s_health_check_pings_that_worker_alone(service, name):
    # Pinging every worker, the other one answering would make a dead one healthy.
    worker = compose_services()[service]
    [check] = [part for part in worker["healthcheck"]["test"] if "inspect ping" in part]

    assert f"-n {name}@%h" in worker["command"]
    assert f"-d {name}@$HOSTNAME" in check.replace("$$", "$")  # as compose reads it


def test_the_compose_stack_serves_plain_http_on_purpose():
    # It listens on http://127.0.0.1:8000 with no TLS proxy: without these, DEBUG off
    # would redirect to https and keep the cookies from being sent.
    environment = compose_services()["web"]["environment"]

    assert environment["DEBUG"] == "0"
    assert environment["SECURE_SSL_REDIRECT"] == "0"
    assert environment["SESSION_COOKIE_SECURE"] == "0"
    assert environment["CSRF_COOKIE_SECURE"] == "0"


# --- Dockerfile and .dockerignore -------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per line of the Dockerfile, comments left out."""
    instructions = []
    for line in (PROJECT / "Dockerfile").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, arguments = line.partition(" ")
            instructions.append((keyword.upper(), arguments.strip()))
    return instructions


def test_the_image_runs_as_an_unprivileged_user():
    users = [arguments for keyword, arguments in dockerfile_instructions() if keyword == "USER"]

    assert users, "the Dockerfile sets no USER: the container runs as root"
    # The last USER is the one the container runs as.
    assert users[-1].split(":")[0] not in {"root", "0"}


def test_the_image_collects_static_files_with_debug_off():
    # The manifest storage (DEBUG off) needs staticfiles.json, which collectstatic writes.
    runs = [arguments for keyword, arguments in dockerfile_instructions() if keyword == "RUN"]

    assert any("DEBUG=0" in run and "collectstatic" in run for run in runs)


def test_the_build_leaves_local_files_out():
    ignored = {
        line.strip()
        for line in (PROJECT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }

    assert {".git", ".venv", "db.sqlite3", "staticfiles", "node_modules", ".env"} <= ignored


def test_the_live_stream_is_served_apart_and_the_pages_are_told_where():
    services = compose_services()

    assert services["live"]["command"].startswith("uvicorn config.live_asgi:application")
    assert "8001:8001" in services["live"]["ports"]
    # The workers make most changes: every app service publishes them (apps/core/live.py)
    # and the web's pages open the stream where the browser reaches it.
    assert services["web"]["environment"]["LIVE_STREAM_URL"] == "http://127.0.0.1:8001/live/stream/"

"""What `make run` starts, and where: the web server on HOST:PORT with the demo calling
that address back, and, without a broker configured, a worker and beat on a broker kept
in files (tests/test_make_run_stack.py runs the whole of it)."""

import os
import subprocess
from pathlib import Path

from config.run_stack import ROOT, commands, sqlite_file, stack_environment

PROJECT = Path(__file__).resolve().parents[2]


def make_run_lines(*variables: str) -> list[str]:
    """The commands `make run` would run, printed (`make -n`), not run."""
    # Without what an outer make (`make test`) or the shell would hand it.
    outer = {"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "HOST", "PORT"}
    env = {name: value for name, value in os.environ.items() if name not in outer}
    printed = subprocess.run(
        ["make", "-n", "run", *variables],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return printed.stdout.splitlines()


def test_make_run_serves_at_host_and_port_and_the_demo_calls_that_address():
    lines = make_run_lines("PORT=8100", "HOST=0.0.0.0")

    [seed] = [line for line in lines if line.endswith("manage.py seed_demo")]
    [serve] = [line for line in lines if line.endswith("-m config.run_stack")]
    # Listening on every address, the app calls itself back on loopback.
    assert "DEMO_SEARCH_URL=http://127.0.0.1:8100/demo/search" in seed.split()
    assert "DEMO_JUDGE_URL=http://127.0.0.1:8100/demo/llm/v1" in seed.split()
    assert "BIND=0.0.0.0:8100" in serve.split()
    assert "DEMO_JUDGE_URL=http://127.0.0.1:8100/demo/llm/v1" in serve.split()


def test_make_run_lets_webhooks_reach_this_machine_as_search_and_judges_do():
    [serve] = [line for line in make_run_lines() if line.endswith("-m config.run_stack")]

    for setting in ("SEARCH", "AI_JUDGES", "WEBHOOKS"):
        assert f"{setting}_ALLOW_PRIVATE_ADDRESSES=${{{setting}_ALLOW_PRIVATE_ADDRESSES:-1}}" in (
            serve
        )
    assert "BIND=127.0.0.1:8000" in serve.split()


def test_without_a_broker_a_worker_and_beat_run_beside_the_web_on_files(tmp_path):
    env = stack_environment({"RUN_FOLDER": str(tmp_path)})

    assert env["CELERY_BROKER_URL"] == f"filesystem://localhost{tmp_path}/broker"
    assert env["CACHE_URL"] == f"file://{tmp_path}/cache"
    assert list(commands(env)) == ["web", "worker", "beat"]


def test_with_redis_configured_the_web_server_runs_alone_as_deployed():
    env = {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/0"}

    assert list(commands(env)) == ["web"]


def test_the_sqlite_file_turned_to_write_ahead_logging_is_the_one_django_opens():
    assert sqlite_file({}) == ROOT / "db.sqlite3"
    assert sqlite_file({"DATABASE_URL": "sqlite:///other.sqlite3"}) == ROOT / "other.sqlite3"
    assert sqlite_file({"DATABASE_URL": "sqlite:////tmp/x/db.sqlite3"}) == Path("/tmp/x/db.sqlite3")
    assert sqlite_file({"DATABASE_URL": "postgres://relevo@db:5432/relevo"}) is None

"""`make run`'s processes, started and stopped together: `python -m config.run_stack`.

With a broker configured (CELERY_BROKER_URL, Redis), only the web server runs here, as
deployed: its workers and beat run apart (`make worker`, `make beat`, docker-compose).

Without one, the periodic work must run too, or a schedule never fires, a scheduled run
is never compared and a webhook is never retried. So beside the web server this starts a
Celery worker and beat on a broker kept in files (config/file_broker.py), with a cache
in files the three share (the live pages' versions, which the worker renews when it
changes what a page shows), all under RUN_FOLDER (`.run/`, git-ignored), and turns the
SQLite database, if it is one, to write-ahead logging, where readers never wait for the
writer. Ctrl-C or SIGTERM stops all three; when one of them ends, the others are stopped.

The web server binds BIND (the Makefile sets it from HOST and PORT).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import FrameType

from config.file_broker import is_file_broker

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE = ROOT / "db.sqlite3"
# How long the processes have to finish what they are doing once asked to stop.
STOP_SECONDS = 20.0


def run_folder(env: Mapping[str, str]) -> Path:
    return Path(env.get("RUN_FOLDER") or ROOT / ".run").resolve()


def needs_own_broker(env: Mapping[str, str]) -> bool:
    """No broker configured, or one kept in files: the worker and beat run here."""
    broker = env.get("CELERY_BROKER_URL", "").strip()
    return not broker or is_file_broker(broker)


def stack_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The environment of the three processes: a broker and a cache in RUN_FOLDER
    (unless configured otherwise)."""
    folder = run_folder(env)
    stack = dict(env)
    broker = f"filesystem://localhost{folder}/broker"
    stack["CELERY_BROKER_URL"] = env.get("CELERY_BROKER_URL") or broker
    stack["CACHE_URL"] = env.get("CACHE_URL") or f"file://{folder}/cache"
    return stack


def commands(env: Mapping[str, str]) -> dict[str, list[str]]:
    """What runs, by name. The worker reads every queue (the pipeline's too); gossip,
    mingle and heartbeat, which only a fleet of workers needs, are off: a file broker
    would keep their messages for workers long gone."""
    celery = [sys.executable, "-m", "celery", "-A", "config"]
    web = [sys.executable, "-m", "gunicorn", "--config", "config/gunicorn.conf.py"]
    if not needs_own_broker(env):
        return {"web": web}
    folder = run_folder(env)
    return {
        "web": web,
        "worker": [
            *celery,
            "--quiet",
            "worker",
            "--loglevel=WARNING",
            "--concurrency=3",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        "beat": [
            *celery,
            "--quiet",
            "beat",
            "--loglevel=WARNING",
            f"--schedule={folder / 'celerybeat-schedule'}",
            f"--pidfile={folder / 'celerybeat.pid'}",
        ],
    }


def sqlite_file(env: Mapping[str, str]) -> Path | None:
    """The SQLite database file, or None when the database is another kind."""
    url = env.get("DATABASE_URL", "").strip()
    if not url:
        return DEFAULT_DATABASE
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        # sqlite:///db.sqlite3 is relative (to the clone, where make runs), sqlite:////x not.
        return ROOT / url.removeprefix("sqlite:///")
    return None


def use_write_ahead_log(database: Path) -> None:
    """Three processes share the file: in write-ahead-log mode a reader never waits for
    the writer, nor the writer for readers (the mode stays with the file)."""
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
    connection.close()


class Stack:
    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = stack_environment(env) if needs_own_broker(env) else dict(env)
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.stopping = False

    def start(self) -> None:
        for name, command in commands(self.env).items():
            # A session of its own: Ctrl-C reaches this process only, which stops the
            # others in order instead of each one taking the signal its own way.
            self.processes[name] = subprocess.Popen(
                command, cwd=ROOT, env=self.env, start_new_session=True
            )

    def wait(self) -> int:
        """Until a stop is asked (0) or one process ends (its exit code, at least 1)."""
        while not self.stopping:
            for name, process in self.processes.items():
                code = process.poll()
                if code is not None:
                    print(f"run_stack: {name} ended (exit code {code}); stopping the others")
                    return code or 1
            time.sleep(0.2)
        return 0

    def stop(self) -> None:
        """Ask every process still running to finish, and kill those that do not."""
        running = [p for p in self.processes.values() if p.poll() is None]
        for process in running:
            process.terminate()
        deadline = time.monotonic() + STOP_SECONDS
        for process in running:
            try:
                process.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def main() -> int:
    env = dict(os.environ)
    database = sqlite_file(env)
    if needs_own_broker(env) and database is not None and database.exists():
        use_write_ahead_log(database)
    stack = Stack(env)

    def stop(signum: int, frame: FrameType | None) -> None:
        stack.stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    stack.start()
    names = ", ".join(stack.processes)
    where = f" (broker and cache in {run_folder(env)})" if len(stack.processes) > 1 else ""
    print(f"run_stack: started {names}{where}; Ctrl-C stops them", flush=True)
    code = stack.wait()
    stack.stop()
    return code


if __name__ == "__main__":
    sys.exit(main())

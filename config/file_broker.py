"""A Celery broker kept in files, for one machine without Redis (`make run`).

kombu's filesystem transport writes each task as a file into a folder and the worker
takes it by moving it away: no server to run. config/settings.py uses it for a broker URL
`filesystem://localhost/path/to/folder` (kombu warns without the host name, which it
ignores); config/run_stack.py sets one under `.run/` when no broker is configured.
Deployments use Redis (config/broker.py).

Recomputes are not gathered here: which evaluation has one waiting is a key in Redis
(apps/scoring/gathering.py), so each change queues its own, which one machine's load
does not notice.
"""

from pathlib import Path
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

SCHEME = "filesystem://"
# How often a worker looks for new task files. A grade's recompute waits at most this
# long to be picked up; each look lists one folder per queue, which costs next to nothing.
POLLING_SECONDS = 0.25


def is_file_broker(url: str) -> bool:
    return url.startswith(SCHEME)


def file_broker_options(url: str) -> dict[str, object]:
    """kombu's transport options for `filesystem://localhost/folder`: the tasks' files in
    folder/messages (written and read there by every process), the exchanges' tables in
    folder/control. The folders are made if missing."""
    folder = Path(urlparse(url).path)
    if not folder.is_absolute():
        raise ImproperlyConfigured(
            f"CELERY_BROKER_URL={url!r}: a broker kept in files needs an absolute folder "
            "(filesystem://localhost/path/to/folder)."
        )
    messages, control = folder / "messages", folder / "control"
    for made in (messages, control):
        made.mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(messages),
        "data_folder_out": str(messages),
        "control_folder": str(control),
        "polling_interval": POLLING_SECONDS,
    }

"""Gunicorn settings for the web process: `gunicorn -c config/gunicorn.conf.py`.

Command-line options override these (the benchmark sets its own bind address). Tuned
with bench/grading_http_bench.py on 2 cores; see bench/README.md.
"""

import gc
import os
from typing import TYPE_CHECKING

from config.env import env_int, env_str

if TYPE_CHECKING:
    from gunicorn.arbiter import Arbiter
    from gunicorn.workers.base import Worker

wsgi_app = "config.wsgi:application"
bind = env_str("BIND", "0.0.0.0:8000")
# Sync workers, one request at a time each, with the least CPU per request (threaded
# workers spent more on their poller, on handing requests to threads and on the GIL).
# One process per core and one more keeps the cores busy while one waits on PostgreSQL:
# requests here are short and mostly CPU. More processes than that (the usual 2 x cores
# + 1) only took turns on the cores, each request running on caches the others had just
# filled: on 2 cores, 5 processes spent 10 to 20 % more CPU per grade than 3 did, and
# graded about 10 % fewer per second (bench/README.md). A request that waits long (Test
# model, up to SEARCH_TEST_TIMEOUT_SECONDS, 10 s) holds its process meanwhile: raise
# WEB_CONCURRENCY where such requests are common. One process per core spent less CPU
# still, but each sat idle while it waited on PostgreSQL, and at 300 grades/s offered
# requests queued for the two (p99 0.5 to 1.2 s against 53 to 380 ms with three).
worker_class = "sync"
workers = env_int("WEB_CONCURRENCY", (os.cpu_count() or 1) + 1, minimum=1)
backlog = 2048
timeout = 60
# Load the application once, in the master, then fork: every worker starts warm and
# shares the loaded code's memory with the others.
preload_app = True
# Each worker touches a file of its own after every request to tell the master it is
# alive: in memory, not on a disk whose journal would write it.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None


def when_ready(server: "Arbiter") -> None:
    # The master loaded the application but must hand no connection to its workers.
    from django.db import connections

    connections.close_all()
    # The first task a worker publishes would import the broker's transport (kombu's
    # Redis client, a few hundred milliseconds) in the middle of a grade; import it here,
    # once, for every worker. A kombu Connection is lazy: this opens no socket.
    from config.celery import app as celery_app

    celery_app.connection_for_write().release()
    # Everything loaded so far lives as long as the process: the garbage collector would
    # walk those objects again and again in every worker (a full collection took longer
    # than a request), and writing its marks into them would unshare their memory pages.
    gc.collect()
    gc.freeze()


def post_fork(server: "Arbiter", worker: "Worker") -> None:
    # A request makes and drops tens of thousands of objects; collecting the youngest
    # generation every 700 of them ran a collection several times per request.
    gc.set_threshold(GC_YOUNGEST_THRESHOLD, 20, 20)


GC_YOUNGEST_THRESHOLD = env_int("GUNICORN_GC_THRESHOLD", 20_000, minimum=700)

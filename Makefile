# Everyday commands. `make run` and `make test` set everything up on a fresh clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: screenshots setup run dev test lint format worker pipeline-worker live-stream beat bench clean

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(INSTALLED)

setup: $(INSTALLED)

# Where `run` and `dev` serve: `make run PORT=8100 HOST=0.0.0.0`. The demo's search
# model and judge call the app back at that address (on loopback when it listens on every
# address), and e-mails and webhooks link to it unless SITE_URL says otherwise.
HOST ?= 127.0.0.1
PORT ?= 8000
SERVED_URL = http://$(if $(filter 0.0.0.0 :: [::],$(HOST)),127.0.0.1,$(HOST)):$(PORT)

# The demo's search model and judge call the app's own demo APIs on loopback, so `run` and
# `dev` allow loopback addresses (unless set otherwise), webhooks' too (a receiver on
# this machine), and keep those APIs on.
DEMO_ENV = DEMO_SEARCH_API=$${DEMO_SEARCH_API:-1} \
	SEARCH_ALLOW_PRIVATE_ADDRESSES=$${SEARCH_ALLOW_PRIVATE_ADDRESSES:-1} \
	AI_JUDGES_ALLOW_PRIVATE_ADDRESSES=$${AI_JUDGES_ALLOW_PRIVATE_ADDRESSES:-1} \
	WEBHOOKS_ALLOW_PRIVATE_ADDRESSES=$${WEBHOOKS_ALLOW_PRIVATE_ADDRESSES:-1} \
	DEMO_SEARCH_URL=$(SERVED_URL)/demo/search DEMO_JUDGE_URL=$(SERVED_URL)/demo/llm/v1 \
	SITE_URL=$${SITE_URL:-$(SERVED_URL)}

# `run` serves as production does (DEBUG off), so it signs with a secret key: SECRET_KEY
# if set, else one generated on the first run into this git-ignored file and kept (the
# sessions, and the API keys stored for AI judges, rest on it). Plain http: the https
# redirect and https-only cookies are off here, and only here.
SECRET_KEY_FILE := .secret_key
RUN_ENV = DEBUG=0 SECRET_KEY="$${SECRET_KEY:-$$(cat $(SECRET_KEY_FILE))}" \
	SECURE_SSL_REDIRECT=0 SESSION_COOKIE_SECURE=0 CSRF_COOKIE_SECURE=0 $(DEMO_ENV)

$(SECRET_KEY_FILE): | $(INSTALLED)
	umask 077 && $(PY) -c "import secrets; print(secrets.token_urlsafe(50))" > $@

## Serve the demo on http://HOST:PORT (127.0.0.1:8000 unless given) as production does: DEBUG
## off, gunicorn, static files collected and served by the app (WhiteNoise), Relevo's own
## error pages. SQLite unless configured. Without a broker configured, a Celery worker and
## beat run beside the web server on a broker kept in files (.run/), so schedules, webhook
## retries and the sweeps run; Ctrl-C stops all three (config/run_stack.py). With Redis
## (CELERY_BROKER_URL), the web server alone: run `make worker` and `make beat` apart.
run: setup $(SECRET_KEY_FILE)
	$(RUN_ENV) $(PY) manage.py migrate --noinput
	$(RUN_ENV) $(PY) manage.py seed_demo
	$(RUN_ENV) $(PY) manage.py collectstatic --noinput --verbosity 0
	$(RUN_ENV) BIND=$(HOST):$(PORT) $(PY) -m config.run_stack

## For debugging: Django's development server with DEBUG on (its error pages show the
## traceback), reloading on every change; static files straight from the source folders.
## Tasks run in-process, right after the request that queued them; nothing periodic runs.
dev: setup
	$(PY) manage.py migrate --noinput
	$(DEMO_ENV) $(PY) manage.py seed_demo
	@echo "make dev runs tasks in-process and nothing periodic (schedules, webhook retries, sweeps): make run runs them"
	$(DEMO_ENV) $(PY) manage.py runserver $(HOST):$(PORT)

## The whole test suite. Tests needing PostgreSQL, Redis or Chromium skip when missing.
test: setup
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy apps config tests conftest.py bench
	$(VENV)/bin/lint-imports

format: setup
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

## A Celery worker and beat (need CELERY_BROKER_URL and usually DATABASE_URL). The worker
## reads every queue; pipeline-worker only the metrics' recomputes (CELERY_PIPELINE_QUEUE),
## so AI judges' calls, which hold the worker's processes while they wait, never delay them.
worker: setup
	$(VENV)/bin/celery -A config worker --loglevel=INFO

## Live pages' event stream on http://127.0.0.1:8001 (needs Redis: CACHE_URL or a Redis
## broker). Set LIVE_STREAM_URL=http://127.0.0.1:8001/live/stream/ for the web process so
## its pages open it; without it they ask every 1.5 s.
live-stream: setup
	$(VENV)/bin/uvicorn config.live_asgi:application --host 127.0.0.1 --port $${LIVE_STREAM_PORT:-8001} --no-access-log

pipeline-worker: setup
	$(VENV)/bin/celery -A config worker --queues=$${CELERY_PIPELINE_QUEUE:-pipeline} --concurrency=2 --loglevel=INFO

beat: setup
	$(VENV)/bin/celery -A config beat --loglevel=INFO

## Benchmarks; see bench/README.md for the targets and recorded figures.
bench: setup
	$(PY) bench/engine_bench.py
	$(PY) bench/pipeline_bench.py
	$(PY) bench/queue_bench.py
	$(PY) bench/grading_http_bench.py
	$(PY) bench/import_bench.py
	$(PY) bench/start_bench.py
	$(PY) bench/comparison_bench.py
	$(PY) bench/judge_bench.py
	$(PY) bench/live_bench.py

## Draw docs/screenshots/ again: the demo's key pages in headless Chromium (scripts/screenshots.py).
screenshots: setup
	$(PY) scripts/screenshots.py

clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm .run $(SECRET_KEY_FILE) staticfiles .pytest_cache .mypy_cache .ruff_cache

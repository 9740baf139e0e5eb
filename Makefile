# Everyday commands. `make run` and `make test` set everything up on a fresh clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: setup run test lint format worker pipeline-worker beat bench clean

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(INSTALLED)

setup: $(INSTALLED)

## Serve the demo on http://127.0.0.1:8000 (SQLite, tasks in-process unless configured).
## Its search model and demo judge call the app's own demo APIs on loopback, so loopback is allowed.
run: setup
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo
	SEARCH_ALLOW_PRIVATE_ADDRESSES=$${SEARCH_ALLOW_PRIVATE_ADDRESSES:-1} \
	AI_JUDGES_ALLOW_PRIVATE_ADDRESSES=$${AI_JUDGES_ALLOW_PRIVATE_ADDRESSES:-1} \
	$(PY) manage.py runserver 127.0.0.1:8000

## The whole test suite. Tests needing PostgreSQL, Redis or Chromium skip when missing.
test: setup
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy apps
	$(VENV)/bin/lint-imports

format: setup
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

## A Celery worker and beat (need CELERY_BROKER_URL and usually DATABASE_URL). The worker
## reads every queue; pipeline-worker only the metrics' recomputes (CELERY_PIPELINE_QUEUE),
## so AI judges' calls, which hold the worker's processes while they wait, never delay them.
worker: setup
	$(VENV)/bin/celery -A config worker --loglevel=INFO

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

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .pytest_cache .mypy_cache .ruff_cache

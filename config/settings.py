"""Relevo settings: one module, every value read from the environment.

With no environment at all, Relevo runs on a developer's machine: an SQLite file and
Celery tasks executed in-process. Set DATABASE_URL and CELERY_BROKER_URL to run on
PostgreSQL with a Redis-backed worker and beat. `.env.example` documents every variable.
"""

from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=True)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "apps.core",
    "apps.accounts",
    "apps.evaluations",
    "apps.judging",
    "apps.scoring",
    "apps.insights",
    "apps.endpoints",
    "apps.api",
]

# --- REST API -----------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.api.authentication.TeamTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["apps.api.authentication.HasTeamToken"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "apps.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
    # ?format= names an export format (json, csv, qrels...), not a DRF renderer.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Relevo API",
    "DESCRIPTION": "Evaluations, keywords, judgements and metrics of one team. "
    "Authenticate with a team API token: `Authorization: Bearer <token>`.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    # Swagger UI from the installed sidecar package: the docs page works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.accounts.context_processors.team",
            ],
        },
    },
    # The grading card alone, rendered on every grade: Jinja2 compiles a template into
    # one Python function, which rendered the card in a quarter of the Django engine's
    # time (docs/architecture.md, "Templates").
    {
        "NAME": "jinja2",
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates" / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "config.jinja2.environment"},
    },
]

# --- Database -----------------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
try:
    _database = dj_database_url.parse(DATABASE_URL, conn_max_age=60)
except (ValueError, KeyError) as exc:
    raise ImproperlyConfigured(f"DATABASE_URL={DATABASE_URL!r} is not understood: {exc}") from exc
if _database["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE takes the write lock when a transaction starts, so two writers queue
    # instead of failing with "database is locked" when a reader upgrades to a writer.
    _database["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 20}
    _database["CONN_MAX_AGE"] = 0
if _database["ENGINE"].startswith("django.db.backends.postgresql"):
    # Server-side parameter binding lets psycopg prepare the statements a connection runs
    # again and again (every grade runs the same dozen): PostgreSQL parses and plans each
    # once per connection instead of on every execution, which was most of its work per
    # grade. Connections are kept (conn_max_age above), so the prepared statements are.
    # A pooler in transaction mode (PgBouncer) needs prepare_threshold None.
    _database.setdefault("OPTIONS", {})
    _database["OPTIONS"].setdefault("server_side_binding", True)
    _database["OPTIONS"].setdefault("prepare_threshold", 5)
DATABASES = {"default": _database}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USING_POSTGRES = _database["ENGINE"].startswith("django.db.backends.postgresql")

AUTH_USER_MODEL = "accounts.User"
# Django's model backend, reading the person and their teams in one plain SELECT.
AUTHENTICATION_BACKENDS = ["apps.accounts.sessions.UserBackend"]
# Django's database sessions, read with one plain SELECT (apps/accounts/sessions.py).
SESSION_ENGINE = "apps.accounts.sessions"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

# --- Email (invitations, password reset) ---------------------------------------------
# Printed to the console unless an SMTP server is configured.
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=True)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Relevo <relevo@localhost>")

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))

# --- Celery ---------------------------------------------------------------------------
# No broker configured: tasks run in-process right after the commit that queued them.
CELERY_TASK_ALWAYS_EAGER = not env_str("CELERY_BROKER_URL")
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 4
CELERY_TIMEZONE = TIME_ZONE
# A grade must be saved even when the broker is down: publishing fails fast instead of
# retrying for minutes, and the periodic sweep recomputes what the failed publish missed.
CELERY_TASK_PUBLISH_RETRY = False
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "socket_connect_timeout": 1,
    "socket_timeout": 5,
    # Publishing gives up after one quick retry (kombu's default is to keep trying).
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_BEAT_SCHEDULE = {
    "recompute-marked-keywords": {
        "task": "apps.scoring.tasks.recompute_marked",
        "schedule": crontab(minute="*"),
    },
    "resume-stalled-keyword-runs": {
        "task": "apps.evaluations.tasks.resume_stalled_fetches",
        "schedule": crontab(minute="*"),
    },
}

# --- Product settings -----------------------------------------------------------------
# How long a grader keeps a claimed slot before another grader may take it.
SLOT_LOCK_SECONDS = env_int("SLOT_LOCK_SECONDS", 300, minimum=10)
# How long a worker owns a keyword's recomputation before the sweep may take it over.
SCORING_LEASE_SECONDS = env_int("SCORING_LEASE_SECONDS", 60, minimum=5)

# Calling a team's search endpoints. Private, loopback and link-local addresses are
# refused unless allowed (the guard against server-side request forgery).
SEARCH_ALLOW_PRIVATE_ADDRESSES = env_bool("SEARCH_ALLOW_PRIVATE_ADDRESSES", False)
SEARCH_MAX_RESPONSE_BYTES = env_int("SEARCH_MAX_RESPONSE_BYTES", 5_000_000, minimum=1_000)
# Test model runs in a web request: it waits at most this long for the search system,
# well inside gunicorn's 60 s worker timeout, however long the endpoint's own timeout
# (up to 120 s, for an evaluation's start, which runs on the worker).
SEARCH_TEST_TIMEOUT_SECONDS = float(env_int("SEARCH_TEST_TIMEOUT_SECONDS", 30, minimum=1))
# Requests in flight at once against one endpoint while an evaluation starts.
SEARCH_CONCURRENCY_PER_ENDPOINT = env_int("SEARCH_CONCURRENCY_PER_ENDPOINT", 8, minimum=1)
# Tries per keyword on a transport error or a 5xx answer, with doubling back-off.
SEARCH_ATTEMPTS = env_int("SEARCH_ATTEMPTS", 3, minimum=1)
SEARCH_RETRY_BACKOFF_SECONDS = env_float("SEARCH_RETRY_BACKOFF_SECONDS", 0.5, minimum=0.0)
# The demo search API (/demo/search) that the demo's search model calls.
DEMO_SEARCH_API = env_bool("DEMO_SEARCH_API", DEBUG)
DEMO_SEARCH_URL = env_str("DEMO_SEARCH_URL", "http://127.0.0.1:8000/demo/search")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # One line per task is noise at the rate graders work; failures still show.
    "loggers": {
        "celery.app.trace": {"level": "WARNING"},
        # httpx logs every request URL at INFO; search URLs may carry API keys.
        "httpx": {"level": "WARNING"},
    },
}

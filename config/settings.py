"""Relevo settings: one module, every value read from the environment.

With no environment at all, Relevo runs on a developer's machine: an SQLite file and
Celery tasks executed in-process. Set DATABASE_URL and CELERY_BROKER_URL to run on
PostgreSQL with a Redis-backed worker and beat. `.env.example` documents every variable.
"""

import base64
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlparse

import dj_database_url
from celery.schedules import crontab
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_float, env_int, env_list, env_rate, env_str
from config.file_broker import file_broker_options, is_file_broker

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=True)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105

# Fernet keys that encrypt stored secrets (AI providers' API keys), comma-separated: the
# first encrypts, all decrypt (apps/core/secrets.py). Unset: derived from SECRET_KEY.
SECRETS_ENCRYPTION_KEYS = env_list("SECRETS_ENCRYPTION_KEYS", [])
for _key in SECRETS_ENCRYPTION_KEYS:
    try:
        _raw = base64.urlsafe_b64decode(_key.encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        _raw = b""
    if len(_raw) != 32:
        raise ImproperlyConfigured(
            "SECRETS_ENCRYPTION_KEYS: each key must be 32 bytes in url-safe base64 "
            '(make one with: python -c "from cryptography.fernet import Fernet; '
            'print(Fernet.generate_key().decode())")'
        )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# --- HTTPS ------------------------------------------------------------------------------
# With DEBUG off, Relevo assumes it is served over HTTPS: a plain-http request is
# redirected to https, and the session and CSRF cookies are only ever sent over HTTPS.
# Each can be turned off (docker-compose.yml does: it serves plain http on 127.0.0.1).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", default=not DEBUG)
# Strict-Transport-Security is off until asked for: a browser that has seen it refuses
# plain http to the site for the whole period, so turn it on once HTTPS works, with a
# short period first (3600), then a year (31536000).
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=False)


def proxy_ssl_header(header: str) -> tuple[str, str] | None:
    """The header a TLS-terminating proxy sets, as Django's SECURE_PROXY_SSL_HEADER.

    "X-Forwarded-Proto" becomes ("HTTP_X_FORWARDED_PROTO", "https"): a request carrying
    `X-Forwarded-Proto: https` came in over HTTPS. Empty: no proxy, no such header.
    """
    if not header:
        return None
    if not all(part.isalnum() for part in header.split("-")):
        raise ImproperlyConfigured(
            f"SECURE_PROXY_SSL_HEADER={header!r} is not a header name "
            "(write it as the proxy sends it, e.g. X-Forwarded-Proto)."
        )
    return "HTTP_" + header.upper().replace("-", "_"), "https"


# Behind a proxy that terminates TLS, every request reaches Django as plain http; the
# proxy's header says it was https (without it, SECURE_SSL_REDIRECT would redirect
# forever). Set it only when the proxy overwrites that header on every request: a client
# could otherwise send it itself.
SECURE_PROXY_SSL_HEADER = proxy_ssl_header(env_str("SECURE_PROXY_SSL_HEADER"))

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
    "axes",  # log-in lock-out ("Brute force and abuse" below)
    "apps.core",
    "apps.accounts",
    "apps.evaluations",
    "apps.lifecycle",
    "apps.library",
    "apps.behaviour",
    "apps.judging",
    "apps.scoring",
    "apps.insights",
    "apps.endpoints",
    "apps.judges",
    "apps.notifications",
    "apps.schedules",
    "apps.tries",
    "apps.interchange",
    "apps.demo",
    "djangosaml2",
    "apps.sso",
    "apps.api",
]

# --- REST API -----------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.api.authentication.TeamTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["apps.api.authentication.HasTeamToken"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["apps.api.parsers.BoundedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "apps.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
    # ?format= names an export format (json, csv, qrels...), not a DRF renderer.
    "URL_FORMAT_OVERRIDE": None,
    # Requests per team token, and per address without one (apps/api/throttling.py;
    # "Brute force and abuse" below). Over it: 429 with Retry-After.
    "DEFAULT_THROTTLE_CLASSES": [
        "apps.api.throttling.TokenRateThrottle",
        "apps.api.throttling.AnonymousRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "token": env_rate("THROTTLE_API_PER_TOKEN", "5000/min"),
        "anon": env_rate("THROTTLE_API_ANONYMOUS", "120/min"),
    },
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
    # Two choice sets share the field name "status": each gets a name of its own.
    "ENUM_NAME_OVERRIDES": {
        "EvaluationStatusEnum": "apps.evaluations.models.Status",
        "JudgeRunStatusEnum": "apps.judges.models.RunStatus",
        "PanelRuleEnum": "apps.judges.models.PanelRule",
        "ClickLogFormatEnum": "apps.behaviour.models.LogFormat",
        "ClickJudgementJobStatusEnum": "apps.behaviour.models.JobStatus",
        "ScaleEnum": "apps.evaluations.models.Scale",
        # The scales a click model grades on: the built-in ones, not custom.
        "ClickJudgementScaleEnum": "apps.behaviour.click_judgements.SCALE_CHOICES",
    },
}

MIDDLEWARE = [
    # First: a body over the size limit is refused before anything reads it.
    "apps.core.request_limits.RequestSizeLimit",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # A SAML sign-in's own session (its cookie crosses from the identity provider).
    "djangosaml2.middleware.SamlSessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A view that meets an unavailable database answers 503 with Retry-After, not 500.
    "apps.core.unavailable.DatabaseUnavailableMiddleware",
    # Last, as axes asks: turns a locked-out log-in's answer into the lock-out page.
    "axes.middleware.AxesMiddleware",
]


def stream_origin(url: str) -> str:
    """scheme://host[:port] of an absolute URL; empty for a path on this site."""
    if "://" not in url:
        return ""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


# --- Content-Security-Policy (django-csp) ------------------------------------------------
# Every response tells the browser where its page may load things from. Scripts come only
# from our own static files: no inline <script>, no onclick="..." attribute and no eval
# runs, so text an attacker slips into a page cannot run as code. Templates mark what a
# script should do with data- attributes (static/js/form-actions.js), and htmx runs with
# allowEval off (templates/base.html). The API docs page loads its script from a URL too
# (SpectacularSwaggerSplitView, apps/api/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        # style="..." attributes carry values read from the data (a tag's colour, a
        # progress bar's width, a chart's height), which no class can hold, and the API
        # docs page has a <style> block. Styles cannot run code; scripts stay strict.
        "style-src": [SELF, UNSAFE_INLINE],
        # A search result's image comes from whatever host the team's search system names,
        # over https or http, or inline as a data:image picture (apps/core/image_sources.py);
        # Swagger UI's icons are data: images too.
        "img-src": [SELF, "data:", "https:", "http:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
        # Live pages' event stream may be served from another port or host.
        "connect-src": [SELF, *filter(None, [stream_origin(env_str("LIVE_STREAM_URL"))])],
    }
}

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
    # Kept connections are checked before a request first uses them (one round trip per
    # request), so after a database restart a stale connection is replaced instead of
    # failing the request with "server closed the connection".
    _database = dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)
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
# First the lock-out guard, which refuses a locked-out log-in before any password is
# checked (apps/accounts/lockout.py); then Django's model backend, reading the person and
# their teams in one plain SELECT.
AUTHENTICATION_BACKENDS = [
    "apps.accounts.lockout.LoginGuard",
    "apps.accounts.sessions.UserBackend",
]
# Django's database sessions, read with one plain SELECT (apps/accounts/sessions.py).
SESSION_ENGINE = "apps.accounts.sessions"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "insights:dashboard"
LOGOUT_REDIRECT_URL = "accounts:login"

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
# With DEBUG off, collectstatic (the Dockerfile runs it) writes every static file again
# under a name holding its content's hash (relevo.855f9b8ad09b.css), with compressed
# copies and a manifest, staticfiles.json; pages link the hashed names, which WhiteNoise
# serves with a far-future cache header. A deploy changes the names of changed files, so
# no browser keeps a stale one. With DEBUG on, and in tests, files keep their plain names
# and need no collectstatic; STATIC_MANIFEST=0 does the same with DEBUG off (benchmarks).
STATIC_MANIFEST = env_bool("STATIC_MANIFEST", default=not DEBUG)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if STATIC_MANIFEST
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# --- Celery ---------------------------------------------------------------------------
# No broker configured: tasks run in-process right after the commit that queued them.
CELERY_TASK_ALWAYS_EAGER = not env_str("CELERY_BROKER_URL")
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
# The queue tasks go to (and a worker started with --queues=... reads): tasks that queue
# tasks (a judge's lanes) publish here too. Tests give each run a queue of its own.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE") or "celery"
# The metrics pipeline's tasks (apps.scoring.tasks: a keyword's recompute, an
# evaluation's, the minute sweep) go to a queue of their own (config/celery.py routes
# them). In the default queue they waited behind an AI judge's lanes, each of which holds
# a worker process while its calls wait on the model, and metrics fell 13 s behind the
# grades (bench/README.md, "AI judges"). A worker started without --queues reads both
# queues; docker-compose.yml also runs a worker reading only this one, which no lane
# can hold.
CELERY_PIPELINE_QUEUE = env_str("CELERY_PIPELINE_QUEUE") or "pipeline"
CELERY_TASK_QUEUES: dict[str, dict[str, str]] = {
    CELERY_TASK_DEFAULT_QUEUE: {},
    CELERY_PIPELINE_QUEUE: {},
}
CELERY_TASK_ROUTES = ("config.celery.route_task",)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
# A worker holds no more tasks than it has processes (acknowledged late, a running task
# counts until it ends), so none waits in a busy worker that another could run now.
# With 4 a process, an 8-process worker whose lanes held every process kept 24
# recomputes besides (Redis: 32 unacknowledged) until a lane handed over, up to 20 s.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = TIME_ZONE
# A grade must be saved even when the broker is down: publishing fails fast instead of
# retrying for minutes, and the periodic sweep recomputes what the failed publish missed.
CELERY_TASK_PUBLISH_RETRY = False
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker or beat that lost Redis tries again for as long as it takes (every 2, 4, ...
# and then 30 s), never giving up: Celery's default of 100 tries ended a worker after
# about 47 minutes of outage (docs/operations.md).
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# kombu's Redis transport, fixed so a worker outlives a Redis outage (config/broker.py).
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT = "config.broker:RedisTransport"
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
    "socket_connect_timeout": 1,
    "socket_timeout": 5,
    # Publishing gives up after one quick retry (kombu's default is to keep trying).
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
# A broker kept in files (config/file_broker.py): `make run` without Redis runs a worker
# and beat on one, so schedules, retries and sweeps run with no server to install.
if is_file_broker(CELERY_BROKER_URL):
    CELERY_BROKER_TRANSPORT_OPTIONS = file_broker_options(CELERY_BROKER_URL)
CELERY_BEAT_SCHEDULE = {
    "recompute-marked-keywords": {
        "task": "apps.scoring.tasks.recompute_marked",
        "schedule": crontab(minute="*"),
    },
    "resume-stalled-keyword-runs": {
        "task": "apps.lifecycle.tasks.resume_stalled_fetches",
        "schedule": crontab(minute="*"),
    },
    "resume-stalled-tries": {
        "task": "apps.tries.tasks.resume_stalled_tries",
        "schedule": crontab(minute="*"),
    },
    "resume-stalled-click-judgement-jobs": {
        "task": "apps.behaviour.tasks.resume_stalled_click_jobs",
        "schedule": crontab(minute="*"),
    },
    "resume-stalled-judge-runs": {
        "task": "apps.judges.tasks.resume_stalled_runs",
        "schedule": crontab(minute="*"),
    },
    "watch-disagreement-queues": {
        "task": "apps.insights.tasks.watch_disagreements",
        "schedule": crontab(minute="*"),
    },
    # Scheduled runs (apps/schedules): the schedules are rows of the database, read at
    # each tick; a test's beat ticks every second.
    "run-schedules": {
        "task": "apps.schedules.tasks.run_schedules",
        "schedule": env_float("SCHEDULES_CHECK_SECONDS", 60.0, minimum=0.5),
    },
    "send-due-webhook-deliveries": {
        "task": "apps.notifications.tasks.send_due_deliveries",
        "schedule": crontab(minute="*"),
    },
}

# --- Brute force and abuse: log-in lock-out and throttles (docs/security.md) -------------
# How many proxies in front of Relevo append the client's address to X-Forwarded-For; 0:
# clients connect directly and REMOTE_ADDR is theirs. The lock-out and the throttles count
# per client address: behind a proxy not counted here, every client has the proxy's
# address and they lock each other out. Never more than there are: a client can write
# X-Forwarded-For itself.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0)

# Log-in lock-out: django-axes, counted in the database (apps/accounts/lockout.py says
# why this combination). LOGIN_FAILURE_LIMIT wrong passwords for one account from one
# address lock that account from that address, not everywhere (anybody could then lock
# anybody out); an address with LOGIN_FAILURE_LIMIT_PER_ADDRESS failures, whatever the
# accounts, is locked too. A lock lifts LOGIN_COOLOFF_MINUTES after its last failure.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10, minimum=1)
LOGIN_FAILURE_LIMIT_PER_ADDRESS = env_int("LOGIN_FAILURE_LIMIT_PER_ADDRESS", 100, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15, minimum=1))
# Trying again while locked does not make the lock longer, so the page can say when it ends.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# A successful log-in forgets the failures before it (of that account, from that address).
AXES_RESET_ON_SUCCESS = True
AXES_HANDLER = "apps.accounts.lockout.LockoutHandler"
AXES_USERNAME_FORM_FIELD = "username"  # the log-in form's field, and authenticate()'s
AXES_USERNAME_CALLABLE = "apps.accounts.lockout.login_name"
AXES_CLIENT_IP_CALLABLE = "apps.core.ratelimit.client_address"
AXES_LOCKOUT_CALLABLE = "apps.accounts.lockout.lockout_response"
# The lock-out needs the failures only; a row for every successful log-in would just grow.
AXES_DISABLE_ACCESS_LOG = True

# Throttles (apps/core/ratelimit.py). Counted in Redis, shared by every worker, when
# THROTTLE_REDIS_URL is set: give them a database of their own (ratelimit.clear() empties
# it whole). Otherwise in each process's memory, right for one developer process (check
# --deploy warns). Not the database: the API throttle counts every request, and reads
# stay reads.
# When Redis does not answer, throttles let requests through and log it: a Redis outage
# never fails a log-in, a grade or an API call.
THROTTLE_REDIS_URL = env_str("THROTTLE_REDIS_URL")


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
FILE_CACHE_SCHEME = "file://"


def shared_cache_url(cache_url: str, broker_url: str) -> str:
    """Where the default cache lives: CACHE_URL, else the broker's Redis when it is one.

    CACHE_URL is a Redis, or a folder (file:///path) that the processes of one machine
    share (`make run` without Redis: the web, the worker and beat). Empty: no shared
    cache is known, and each process keeps its own in memory."""
    if cache_url:
        if not cache_url.startswith((*REDIS_SCHEMES, FILE_CACHE_SCHEME)):
            raise ImproperlyConfigured(
                f"CACHE_URL={cache_url!r} is not a Redis URL (redis://host:6379/0) "
                "or a folder (file:///path/to/cache)."
            )
        return cache_url
    return broker_url if broker_url.startswith(("redis://", "rediss://")) else ""


# The default cache holds derived work a page shows (a comparison's statistics, a
# calibration's figures). In Redis, every web process, machine and worker reads the same
# entries; in memory, each gunicorn process computed and kept its own. Its keys carry a
# prefix of their own: by default it shares the broker's database, and its clear() deletes
# only them (apps/core/shared_cache.py, which also lets pages work while Redis is away).
def redis_or_local_cache(
    url: str, *, backend: str, prefix: str, wait_seconds: float
) -> dict[str, object]:
    """A cache in Redis at `url` (keys under `prefix`, a request waiting at most
    `wait_seconds` on a Redis that does not answer), in files under the folder of a
    file:// `url`, or in this process's memory when `url` is empty."""
    if not url:
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": prefix}
    if url.startswith(FILE_CACHE_SCHEME):
        # A file per entry; past MAX_ENTRIES a third are dropped (derived work, computed
        # again). Live pages keep a version and a coverage entry per open topic.
        return {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": urlparse(url).path,
            "KEY_PREFIX": prefix,
            "OPTIONS": {"MAX_ENTRIES": 5000},
        }
    return {
        "BACKEND": backend,
        "LOCATION": url,
        "KEY_PREFIX": prefix,
        "OPTIONS": {"socket_connect_timeout": wait_seconds, "socket_timeout": wait_seconds},
    }


CACHE_URL = shared_cache_url(env_str("CACHE_URL"), env_str("CELERY_BROKER_URL"))
CACHES = {
    "default": redis_or_local_cache(
        CACHE_URL,
        backend="apps.core.shared_cache.SharedRedisCache",
        prefix="relevo-cache",
        wait_seconds=0.5,
    ),
    # Fail fast: every request counts in the throttles.
    "throttle": redis_or_local_cache(
        THROTTLE_REDIS_URL,
        backend="django.core.cache.backends.redis.RedisCache",
        prefix="relevo-throttle",
        wait_seconds=0.25,
    ),
}
# --- Live pages' stream (apps/core/live_stream.py, config/live_asgi.py) -----------------
# Where browsers open a live page's event stream, as they reach it (another port or host
# is fine): e.g. http://127.0.0.1:8001/live/stream/. Empty: no stream runs, and live pages
# ask every 1.5 s instead (apps/core/live.py). The stream hears of changes on a Redis
# channel: LIVE_REDIS_URL (the shared cache's Redis by default), channel LIVE_CHANNEL.
# Pub/sub channels ignore Redis's database numbers, so the default name carries the
# URL's: two deployments on one Redis, in two databases, do not hear each other.
LIVE_STREAM_URL = env_str("LIVE_STREAM_URL")
LIVE_REDIS_URL = env_str("LIVE_REDIS_URL") or (
    CACHE_URL if CACHE_URL.startswith(REDIS_SCHEMES) else ""
)
if LIVE_STREAM_URL and not LIVE_REDIS_URL:
    raise ImproperlyConfigured(
        "LIVE_STREAM_URL needs Redis: set LIVE_REDIS_URL, CACHE_URL or a Redis broker."
    )
if LIVE_STREAM_URL and not LIVE_STREAM_URL.startswith(("http://", "https://", "/")):
    raise ImproperlyConfigured(
        f"LIVE_STREAM_URL={LIVE_STREAM_URL!r} is not an http(s) URL or a path."
    )
LIVE_CHANNEL = env_str("LIVE_CHANNEL") or "relevo-live:" + (
    urlparse(LIVE_REDIS_URL).path.strip("/") or "0"
)
# One stream process holds at most this many open pages; beyond it a page asks instead.
LIVE_STREAM_MAX_CONNECTIONS = env_int("LIVE_STREAM_MAX_CONNECTIONS", 5000, minimum=1)

# How often one may ask for what sends mail or guesses; "count/period" (s, min, hour, day).
THROTTLE_RATES = {
    "password_reset_email": env_rate("THROTTLE_PASSWORD_RESET_PER_EMAIL", "3/hour"),
    "password_reset_address": env_rate("THROTTLE_PASSWORD_RESET_PER_ADDRESS", "20/hour"),
    "invitations_inviter": env_rate("THROTTLE_INVITATIONS_PER_INVITER", "50/hour"),
    "invitations_team": env_rate("THROTTLE_INVITATIONS_PER_TEAM", "200/day"),
    "api_token_failures": env_rate("THROTTLE_API_TOKEN_FAILURES_PER_ADDRESS", "30/min"),
}

# --- Product settings -----------------------------------------------------------------
# Request bodies: an import (API or page) may send up to IMPORT_MAX_REQUEST_BYTES, any
# other request REQUEST_MAX_BYTES; larger ones are answered 413 unread. The command-line
# imports read files and are not limited.
IMPORT_MAX_REQUEST_BYTES = env_int("IMPORT_MAX_REQUEST_BYTES", 512 * 1024 * 1024, minimum=1024)
REQUEST_MAX_BYTES = env_int("REQUEST_MAX_BYTES", 20 * 1024 * 1024, minimum=1024)
# Django's own limit on a body read whole or on a form's fields (files aside): the same,
# so a JSON body or form under REQUEST_MAX_BYTES is never refused by a smaller one.
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_MAX_BYTES
# How long a grader keeps a claimed slot before another grader may take it.
SLOT_LOCK_SECONDS = env_int("SLOT_LOCK_SECONDS", 300, minimum=10)
# How long a worker owns a keyword's recomputation before the sweep may take it over.
SCORING_LEASE_SECONDS = env_int("SCORING_LEASE_SECONDS", 60, minimum=5)
# With a broker, an evaluation's keywords graded within this many seconds of each other
# are scored together by one task (apps/scoring/gathering.py): a round's cost is mostly
# the same for one keyword or forty. 0: every first change queues its own task at once.
PIPELINE_GATHER_SECONDS = env_float("PIPELINE_GATHER_SECONDS", 0.5, minimum=0.0)

# Calling a team's search endpoints. Private, loopback and link-local addresses are
# refused unless allowed (the guard against server-side request forgery).
SEARCH_ALLOW_PRIVATE_ADDRESSES = env_bool("SEARCH_ALLOW_PRIVATE_ADDRESSES", False)
# AI judges' base URLs follow the same rule, with a setting of their own: allow it to
# use a model server on this machine or network (Ollama, vLLM, llama.cpp, LM Studio).
AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = env_bool("AI_JUDGES_ALLOW_PRIVATE_ADDRESSES", False)
# A judge's run whose every call failed (an outage, a timeout, a rate limit) for this
# long stops as Failed, and the team is told; resuming it tries again.
AI_JUDGE_FAIL_AFTER_SECONDS = env_float("AI_JUDGE_FAIL_AFTER_SECONDS", 300.0, minimum=0.0)
# Providers' rate limits, learned from their answers, shared by every run on an account
# through the broker's Redis (apps/judges/rate_limits.py); off: each run on its own.
AI_JUDGES_SHARED_RATE_LIMITS = env_bool("AI_JUDGES_SHARED_RATE_LIMITS", True)
# Webhooks (apps/notifications): their URLs follow the same rule, with a setting of their
# own (a receiver inside the network: a chat server, a CI system). A delivery waits this
# long for an answer; a failed one is tried again WEBHOOK_RETRY_SECONDS × 4^n later
# (n = 0, 1, …; six attempts in all).
WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = env_bool("WEBHOOKS_ALLOW_PRIVATE_ADDRESSES", False)
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 10.0, minimum=0.1)
WEBHOOK_RETRY_SECONDS = env_float("WEBHOOK_RETRY_SECONDS", 30.0, minimum=0.01)
# Single sign-on (apps/sso, docs/single-sign-on.md). Identity providers are set up in
# the admin; one OpenID Connect provider can also come from the environment (its secret
# then stays there). Its addresses follow the same rule as the others: allow private
# ones for a provider inside the network (a Keycloak on the intranet).
SSO_OIDC_ISSUER = env_str("SSO_OIDC_ISSUER", "")
SSO_OIDC_CLIENT_ID = env_str("SSO_OIDC_CLIENT_ID", "")
SSO_OIDC_CLIENT_SECRET = env_str("SSO_OIDC_CLIENT_SECRET", "")
SSO_OIDC_NAME = env_str("SSO_OIDC_NAME", "single sign-on")
SSO_OIDC_SLUG = env_str("SSO_OIDC_SLUG", "oidc")
SSO_OIDC_SCOPES = env_str("SSO_OIDC_SCOPES", "openid email profile")
SSO_OIDC_GROUPS_CLAIM = env_str("SSO_OIDC_GROUPS_CLAIM", "groups")
SSO_ALLOW_PRIVATE_ADDRESSES = env_bool("SSO_ALLOW_PRIVATE_ADDRESSES", False)
# SAML (djangosaml2): the configuration is built per request from the providers set up
# in the admin; a sign-in begins with a redirect. The identity provider posts its answer
# from its own site, so the sign-in's cookie must travel on that cross-site POST:
# SameSite=None, which browsers accept only on a secure cookie (over http, Lax: the
# provider then has to be on the same site, as in development).
SAML_CONFIG_LOADER = "apps.sso.saml.sp_config"
SAML_DEFAULT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
SAML_SESSION_COOKIE_NAME = "relevo_saml"
SAML_SESSION_COOKIE_SAMESITE = "None" if SESSION_COOKIE_SECURE else "Lax"
# Relevo's own key pair as a SAML service provider (PEM files), to sign its sign-out
# requests; without them it sends them unsigned.
SAML_SP_KEY_FILE = env_str("SAML_SP_KEY_FILE", "")
SAML_SP_CERT_FILE = env_str("SAML_SP_CERT_FILE", "")

SSO_TIMEOUT_SECONDS = env_float("SSO_TIMEOUT_SECONDS", 10.0, minimum=0.1)
# Where people reach Relevo: the links in e-mails and webhook payloads, which are read
# outside any request that could tell.
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000")
SEARCH_MAX_RESPONSE_BYTES = env_int("SEARCH_MAX_RESPONSE_BYTES", 5_000_000, minimum=1_000)
# Test model runs in a web request and holds a web worker while it waits: it waits at most
# this long for the search system, however long the endpoint's own timeout (up to 120 s,
# for an evaluation's start, which runs on the worker). The page says when it gave up.
SEARCH_TEST_TIMEOUT_SECONDS = env_float("SEARCH_TEST_TIMEOUT_SECONDS", 10.0, minimum=1.0)
# Requests in flight at once against one endpoint while an evaluation starts.
SEARCH_CONCURRENCY_PER_ENDPOINT = env_int("SEARCH_CONCURRENCY_PER_ENDPOINT", 8, minimum=1)
# Tries per keyword on a transport error or a 5xx answer, with doubling back-off.
SEARCH_ATTEMPTS = env_int("SEARCH_ATTEMPTS", 3, minimum=1)
SEARCH_RETRY_BACKOFF_SECONDS = env_float("SEARCH_RETRY_BACKOFF_SECONDS", 0.5, minimum=0.0)
# The demo search API (/demo/search) that the demo's search model calls.
DEMO_SEARCH_API = env_bool("DEMO_SEARCH_API", DEBUG)
DEMO_SEARCH_URL = env_str("DEMO_SEARCH_URL", "http://127.0.0.1:8000/demo/search")
# The demo judge's model (a word-overlap stand-in speaking the OpenAI protocol).
DEMO_JUDGE_URL = env_str("DEMO_JUDGE_URL", "http://127.0.0.1:8000/demo/llm/v1")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "filters": {"no_traceback_for_403": {"()": "apps.core.log_filters.RefusalWithoutTraceback"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # One line per task is noise at the rate graders work; failures still show.
    "loggers": {
        "celery.app.trace": {"level": "WARNING"},
        # httpx logs every request URL at INFO; search URLs may carry API keys, and a
        # webhook's URL (a chat tool's) is a credential. httpx2 (the AI providers' and
        # the webhooks' client) is the same code under another name.
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        # A 403 is logged as one line, without the traceback Django attaches.
        "django.request": {"filters": ["no_traceback_for_403"]},
    },
}

"""Every app's URL conf has its namespace, named after the app (app_name) or, for the
life cycle, after the evaluations its pages show, and every
route of the site a name in one: pages, templates and tests reverse "judging:feedback",
never a bare name two apps could both use."""

import importlib

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

APPS = [
    "accounts",
    "judging",
    "judges",
    "insights",
    "interchange",
    "endpoints",
    "api",
    "demo",
    "notifications",
    "schedules",
    "library",
    "tries",
    "sso",
    "behaviour",
]
# The life cycle's pages are the evaluations' pages, reversed as "evaluations:detail".
NAMESPACE_OF_URL_CONF = {app: app for app in APPS} | {"lifecycle": "evaluations"}


@pytest.mark.parametrize("app", NAMESPACE_OF_URL_CONF)
def test_each_url_conf_is_named_after_its_app(app):
    assert importlib.import_module(f"apps.{app}.urls").app_name == NAMESPACE_OF_URL_CONF[app]


def named_routes(patterns, prefix="/", namespace=None):
    """(path, namespace, name) for every route under `patterns`."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from named_routes(
                pattern.url_patterns,
                prefix + str(pattern.pattern),
                pattern.namespace or namespace,
            )
        else:
            assert isinstance(pattern, URLPattern)
            yield prefix + str(pattern.pattern), namespace, pattern.name


def test_every_route_outside_the_admin_is_named_in_its_apps_namespace():
    routes = [route for route in named_routes(get_resolver().url_patterns) if route[1] != "admin"]

    assert routes
    assert [
        route for route in routes if route[1] not in NAMESPACE_OF_URL_CONF.values() or not route[2]
    ] == []

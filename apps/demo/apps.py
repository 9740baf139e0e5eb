from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo team, its data (seed_demo) and the demo search API its model calls."""

    name = "apps.demo"
    label = "demo"

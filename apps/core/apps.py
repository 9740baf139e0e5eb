from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        # Registers the deploy check that the throttles' counts are shared by the workers.
        from . import ratelimit  # noqa: F401

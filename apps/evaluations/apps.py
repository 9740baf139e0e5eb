from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "apps.evaluations"
    label = "evaluations"

    def ready(self) -> None:
        # The pipeline queues the auto-restart task by its name (apps.scoring.finishing):
        # register it in every process, the web's too (tasks run in-process without a
        # broker).
        from . import auto_restart  # noqa: F401

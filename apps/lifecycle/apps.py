from django.apps import AppConfig


class LifecycleConfig(AppConfig):
    name = "apps.lifecycle"
    label = "lifecycle"

    def ready(self) -> None:
        # The pipeline finishes evaluations and restarts those set to restart through
        # what the lifecycle registers here, in every process (the web's too: tasks run
        # in-process without a broker).
        from apps.scoring import finishing

        from . import auto_restart

        finishing.restart_register(auto_restart.restart_after_commit)

from django.apps import AppConfig


class JudgesConfig(AppConfig):
    name = "apps.judges"
    label = "judges"
    verbose_name = "AI judges"

    def ready(self) -> None:
        # Reuse sits below the judges: it asks this app's rule through a hook.
        from apps.lifecycle import reuse

        from .reuse_rule import judge_grade_copyable

        reuse.judge_rule = judge_grade_copyable
        # The life cycle sits below the judges: it asks them before an evaluation completes.
        from apps.evaluations import states

        from .lifecycle_guard import work_under_way

        states.finish_guard_add(work_under_way)

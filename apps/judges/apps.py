from django.apps import AppConfig


class JudgesConfig(AppConfig):
    name = "apps.judges"
    label = "judges"
    verbose_name = "AI judges"

from django.apps import AppConfig


class TriesConfig(AppConfig):
    name = "apps.tries"
    label = "tries"

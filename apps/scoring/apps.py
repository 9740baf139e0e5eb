from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "apps.scoring"
    label = "scoring"

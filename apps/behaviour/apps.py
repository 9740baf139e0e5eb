from django.apps import AppConfig


class BehaviourConfig(AppConfig):
    name = "apps.behaviour"
    label = "behaviour"
    verbose_name = "Behaviour logs"

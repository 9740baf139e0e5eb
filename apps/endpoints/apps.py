from django.apps import AppConfig


class EndpointsConfig(AppConfig):
    name = "apps.endpoints"
    label = "endpoints"
    verbose_name = "Search endpoints and models"

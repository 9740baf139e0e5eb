from django.apps import AppConfig


class InterchangeConfig(AppConfig):
    """Import and export of evaluations: JSON, TREC and CSV (README.md beside this file)."""

    name = "apps.interchange"
    label = "interchange"

from django.apps import AppConfig


class InsightsConfig(AppConfig):
    name = "apps.insights"
    label = "insights"

    def ready(self) -> None:
        # The pipeline's announcement of a finished evaluation links its page, which is
        # ours: the pipeline never imports the pages above it.
        from django.urls import reverse

        from apps.scoring import finishing

        finishing.page_register(
            lambda evaluation_id: reverse("insights:evaluation_detail", args=[evaluation_id])
        )

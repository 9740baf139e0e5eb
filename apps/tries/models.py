"""A try: a search model's settings changed in a draft, run over a query set and scored
from the team's judgement library against a baseline, without starting an evaluation."""

from django.conf import settings
from django.db import models

from apps.accounts.models import Team
from apps.core.encrypted_json import EncryptedJSONField
from apps.endpoints.models import SearchModel
from apps.evaluations.models import Evaluation, Profile, Scale

from .drafting import Draft


class SavedQuerySet(models.Model):
    """Query texts a team keeps under a name, to try changes over again and again."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200)
    queries = models.JSONField(default=list)  # texts, in order, each once
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # How a set sampled from a behaviour log was drawn (log, method, sizes, seed, bands or
    # each query's inclusion probability: apps/tries/log_samples.py); None if hand-made.
    design = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="saved_query_set_name_once"),
        ]

    def __str__(self) -> str:
        return self.name


class TryState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class Try(models.Model):
    """Try number `number` of a search model: the draft's overrides and knobs, the query
    set it ran over, the baseline it is measured against and the scoring setup it was
    given (scale, profile, metrics), copied when it was made so it never changes."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    search_model = models.ForeignKey(SearchModel, on_delete=models.CASCADE, related_name="tries")
    number = models.PositiveIntegerField()
    notes = models.TextField(blank=True)
    # {"params": [[name, value or null]], "body": text or null}; headers apart, encrypted.
    overrides = models.JSONField(default=dict, blank=True)
    header_overrides = EncryptedJSONField(default=list, blank=True)
    knobs = models.JSONField(default=dict, blank=True)  # name -> value, for #name#
    # Where the queries came from: an evaluation's keywords, a saved set, or a list given.
    query_evaluation = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    query_set = models.ForeignKey(
        SavedQuerySet, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    baseline_evaluation = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    baseline_try = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    scale = models.CharField(max_length=16, choices=Scale.choices, default=Scale.GRADED)
    scale_levels = models.JSONField(null=True, blank=True)
    profile = models.CharField(max_length=16, choices=Profile.choices, default=Profile.SEARCHTWEAK)
    metrics = models.JSONField(default=list)  # [[metric, k], ...]
    depth = models.PositiveSmallIntegerField(default=20)  # results kept per query
    state = models.CharField(max_length=8, choices=TryState.choices, default=TryState.QUEUED)
    queries_total = models.PositiveIntegerField(default=0)
    queries_done = models.PositiveIntegerField(default=0)
    # One runner at a time; a runner that dies lets it lapse and the sweep starts another.
    run_lease_until = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)  # why the whole try failed (a broken mapper)
    # What the lead did with it: the model it became, the evaluation it was sent to.
    promoted_model = models.ForeignKey(
        SearchModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    evaluation = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["search_model", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["search_model", "number"], name="try_number_once"),
        ]

    def __str__(self) -> str:
        return f"{self.search_model.name}, try {self.number}"

    def draft(self) -> Draft:
        """The draft the try was made with."""
        overrides = self.overrides or {}
        return Draft(
            params=[(name, value) for name, value in overrides.get("params", [])],
            headers=[(name, value) for name, value in self.header_overrides or []],
            body=overrides.get("body"),
            knobs=dict(self.knobs or {}),
        )


class TryQuery(models.Model):
    """One query of a try, in query-set order, with the documents the draft returned."""

    attempt = models.ForeignKey(Try, on_delete=models.CASCADE, related_name="queries")
    position = models.PositiveIntegerField()
    text = models.CharField(max_length=500)
    # [{"doc_id", "name", "image", "attributes"}, ...] in rank order, at most the try's
    # depth: what an evaluation's snapshot holds, so the try can be sent to people.
    documents = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    ran_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["attempt", "position"]
        constraints = [
            models.UniqueConstraint(fields=["attempt", "position"], name="try_query_position_once"),
        ]

    def __str__(self) -> str:
        return self.text

    @property
    def doc_ids(self) -> list[str]:
        return [document["doc_id"] for document in self.documents]

"""Evaluations and what they are made of: keywords, snapshots and feedback slots.

An evaluation asks graders to judge the results (snapshots) of its keywords. Each
snapshot carries `strategy` feedback slots, created with it, which graders fill in.
Counters and scoring marks live on these rows so that the grading path and the metrics
pipeline never have to scan a whole evaluation.
"""

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower

from apps import engine
from apps.accounts.models import Tag, Team


class Scale(models.TextChoices):
    BINARY = "binary", "Binary (0-1)"
    GRADED = "graded", "Graded (0-3)"
    DETAIL = "detail", "Detail (1-10)"
    # Whole levels the evaluation defines (Evaluation.scale_levels), e.g. TREC's -2..4.
    CUSTOM = "custom", "Custom levels"


class Profile(models.TextChoices):
    SEARCHTWEAK = "searchtweak", "searchtweak (default)"
    TREC = "trec", "trec (matches trec_eval)"


class Reuse(models.TextChoices):
    NONE = "none", "No reuse"
    KEYWORD_DOC = "keyword_doc", "Same keyword and document"
    KEYWORD_DOC_POSITION = "keyword_doc_position", "Same keyword, document and position"


class Source(models.TextChoices):
    """Who gave a judgement, written with the grade by the grade writer (judging): a
    person here, an AI judge, an import, or clicks (a click model's judgements over a
    behaviour log: apps.behaviour). A copy by reuse keeps its original's source
    (and says where it was copied from: FeedbackSlot.reused_from, reused_from_list); a
    lead's decision is judging's SnapshotDecision. Empty: no grade."""

    PERSON = "person", "Person"
    JUDGE = "judge", "AI judge"
    IMPORT = "import", "Import"
    CLICKS = "clicks", "Clicks"


# The sources that count as people's work: a person here, or an imported grade (a file
# of people's judgements; a file's AI judge's grade imports as a judge's).
PEOPLE_SOURCES = (Source.PERSON, Source.IMPORT)


class Status(models.TextChoices):
    PENDING = "pending", "Pending"
    ACTIVE = "active", "Active"
    FINISHED = "finished", "Finished"


# The database's guard of the rule that a team has one evaluation of each name
# (services.name_guard turns its error into the services' own message).
NAME_ONCE_PER_TEAM = "evaluation_name_once_per_team"


class Evaluation(models.Model):
    STRATEGY_CHOICES = [(1, "One grade per result"), (3, "Three grades per result")]

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="evaluations")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    scale = models.CharField(max_length=16, choices=Scale.choices, default=Scale.GRADED)
    # For scale "custom": {"lowest", "highest", "relevant_from", "labels", "keys"}
    # (apps/evaluations/scales.py); null for the built-in scales.
    scale_levels = models.JSONField(null=True, blank=True)
    strategy = models.PositiveSmallIntegerField(choices=STRATEGY_CHOICES, default=1)
    profile = models.CharField(max_length=16, choices=Profile.choices, default=Profile.SEARCHTWEAK)
    # Custom transformer rules keyed by destination scale; empty means the defaults.
    transformers = models.JSONField(default=dict, blank=True)
    show_position = models.BooleanField(default=False)
    scoring_guidelines = models.TextField(blank=True)
    reuse = models.CharField(max_length=32, choices=Reuse.choices, default=Reuse.NONE)
    # Copy only grades given on the content the result shows now (reuse.py): a document
    # that changed since is graded again. Set on scheduled runs and the gate's candidates.
    reuse_fresh_only = models.BooleanField(default=False, db_default=False)
    # Whose grades reuse may copy: people's (and imported people's) always; an AI judge's
    # only when the lead ticks this (and only from a judge the team's rule lets grade).
    reuse_judges = models.BooleanField(default=False, db_default=False)
    # A keyword with judgements but no results scores 0 in every metric instead of being
    # left out of the means (trec_eval -c).
    zero_without_results = models.BooleanField(default=False)
    # The tag of the TREC run it was imported from, which its trec_eval export prints as
    # the run id; empty for any other evaluation.
    run_tag = models.CharField(max_length=100, blank=True, default="", db_default="")
    auto_restart = models.BooleanField(default=False)
    tags = models.ManyToManyField(Tag, blank=True, related_name="evaluations")
    # Where the results come from; none for imported results.
    search_model = models.ForeignKey(
        "endpoints.SearchModel",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="evaluations",
    )

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    pinned = models.BooleanField(default=False)
    archived = models.BooleanField(default=False)
    # While a start runs the keywords against the search model. One runner at a time
    # holds the lease; a runner that dies lets it expire and the sweep starts another.
    fetching = models.BooleanField(default=False)
    fetch_lease_until = models.DateTimeField(null=True, blank=True)

    # Kept by the pipeline: progress = graded_slots / total_slots.
    total_slots = models.PositiveIntegerField(default=0)
    graded_slots = models.PositiveIntegerField(default=0)
    progress = models.FloatField(default=0.0)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["team", "status"], name="evaluation_team_status")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(strategy__in=[1, 3]), name="evaluation_strategy_1_or_3"
            ),
            models.CheckConstraint(
                condition=models.Q(graded_slots__lte=models.F("total_slots")),
                name="evaluation_graded_within_total",
            ),
            # A name means one evaluation in its team, whatever its case: leads pick
            # evaluations by name to compare them. Services store names trimmed.
            models.UniqueConstraint(
                models.F("team"),
                Lower("name"),
                name=NAME_ONCE_PER_TEAM,
                violation_error_message="An evaluation with this name already exists in this team.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def grading_scale(self) -> engine.Scale:
        """The scale graders grade on and the engine scores with."""
        from .scales import scale_of

        return scale_of(self.scale, self.scale_levels)

    @property
    def scale_text(self) -> str:
        """The scale as pages name it: "Graded (0-3)", or "Custom levels (-2 to 4)"."""
        if self.scale != Scale.CUSTOM or not self.scale_levels:
            return self.get_scale_display()
        levels = self.scale_levels
        return f"Custom levels ({levels.get('lowest')} to {levels.get('highest')})"

    @property
    def status_shown(self) -> str:
        """The status as people read it: a pause keeps the status pending (the queue
        offers nothing), but a lead who paused it reads "Paused", and one whose keywords
        are still running on the search model reads "Starting"."""
        if self.fetching:
            return "Starting"
        if self.status == Status.PENDING and self.started_at is not None:
            return "Paused"
        return self.get_status_display()


class EvaluationMetric(models.Model):
    """One (metric, k) an evaluation reports, with its current mean over keywords.

    `value_sum` and `value_count` let one keyword's change update the mean in constant
    time; the sweep re-adds them exactly (`means_exact`) so no rounding drift survives.
    """

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="metrics")
    metric = models.CharField(max_length=16)
    # The cutoff, 1 to 1,000; 0 is the whole list (engine.WHOLE_LIST).
    k = models.PositiveSmallIntegerField()
    value = models.FloatField(null=True, blank=True)
    value_sum = models.FloatField(default=0.0)
    value_count = models.PositiveIntegerField(default=0)
    means_exact = models.BooleanField(default=True)
    # Shown on the lead's dashboard.
    pinned = models.BooleanField(default=False)
    position = models.PositiveSmallIntegerField(default=0, help_text="display order")

    class Meta:
        ordering = ["evaluation", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation", "metric", "k"], name="evaluation_metric_once"
            ),
            models.CheckConstraint(
                condition=models.Q(k__gte=0, k__lte=1000), name="evaluation_metric_k_0_to_1000"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.metric}@{self.k}" if self.k else self.metric


class EvaluationMetricPoint(models.Model):
    """History for charts: the metric's value, at most one point per minute."""

    evaluation_metric = models.ForeignKey(
        EvaluationMetric, on_delete=models.CASCADE, related_name="history"
    )
    minute = models.DateTimeField(help_text="start of the minute this point stands for")
    value = models.FloatField(null=True, blank=True)
    progress = models.FloatField(default=0.0)

    class Meta:
        ordering = ["evaluation_metric", "minute"]
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation_metric", "minute"], name="metric_point_once_per_minute"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.evaluation_metric_id} at {self.minute:%Y-%m-%d %H:%M}: {self.value}"


class Keyword(models.Model):
    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="keywords")
    text = models.CharField(max_length=500)
    position = models.PositiveIntegerField(help_text="order within the evaluation")

    # Execution status when results come from a search endpoint.
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    execution_message = models.TextField(blank=True)
    failed = models.BooleanField(default=False)
    executed_at = models.DateTimeField(null=True, blank=True, help_text="when it was run")
    execution_ms = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    # Scoring marks. A grade change bumps grade_version and sets needs_scoring in the
    # grade's own transaction; the worker records the version it scored. A lease lets one
    # worker at a time recompute a keyword; an expired lease is taken over by the sweep.
    needs_scoring = models.BooleanField(default=False)
    grade_version = models.PositiveBigIntegerField(default=0)
    scored_version = models.PositiveBigIntegerField(default=0)
    scoring_lease_until = models.DateTimeField(null=True, blank=True)
    graded_slots = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["evaluation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "text"], name="keyword_unique_text"),
            models.UniqueConstraint(
                fields=["evaluation", "position"], name="keyword_unique_position"
            ),
        ]
        indexes = [
            models.Index(
                fields=["id"],
                condition=models.Q(needs_scoring=True),
                name="keyword_needs_scoring",
            ),
            # The judgement library and reuse find a team's judgements by query text.
            models.Index(fields=["text"], name="keyword_text"),
        ]

    def __str__(self) -> str:
        return self.text


class KeywordNotes(models.Model):
    """What the searcher of a keyword wants (its information need, shown to graders beside
    the keyword) and the lead's notes on it (kept for leads and exports).

    A table of its own, read only where it is shown: the grader's claim reads every
    column of the keyword in one statement that must stay short (apps/judging/sql.py), and
    most keywords have neither."""

    keyword = models.OneToOneField(
        Keyword, on_delete=models.CASCADE, primary_key=True, related_name="notes"
    )
    information_need = models.TextField(blank=True)
    notes = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"notes on keyword {self.keyword_id}"


class Snapshot(models.Model):
    """One result of a keyword at one position, as the search system returned it."""

    keyword = models.ForeignKey(Keyword, on_delete=models.CASCADE, related_name="snapshots")
    position = models.PositiveIntegerField()
    doc_id = models.CharField(max_length=500)
    name = models.CharField(max_length=1000, blank=True)
    image = models.URLField(max_length=2000, blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    # Stage-1 value on the evaluation's native scale, kept by the pipeline.
    value = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["keyword", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["keyword", "position"], name="snapshot_unique_position"
            ),
            models.CheckConstraint(condition=models.Q(position__gte=1), name="snapshot_position_1"),
        ]

    def __str__(self) -> str:
        return f"{self.keyword_id}#{self.position} {self.doc_id}"


class UnretrievedJudgement(models.Model):
    """A judged document that is not among the keyword's results: a TREC qrels line for a
    document the run did not retrieve. It belongs to the keyword's pool in the `trec`
    profile (R and the ideal ranking, as trec_eval counts it), never to its ranking nor
    to the grader's queue. `grade` is on the evaluation's native scale."""

    keyword = models.ForeignKey(Keyword, on_delete=models.CASCADE, related_name="unretrieved")
    doc_id = models.CharField(max_length=500)
    grade = models.SmallIntegerField()

    class Meta:
        ordering = ["keyword", "id"]
        constraints = [
            models.UniqueConstraint(fields=["keyword", "doc_id"], name="unretrieved_doc_once"),
        ]

    def __str__(self) -> str:
        return f"{self.keyword_id} {self.doc_id}: {self.grade}"


class JudgementSource(models.Model):
    """What gave a judgement beyond its kind (FeedbackSlot.source): the AI judge, its
    model, prompt version and place in a chain; or an import's label. One row for each
    distinct source of a team, named by the slots it graded, and kept when the judge is
    removed: a grade keeps saying what made it. `judge_id` is the team's judge (0: none
    here, as for a judge's grade imported from a file); no foreign key, as the judges'
    app sits above this one."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8, choices=Source.choices)
    judge_id = models.PositiveBigIntegerField(default=0)
    # The judge's name, or an import's label.
    name = models.CharField(max_length=200, blank=True)
    model_name = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=64, blank=True)
    # A chain's link that gave the grade ("" for a judge's own run).
    chain_link = models.CharField(max_length=32, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "team",
                    "kind",
                    "judge_id",
                    "name",
                    "model_name",
                    "prompt_version",
                    "chain_link",
                ],
                name="judgement_source_once",
            ),
        ]

    def __str__(self) -> str:
        if self.kind == Source.JUDGE:
            made_by = " ".join(filter(None, [self.model_name, self.prompt_version]))
            return f"{self.name} ({made_by})" if made_by else self.name
        return self.name or self.get_kind_display()


class SlotQuerySet(models.QuerySet["FeedbackSlot"]):
    """The one spelling of whose judgements these are (Source)."""

    def by_people(self) -> "SlotQuerySet":
        return self.filter(people_q())

    def by_judges(self) -> "SlotQuerySet":
        return self.filter(judges_q())

    def by_machines(self) -> "SlotQuerySet":
        """Graded by anything but people: AI judges and clicks."""
        return self.exclude(people_q()).exclude(source="")

    def by_source(self, *kinds: str) -> "SlotQuerySet":
        return self.filter(source__in=kinds)


def people_q(through: str = "") -> models.Q:
    """Graded by people (a person here, or imported), for a filter on slots or, with
    `through` ("slot__"), on a model that reaches a slot."""
    return models.Q(**{f"{through}source__in": PEOPLE_SOURCES})


def judges_q(through: str = "") -> models.Q:
    """Graded by an AI judge (here, copied or imported), as people_q."""
    return models.Q(**{f"{through}source": Source.JUDGE})


class FeedbackSlot(models.Model):
    """One judgement to be made: a snapshot has as many slots as the evaluation's strategy.

    The grader is a user, or for imported judgements an external grader's name.
    `evaluation` and `keyword` are copies of the snapshot's, so the queue and the
    pipeline filter slots without joins.
    """

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="+")
    keyword = models.ForeignKey(Keyword, on_delete=models.CASCADE, related_name="slots")
    # No index of their own for snapshot and grader: slot_unique_index (snapshot, index)
    # and slot_grader_graded_at (grader, graded_at) lead with them and serve the same
    # lookups. Every claim and every grade rewrites a slot into each of its indexes (the
    # columns they change are indexed, so PostgreSQL cannot update in place): two copies
    # were a fifth of that work.
    snapshot = models.ForeignKey(
        Snapshot, on_delete=models.CASCADE, related_name="slots", db_index=False
    )
    index = models.PositiveSmallIntegerField(help_text="0 .. strategy-1")
    grader = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="feedback_slots",
        db_index=False,
    )
    external_grader = models.CharField(max_length=254, blank=True)
    grade = models.SmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    assigned_at = models.DateTimeField(null=True, blank=True)
    graded_at = models.DateTimeField(null=True, blank=True)
    # Copied from an earlier evaluation by the reuse strategy, not graded here (so it is
    # not counted again on the leaderboard).
    reused = models.BooleanField(default=False)
    # Written by an import (a file's grade, even one it names a member for), not given
    # here: like a reused grade, it counts in progress and metrics but not as anyone's
    # work today or on the leaderboard. The grade writer turns both flags off when it
    # writes or clears the grade. The database's default lets raw inserts leave it out.
    imported = models.BooleanField(default=False, db_default=False)
    # The document content the grade was given on (fingerprints.py), when that is not
    # this result's own: a grade copied from an earlier evaluation keeps its source's.
    # Empty: given on this result as it is. `stale`: that content differs from this
    # result's, so the document changed since it was graded (reuse marks it; the lead
    # sees the count and may send them back to the queue). The grade writer clears both
    # when it writes or clears the grade.
    content_fingerprint = models.CharField(max_length=32, blank=True, default="", db_default="")
    stale = models.BooleanField(default=False, db_default=False)
    # Who gave the grade (Source; "" without one) and, for an AI judge or an import,
    # what exactly (JudgementSource), written and cleared with the grade by the grade
    # writer only. A copy keeps its original's and names the evaluation it was copied
    # from (`reused_from`; None once that evaluation is deleted), or the library's
    # judgement list its original is in (`reused_from_list`; None once that list is
    # deleted): the library counts a copy only when neither still holds the original.
    source = models.CharField(
        max_length=8, choices=Source.choices, blank=True, default="", db_default=""
    )
    # Their indexes are partial (Meta): a person's grade, most of them, adds no entry.
    source_detail = models.ForeignKey(
        JudgementSource,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    reused_from = models.ForeignKey(
        Evaluation,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    # By name: the library sits above this app (its lists are read by reuse, above both).
    reused_from_list = models.ForeignKey(
        "library.JudgementList",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )

    # Copies that let the queue walk one index in its order of preference: snapshots
    # that already have a grade first (finish what is started), then keyword order,
    # then position. snapshot_started turns true for every slot of a snapshot once one
    # of them is graded.
    keyword_position = models.PositiveIntegerField(default=0)
    snapshot_position = models.PositiveIntegerField(default=0)
    snapshot_started = models.BooleanField(default=False)

    objects = SlotQuerySet.as_manager()

    class Meta:
        ordering = ["snapshot", "index"]
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "index"], name="slot_unique_index"),
            # A grader never holds two slots of one snapshot, whatever the concurrency.
            models.UniqueConstraint(
                fields=["snapshot", "grader"],
                condition=models.Q(grader__isnull=False),
                name="slot_one_per_grader_per_snapshot",
            ),
        ]
        indexes = [
            # The queue's search for open work: ungraded slots of an evaluation in the
            # order they are offered, so a claim reads a handful of index entries
            # however large the pool is.
            models.Index(
                "evaluation",
                models.F("snapshot_started").desc(),
                "keyword_position",
                "snapshot_position",
                "index",
                condition=models.Q(grade__isnull=True),
                name="slot_queue_order",
            ),
            # A grader's held (ungraded) slot.
            models.Index(
                fields=["grader", "assigned_at"],
                condition=models.Q(grade__isnull=True),
                name="slot_held",
            ),
            models.Index(fields=["grader", "graded_at"], name="slot_grader_graded_at"),
            models.Index(
                fields=["source_detail"],
                condition=models.Q(source_detail__isnull=False),
                name="slot_source_detail",
            ),
            models.Index(
                fields=["reused_from"],
                condition=models.Q(reused_from__isnull=False),
                name="slot_reused_from",
            ),
            models.Index(
                fields=["reused_from_list"],
                condition=models.Q(reused_from_list__isnull=False),
                name="slot_reused_from_list",
            ),
        ]

    def __str__(self) -> str:
        return f"slot {self.index} of {self.snapshot_id}"


class SnapshotSkip(models.Model):
    """A grader said they cannot judge this snapshot; it is not offered to them again."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="skips")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "user"], name="skip_once_per_grader"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} skipped {self.snapshot_id}"

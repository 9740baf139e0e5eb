"""A team's AI judges: which model grades, how it is called, and what a run may spend.

The API key is stored encrypted (apps/core/secrets.py) and never read back into a page,
an API answer, a log line or an export: what is shown is `api_key_hint`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.db import models

from apps.accounts.models import Team
from apps.evaluations.models import Evaluation, FeedbackSlot

from .providers import Protocol


class JudgePrompt(models.Model):
    """A team's own prompt: a lead's edited copy of the default. A change makes a new
    version and keeps the old ones, because stored judgements name the version that
    made them (prompts.py)."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="judge_prompts")
    name = models.CharField(max_length=100)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="judge_prompt_name_once"),
        ]

    def __str__(self) -> str:
        return self.name


class JudgePromptVersion(models.Model):
    """One version of a team's prompt, never changed once written."""

    prompt = models.ForeignKey(JudgePrompt, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    # What judgements record: "prompt-<prompt id>-v<number>", unique in the whole database, so
    # two teams' prompts never share a cache entry or a calibration column.
    version = models.CharField(max_length=64, unique=True)
    instructions = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["prompt_id", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["prompt", "number"], name="prompt_version_once"),
        ]

    def __str__(self) -> str:
        return self.version


class PanelRule(models.TextChoices):
    """How a panel's members' grades make its one grade (combining.py)."""

    MEDIAN = "median", "Median"
    MAJORITY = "majority", "Majority, a tie left for people"
    FITTED = "fitted", "Weights fitted on a gold set"


class Judge(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="judges")
    # The judge as a grader: the slots it grades name this user (inactive, no password,
    # never a member of a team: it cannot log in, and people's lists leave it out).
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="ai_judge"
    )
    name = models.CharField(max_length=100)
    protocol = models.CharField(max_length=16, choices=[(p.value, p.value) for p in Protocol])
    base_url = models.CharField(max_length=500)
    model_name = models.CharField(max_length=200)
    api_key_encrypted = models.TextField(blank=True)
    api_key_hint = models.CharField(max_length=16, blank=True)
    # None: the provider's default (some newer models take no temperature).
    temperature = models.FloatField(null=True, blank=True)
    timeout_seconds = models.PositiveSmallIntegerField(default=60)
    results_per_call = models.PositiveSmallIntegerField(default=10)
    calls_at_once = models.PositiveSmallIntegerField(default=4)
    max_output_tokens = models.PositiveIntegerField(default=2_000)
    structured_output = models.BooleanField(default=True)
    # Shown each result's image beside its text (images.py), for models that take images.
    sees_images = models.BooleanField(default=False)
    # Each call is asked this many times (at a temperature above 0): the grade given most
    # often is kept, and the share that gave it is the grade's agreement (combining.py).
    samples = models.PositiveSmallIntegerField(default=1)
    # A panel (panels.py): its members grade, and this rule makes their grades one; ""
    # for a judge of one model. A panel has no model, address or key of its own.
    panel_rule = models.CharField(max_length=16, blank=True, choices=PanelRule.choices)
    # The fitted rule's weights and where they come from: {"weights": {member id:
    # weight}, "gold_set": id, "calibration": id, "items": n, "squared_error": e}.
    panel_fit = models.JSONField(null=True, blank=True)
    # None: the default prompt of the evaluation's scale (prompting.py). A run takes the
    # prompt's newest version when it starts and keeps it (JudgeRun.prompt).
    prompt = models.ForeignKey(
        JudgePrompt, null=True, blank=True, on_delete=models.RESTRICT, related_name="judges"
    )
    # A run's budget, caps never passed: each call's most is reserved before it is sent
    # (budgets.py), and the run stops ("Budget reached") when the next call does not fit.
    # None: no limit of that kind.
    budget_calls = models.PositiveIntegerField(null=True, blank=True)
    budget_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    budget_cost = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    # What the provider charges, per million tokens, in US dollars as the providers' price
    # lists are (money.py); the runs' costs are estimates from them.
    price_input_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    price_output_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    # Input tokens the provider read from its prompt cache (a prompt's unchanged start);
    # None: charged as other input tokens.
    price_cached_input_per_million = models.DecimalField(
        max_digits=10, decimal_places=4, null=True, blank=True
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="judge_name_once_per_team"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_panel(self) -> bool:
        return bool(self.panel_rule)

    def members(self) -> list[Judge]:
        """A panel's members in their order (none for a judge of one model), read once
        for this instance: a run step reads its judge afresh."""
        if not self.is_panel:
            return []
        if not hasattr(self, "_members"):
            seats = self.seats.select_related("member").order_by("position")
            self._members = [seat.member for seat in seats]
        return self._members

    def forget_members(self) -> None:
        self.__dict__.pop("_members", None)

    def describe_panel(self, members: list[Judge]) -> None:
        """Name the panel by its rule and members' models (what its grades, the cache and
        the team's calibration rule read), and wait as long as its slowest member."""
        models_named = ", ".join(member.model_name for member in members)
        rule = self.panel_rule
        weights = (self.panel_fit or {}).get("weights") or {}
        if rule == PanelRule.FITTED and weights:
            # A fit is another panel: its calibrations and cached grades are its own.
            rule += " " + "/".join(f"{float(weights.get(str(m.id), 0)):.2f}" for m in members)
        self.model_name = f"panel ({rule}): {models_named}"[:200]
        self.protocol = ""
        self.base_url = ""
        self.timeout_seconds = max((member.timeout_seconds for member in members), default=60)

    def shows_images(self) -> bool:
        """Whether its calls may carry images: its own switch, or a panel member's."""
        if self.is_panel:
            return any(member.sees_images for member in self.members())
        return self.sees_images


class PanelSeat(models.Model):
    """A judge sitting on a panel. A member is a judge of one model (no panel sits on a
    panel), and stays while it sits on one (PROTECT)."""

    panel = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="seats")
    member = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="panel_seats")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["panel_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["panel", "member"], name="panel_seat_once"),
            models.UniqueConstraint(fields=["panel", "position"], name="panel_seat_position_once"),
        ]

    def __str__(self) -> str:
        return f"{self.member} on {self.panel}"


class RunStatus(models.TextChoices):
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    CANCELLED = "cancelled", "Cancelled"
    FINISHED = "finished", "Finished"  # nothing left for the judge
    BUDGET_REACHED = "budget_reached", "Budget reached"  # results left the budget cannot pay
    # Every call failed for AI_JUDGE_FAIL_AFTER_SECONDS (the model cannot be reached).
    FAILED = "failed", "Failed"


class RunRole(models.TextChoices):
    GRADES = "grades", "Grades the results"
    # A chain's second opinion or next judge: asked only about what the chain sends it
    # (chains.py), it never claims results itself, so it is never resumed as a run.
    CHAIN = "chain", "Asked by a chain"


class JudgeRun(models.Model):
    """A judge assigned to an evaluation: its progress, spending and state."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="runs")
    role = models.CharField(max_length=16, choices=RunRole.choices, default=RunRole.GRADES)
    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="judge_runs")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.RUNNING)
    prompt_version = models.CharField(max_length=64)
    # The team prompt's version the run judges with (None: the scale's default prompt):
    # one run's grades all come from one prompt, whatever is edited meanwhile.
    prompt = models.ForeignKey(
        JudgePromptVersion, null=True, blank=True, on_delete=models.RESTRICT, related_name="runs"
    )
    # The share of each result's slots AI judges may fill while this run claims (the
    # lead's choice, 1 to the evaluation's strategy): 1 leaves the rest to people; the
    # strategy is "AI only". Every judge's slots of a result count, held or graded.
    slots_per_result = models.PositiveSmallIntegerField(default=1)
    # False: "not urgent": its calls go through the provider's batch interface at half the
    # price, answered within 24 h (batch_runs.py), instead of lanes of calls.
    urgent = models.BooleanField(default=True)
    calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    cached_input_tokens = models.PositiveBigIntegerField(default=0)  # of input_tokens
    output_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    graded = models.PositiveIntegerField(default=0)
    from_cache = models.PositiveIntegerField(default=0)  # of `graded`: no call paid for
    failed = models.PositiveIntegerField(default=0)
    # A rate limit or an outage: no call before this moment; calls in a row that could
    # be retried (the backoff doubles with each).
    wait_until = models.DateTimeField(null=True, blank=True)
    failures_in_a_row = models.PositiveSmallIntegerField(default=0)
    # Since when every call failed in a way that may pass (an outage, a timeout, a rate
    # limit); None once one is answered. Past AI_JUDGE_FAIL_AFTER_SECONDS the run fails.
    failing_since = models.DateTimeField(null=True, blank=True)
    # What the calls in flight may spend at most, reserved before they are sent so that
    # the lanes together never pass a budget (budgets.py); it counts until reserved_until,
    # after which no call of those can still be in flight.
    reserved_calls = models.PositiveIntegerField(default=0)
    reserved_tokens = models.PositiveBigIntegerField(default=0)
    reserved_cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    reserved_until = models.DateTimeField(null=True, blank=True)
    # Why the run stopped or paused by itself (a rejected key, the budget), for the page.
    note = models.TextField(blank=True)
    # Its lanes (calls_at_once Celery tasks, each making one call after another, see
    # tasks.py): every (re)start numbers a new set, and a lane of an older one stops.
    lane_epoch = models.PositiveIntegerField(default=0)
    lanes_seen_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "evaluation"], name="judge_run_once_per_evaluation"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge} on evaluation {self.evaluation_id}"


class BatchState(models.TextChoices):
    SENDING = "sending", "Being sent"  # stored, not yet accepted by the provider
    OUT = "out", "At the provider"
    APPLIED = "applied", "Applied"  # its results written, once
    NOT_SENT = "not_sent", "Not sent"  # refused, or its worker died sending it


class JudgeBatch(models.Model):
    """A not-urgent run's calls sent together through the provider's batch interface
    (batch_runs.py): out until the provider ends it, then applied once."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="batches")
    state = models.CharField(max_length=16, choices=BatchState.choices, default=BatchState.SENDING)
    provider_batch_id = models.CharField(max_length=200, blank=True)
    input_file_id = models.CharField(max_length=200, blank=True)  # OpenAI's uploaded requests
    provider_status = models.CharField(max_length=32, blank=True)  # as the provider last said
    prompt_version = models.CharField(max_length=64)
    system_prompt = models.TextField()  # the same in every call of a run
    requests = models.PositiveIntegerField(default=0)
    # What its calls may spend at most (at the batch price), reserved on the run's row
    # until the batch is applied (budgets.py).
    reserved_calls = models.PositiveIntegerField(default=0)
    reserved_tokens = models.PositiveBigIntegerField(default=0)
    reserved_cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    reserved_on_row = models.BooleanField(default=False)
    # Why it was not sent, why a poll failed, or that the lead cancelled it.
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    polled_at = models.DateTimeField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["state", "run"], name="judge_batch_state_run")]

    def __str__(self) -> str:
        return f"batch {self.provider_batch_id or self.id} of run {self.run_id}"

    @property
    def provider_host(self) -> str:
        """Where it went, as the lead reads it: the host of the judge's base URL."""
        base_url = self.run.judge.base_url
        return urlsplit(base_url).hostname or base_url


class JudgeBatchRequest(models.Model):
    """One call of a batch: what its custom_id stands for."""

    batch = models.ForeignKey(JudgeBatch, on_delete=models.CASCADE, related_name="calls")
    custom_id = models.CharField(max_length=64)
    # Result id in the prompt -> the claimed slot as the prompt showed it (sql.Claimed).
    slots = models.JSONField()
    keys = models.JSONField()  # slot id -> its judgement's cache key
    user_prompt = models.TextField()
    tries = models.PositiveSmallIntegerField(default=1)
    # A failure that may pass, tried fewer than RETRIES times: asked again in the run's
    # next batch, its slots held meanwhile.
    again = models.BooleanField(default=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "custom_id"], name="batch_custom_id_once"),
        ]
        indexes = [
            models.Index(
                fields=["batch"], condition=models.Q(again=True), name="batch_request_again"
            )
        ]

    def __str__(self) -> str:
        return f"{self.custom_id} of {self.batch}"


class GoldSet(models.Model):
    """What judges are calibrated on: a frozen random sample of keywords people graded,
    with their results and people's grades (GoldItem), taken from a baseline evaluation
    and, to see whether a judge would change a decision, a candidate evaluation of the
    same keywords (calibration.py)."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="gold_sets")
    name = models.CharField(max_length=100)
    # The evaluations it was drawn from (the items are copies: deleting one leaves the
    # gold set whole) and their names when it was drawn.
    baseline = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    candidate = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    baseline_name = models.CharField(max_length=200)
    candidate_name = models.CharField(max_length=200, blank=True)
    # The evaluations' scale, profile, metrics and guidelines, as they were.
    scale = models.CharField(max_length=16)
    scale_levels = models.JSONField(null=True, blank=True)
    profile = models.CharField(max_length=16)
    metrics = models.JSONField(default=list)  # [[metric, k], ...]
    guidelines = models.TextField(blank=True)
    seed = models.BigIntegerField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="gold_set_name_once"),
        ]

    def __str__(self) -> str:
        return self.name


class GoldItem(models.Model):
    """One result of a sampled keyword that people graded: the document as a judge is
    shown it, people's grades, and where it stood in each evaluation's list."""

    gold_set = models.ForeignKey(GoldSet, on_delete=models.CASCADE, related_name="items")
    keyword_index = models.PositiveIntegerField()  # 0, 1, ... in the sample's order
    keyword = models.CharField(max_length=500)
    doc_id = models.CharField(max_length=500)
    title = models.CharField(max_length=1000, blank=True)
    fields = models.JSONField(default=dict, blank=True)
    image = models.CharField(max_length=2000, blank=True)  # the result's, as it was
    # People's grades on the native scale (a lead's decision, when there is one, alone).
    people_grades = models.JSONField(default=list)
    baseline_position = models.PositiveIntegerField(null=True, blank=True)
    candidate_position = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["keyword_index", "id"]

    def __str__(self) -> str:
        return f"{self.keyword}: {self.doc_id}"


class CalibrationStatus(models.TextChoices):
    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"
    STOPPED = "stopped", "Stopped"  # cancelled, a rejected key, or the budget reached


class CalibrationRun(models.Model):
    """A judge grading a gold set once, with the model and prompt version it had then; or
    a judgement list of the library (a click model's, an AI judge's file) read against
    the gold set: its source's model and settings stand for model and prompt version."""

    gold_set = models.ForeignKey(GoldSet, on_delete=models.CASCADE, related_name="runs")
    judge = models.ForeignKey(
        Judge, null=True, blank=True, on_delete=models.CASCADE, related_name="calibrations"
    )
    judgement_list = models.ForeignKey(
        "library.JudgementList",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="calibrations",
    )
    model_name = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=64)
    prompt = models.ForeignKey(
        JudgePromptVersion,
        null=True,
        blank=True,
        on_delete=models.RESTRICT,
        related_name="calibrations",
    )
    # The judge was shown the results' images (a lead may calibrate it without them too).
    with_images = models.BooleanField(default=False)
    status = models.CharField(
        max_length=16, choices=CalibrationStatus.choices, default=CalibrationStatus.RUNNING
    )
    note = models.TextField(blank=True)
    calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    cached_input_tokens = models.PositiveBigIntegerField(default=0)  # of input_tokens
    output_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    graded = models.PositiveIntegerField(default=0)
    from_cache = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    # Agreement with people's consensus when it finished: what the team's gate reads.
    alpha = models.FloatField(null=True, blank=True)
    # The worker doing it says it is alive; the sweep restarts one that went quiet.
    seen_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(judge__isnull=False, judgement_list__isnull=True)
                | models.Q(judge__isnull=True, judgement_list__isnull=False),
                name="calibration_of_a_judge_or_a_list",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.graded_by} on {self.gold_set}"

    @property
    def graded_by(self) -> str:
        """The judge's name, or the list's."""
        made_by = self.judge if self.judge_id else self.judgement_list
        return str(made_by)


class CalibrationGrade(models.Model):
    """The judge's grade of one gold item in one calibration, or why it has none."""

    run = models.ForeignKey(CalibrationRun, on_delete=models.CASCADE, related_name="grades")
    item = models.ForeignKey(GoldItem, on_delete=models.CASCADE, related_name="+")
    grade = models.SmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    failure = models.TextField(blank=True)
    cached = models.BooleanField(default=False)
    # Of a panel's or a sampled judge's grade: the share that gave it, and the votes
    # (answers.Judged): what calibration reports each member and their agreement from.
    agreement = models.FloatField(null=True, blank=True)
    votes = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "item"], name="calibration_grade_once"),
        ]

    def __str__(self) -> str:
        return f"{self.item}: {self.grade}"


class JudgeGate(models.Model):
    """A team's rule: a judge grades live evaluations only once calibrated, with its
    current model and prompt, to at least this agreement with people."""

    team = models.OneToOneField(Team, on_delete=models.CASCADE, related_name="judge_gate")
    min_alpha = models.FloatField(null=True, blank=True)  # None: no requirement

    def __str__(self) -> str:
        return f"{self.team}: alpha >= {self.min_alpha}"


class JudgeCall(models.Model):
    """One call to the model, as it went: the log a lead reads and exports. Of a live
    run or of a calibration."""

    run = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.CASCADE, related_name="call_log"
    )
    calibration = models.ForeignKey(
        CalibrationRun, null=True, blank=True, on_delete=models.CASCADE, related_name="call_log"
    )
    model_name = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=64)
    system_prompt = models.TextField()
    user_prompt = models.TextField()
    answer = models.TextField(blank=True)  # the raw answer, cut at the reader's limit
    parsed = models.JSONField(default=dict)  # result id -> {grade, reason} or {failed}
    input_tokens = models.PositiveIntegerField(default=0)
    cached_input_tokens = models.PositiveIntegerField(default=0)  # of input_tokens
    output_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    failure = models.CharField(max_length=16, blank=True)
    error = models.TextField(blank=True)
    made_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"call {self.id} of run {self.run_id}"


class JudgeFailure(models.Model):
    """A result the judge could not grade, with why; open until retried or graded."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="failures")
    slot = models.ForeignKey(FeedbackSlot, on_delete=models.CASCADE, related_name="+")
    reason = models.TextField()
    call = models.ForeignKey(JudgeCall, null=True, blank=True, on_delete=models.SET_NULL)
    open = models.BooleanField(default=True)
    failed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "slot"],
                condition=models.Q(open=True),
                name="judge_failure_open_once",
            ),
        ]

    def __str__(self) -> str:
        return f"slot {self.slot_id}: {self.reason}"


class JudgeGrade(models.Model):
    """Which model and prompt version made a judge's grade of a slot, in which call."""

    slot = models.OneToOneField(FeedbackSlot, on_delete=models.CASCADE, related_name="judge_grade")
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="grades")
    call = models.ForeignKey(JudgeCall, null=True, blank=True, on_delete=models.SET_NULL)
    model_name = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=64)
    cached = models.BooleanField(default=False)  # reused from an earlier call
    confidence = models.FloatField(null=True, blank=True)  # 0 to 1, as the model said
    # Of a panel's or a sampled judge's grade (combining.py): the share of the members or
    # samples that gave it, and each one's grade.
    agreement = models.FloatField(null=True, blank=True)
    votes = models.JSONField(null=True, blank=True)
    graded_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"slot {self.slot_id} by {self.model_name} ({self.prompt_version})"


class CachedJudgement(models.Model):
    """A judgement the team's judges already paid for, by what made it (cache_key in
    prompting.py): the same model, prompt version, keyword and document content are
    never paid for twice."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=64)
    grade = models.SmallIntegerField()
    reason = models.TextField(blank=True)
    confidence = models.FloatField(null=True, blank=True)
    agreement = models.FloatField(null=True, blank=True)
    votes = models.JSONField(null=True, blank=True)
    call = models.ForeignKey(JudgeCall, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "key"], name="cached_judgement_once"),
        ]

    def __str__(self) -> str:
        return f"{self.key[:12]}: {self.grade}"


class JudgeChain(models.Model):
    """People and stronger judges where they matter (chains.py): the first judge grades
    every result of the evaluation; a result it is unsure of, that a second opinion
    disagrees with, or that falls in the audit sample goes to the next link, a stronger
    judge or people, whose grade becomes the result's value, the first kept beside it."""

    evaluation = models.OneToOneField(
        Evaluation, on_delete=models.CASCADE, related_name="judge_chain"
    )
    first = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="+")
    second_opinion = models.ForeignKey(
        Judge, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # None: people (the result goes back to the graders' queue).
    escalate_to = models.ForeignKey(
        Judge, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # Escalate a grade the first judge gives with a confidence below this (None: never).
    confidence_below = models.FloatField(null=True, blank=True)
    # Escalate a grade whose panel members or samples agree on it less than this: the
    # share of them that gave it (None: never).
    agreement_below = models.FloatField(null=True, blank=True)
    audit_percent = models.PositiveSmallIntegerField(default=10)
    # The most results escalated, for every reason together (None: no limit).
    escalation_budget = models.PositiveIntegerField(null=True, blank=True)
    seed = models.BigIntegerField()  # which results the audit sample holds
    # One worker advances the chain at a time: it holds the chain until then.
    busy_until = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"chain on evaluation {self.evaluation_id}"


class StepStatus(models.TextChoices):
    KEPT = "kept", "Kept the first grade"
    ESCALATED = "escalated", "Graded by the next judge"
    AWAITING_PEOPLE = "awaiting_people", "Waiting for people"
    OVER_BUDGET = "over_budget", "Not escalated: the budget is spent"
    FAILED = "failed", "The next judge could not grade it"


class EscalationReason(models.TextChoices):
    NONE = "", "Not escalated"
    LOW_CONFIDENCE = "low_confidence", "Low confidence"
    DISAGREEMENT = "disagreement", "Judges disagree"
    PANEL_SPLIT = "panel_split", "Panel members disagree"
    SAMPLES_SPLIT = "samples_split", "Samples disagree"
    AUDIT = "audit", "Random audit"


class ChainStep(models.Model):
    """What the chain did with one result: the first judge's grade (and the second
    opinion's), whether and why it went on, and the grade of the link that ended it."""

    chain = models.ForeignKey(JudgeChain, on_delete=models.CASCADE, related_name="steps")
    slot = models.OneToOneField(FeedbackSlot, on_delete=models.CASCADE, related_name="+")
    first_grade = models.SmallIntegerField()
    first_reason = models.TextField(blank=True)
    first_confidence = models.FloatField(null=True, blank=True)
    first_agreement = models.FloatField(null=True, blank=True)
    second_grade = models.SmallIntegerField(null=True, blank=True)
    second_reason = models.TextField(blank=True)
    why = models.CharField(
        max_length=16, choices=EscalationReason.choices, blank=True, default=EscalationReason.NONE
    )
    status = models.CharField(max_length=16, choices=StepStatus.choices)
    # The next link's grade (a judge's here; people's is the slot's once they grade).
    next_grade = models.SmallIntegerField(null=True, blank=True)
    next_reason = models.TextField(blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"slot {self.slot_id}: {self.status}"

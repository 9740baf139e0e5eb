"""The tables of judging. The grader's queue and the grade writer work on
evaluations.FeedbackSlot and evaluations.SnapshotSkip; a lead's decision on a snapshot
graders disagree on is judging's own."""

from django.conf import settings
from django.db import models

from apps.evaluations.models import Evaluation, Snapshot


class SnapshotDecision(models.Model):
    """A team lead's final grade for one snapshot, on the evaluation's native scale.

    It overrides stage 1 for the snapshot in the metrics pipeline (its value is this
    grade, transformed like a grade for metrics on other scales) until a lead changes or
    clears it. The graders' own grades are kept as they are.
    """

    snapshot = models.OneToOneField(Snapshot, on_delete=models.CASCADE, related_name="decision")
    # A copy of the snapshot's evaluation, so an evaluation's decisions are found without
    # joining through keywords.
    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="+")
    grade = models.SmallIntegerField()
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField()

    class Meta:
        # Made by the insights app before decisions joined the grade writer (issue 16);
        # the table kept its name when the model moved.
        db_table = "insights_snapshotdecision"

    def __str__(self) -> str:
        return f"{self.snapshot_id} decided {self.grade}"

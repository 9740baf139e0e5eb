"""The tables of the judgement library. Judgements given in evaluations stay where they
were given (evaluations.FeedbackSlot, judging.SnapshotDecision) and the library reads
them there; a judgement list imported into the library alone, with no evaluation, is
kept here."""

from django.conf import settings
from django.db import models

from apps.accounts.models import Team
from apps.evaluations.models import JudgementSource, Scale


class JudgementList(models.Model):
    """A judgement list a lead imported into the team's library: its name, the file's
    format, the scale its grades are on, and whose judgements they are (its source: an
    import of people's work, or an AI judge's)."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200)
    file_format = models.CharField(max_length=16)
    scale = models.CharField(max_length=16, choices=Scale.choices)
    scale_levels = models.JSONField(null=True, blank=True)
    source = models.ForeignKey(JudgementSource, on_delete=models.PROTECT, related_name="+")
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_at = models.DateTimeField()
    judgement_count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="judgement_list_name_once"),
        ]

    def __str__(self) -> str:
        return self.name


class ListedJudgement(models.Model):
    """One judgement of an imported list: a grade for a query text and a document."""

    judgement_list = models.ForeignKey(
        JudgementList, on_delete=models.CASCADE, related_name="judgements"
    )
    # A copy of the list's team, so a lookup by team and query reads one index.
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)
    query = models.CharField(max_length=500)
    doc_id = models.CharField(max_length=500)
    grade = models.SmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judgement_list", "query", "doc_id"], name="listed_judgement_once"
            ),
        ]
        indexes = [models.Index(fields=["team", "query"], name="listed_judgement_team_query")]

    def __str__(self) -> str:
        return f"{self.query} / {self.doc_id}: {self.grade}"

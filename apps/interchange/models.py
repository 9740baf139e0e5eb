"""What the imports keep beyond the evaluation itself."""

from django.db import models


class TrecQuery(models.Model):
    """The qid a TREC import read a keyword from ("301"), so that the TREC exports write
    it back instead of the keyword's text (query_ids.py)."""

    keyword = models.OneToOneField(
        "evaluations.Keyword", on_delete=models.CASCADE, primary_key=True, related_name="trec_query"
    )
    qid = models.TextField()

    def __str__(self) -> str:
        return self.qid

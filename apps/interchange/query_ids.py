"""The query id each keyword has in the TREC exports (qrels, run, topics, trec_eval).

A keyword a TREC import created keeps the qid it was read from ("301", even when a topics
file gave it the text "international organized crime"). The qids are used only when
every keyword of the evaluation has one: a keyword added later has none, and its text
could be another keyword's qid. Otherwise, and for every evaluation not imported from
TREC files, a keyword's qid is its text as a column (trec_columns.to_column). Either way
each keyword has its own qid, and the topics export maps them to the keywords.
"""

from apps.evaluations.models import Evaluation, Keyword

from .models import TrecQuery
from .trec_columns import to_column


def query_ids(evaluation: Evaluation) -> dict[int, str]:
    """keyword id -> its qid in the TREC exports."""
    texts = dict(Keyword.objects.filter(evaluation=evaluation).values_list("id", "text"))
    kept = dict(
        TrecQuery.objects.filter(keyword__evaluation=evaluation).values_list("keyword_id", "qid")
    )
    if texts and len(kept) == len(texts):
        return kept
    return {keyword_id: to_column(text) for keyword_id, text in texts.items()}

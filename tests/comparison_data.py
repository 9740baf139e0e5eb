"""Evaluations with known grades for the comparison tests (pages, API, browser).

They are imported as evaluation documents, which stores keywords, results, grades and
metric values in one go, exactly as the scoring pipeline would compute them.
"""

import io
import json
from collections.abc import Sequence

from apps.accounts.models import Team
from apps.evaluations.models import Evaluation
from apps.interchange.document import import_document

Results = Sequence[tuple[str, int | None]]  # (doc id, grade or None) in position order


def imported_evaluation(
    team: Team,
    name: str,
    keywords: dict[str, Results],
    *,
    metrics: Sequence[tuple[str, int]] = (("ndcg", 10), ("precision", 5)),
    scale: str = "graded",
) -> Evaluation:
    document = {
        "format": "relevo.evaluation/1",
        "name": name,
        "scale": scale,
        "strategy": 1,
        "metrics": [{"metric": metric, "k": k} for metric, k in metrics],
        "keywords": [
            {
                "keyword": text,
                "snapshots": [
                    {"position": position, "doc_id": doc_id, "grades": [grade]}
                    for position, (doc_id, grade) in enumerate(results, start=1)
                ],
            }
            for text, results in keywords.items()
        ],
    }
    return import_document(team=team, source=io.BytesIO(json.dumps(document).encode()))


def shop_pair(team: Team, *, keywords: int = 20) -> tuple[Evaluation, Evaluation]:
    """ "Ranking A" and a clearly better "Ranking B" on the same keywords.

    A shows each keyword's five results in one of three rotations, never best first; B
    puts them in the ideal order (nDCG@10 = 1) and swaps a poor result for a new good one,
    and on odd keywords a second one for a fair one. So B wins on nDCG@10 and P@5 (0.6 ->
    0.8 or 1.0) for every keyword, by amounts that differ from keyword to keyword.
    """
    first: dict[str, Results] = {}
    second: dict[str, Results] = {}
    for number in range(keywords):
        text = f"query {number}"
        results = [
            (f"q{number}-poor-1", 0),
            (f"q{number}-fair", 1),
            (f"q{number}-poor-2", 0),
            (f"q{number}-good", 2),
            (f"q{number}-best", 3),
        ]
        turn = number % 3
        first[text] = results[turn:] + results[:turn]
        last = (f"q{number}-new-fair", 1) if number % 2 else (f"q{number}-poor-1", 0)
        second[text] = [
            (f"q{number}-best", 3),
            (f"q{number}-good", 2),
            (f"q{number}-new-good", 2),
            (f"q{number}-fair", 1),
            last,
        ]
    return imported_evaluation(team, "Ranking A", first), imported_evaluation(
        team, "Ranking B", second
    )


def same_keywords_pair(team: Team, size: int) -> tuple[Evaluation, Evaluation]:
    """Two evaluations "A" and "B" of `size` keywords with the same results and grades."""
    keywords: dict[str, Results] = {f"q{i}": [("d1", i % 4), ("d2", 1)] for i in range(size)}
    return imported_evaluation(team, "A", keywords), imported_evaluation(team, "B", keywords)

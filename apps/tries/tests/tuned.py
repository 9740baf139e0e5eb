"""A search model on a real local search server whose ranking turns on a `boost`
parameter, and a judgement library that grades its documents (used by the API's tests
of tries too)."""

import io

from apps.endpoints.tests.factories import make_endpoint, make_model
from apps.judging.judgements import Giver, slot_judge
from apps.library.lists import judgement_list_import
from tests.factories import slots_of
from tests.search_server import documents_for

KEYWORDS = [f"query {number}" for number in range(1, 11)]
# Document r of a keyword (1 = the most relevant) and its grade on the graded scale.
GRADES = {1: 3, 2: 3, 3: 2, 4: 2, 5: 1, 6: 1, 7: 0, 8: 0, 9: 0, 10: 0}
ASKED = KEYWORDS[:6]


def doc_id(keyword: str, rank: int) -> str:
    return str(documents_for(keyword, rank)[-1]["_id"])


def rank_of(keyword: str, document: str) -> int:
    return next(rank for rank in GRADES if doc_id(keyword, rank) == document)


def grade_open_slots(evaluation, who):
    """People grade every open slot with the document's true grade."""
    for slot in slots_of(evaluation):
        if slot.grade is None:
            grade = GRADES[rank_of(slot.keyword.text, slot.snapshot.doc_id)]
            slot_judge(slot_id=slot.id, giver=Giver.recorded(who), grade=grade)


def import_grades(team, ranks, name="Graded by people", keywords=KEYWORDS):
    """Put people's grades for documents `ranks` of every keyword into the library."""
    lines = ["query,docid,rating"]
    lines += [f"{k},{doc_id(k, r)},{GRADES[r]}" for k in keywords for r in ranks]
    return judgement_list_import(
        team=team,
        name=name,
        file_format="quepid",
        judgements=io.BytesIO("\n".join(lines).encode()),
        queries=None,
        scale="graded",
        made_by="people",
    )


def make_tuned_model(team, search_server):
    """Boost 3 ranks best first; a try with boost 1 ranks worst first."""
    endpoint = make_endpoint(team, url=search_server.url("/tuned"))
    return make_model(team, endpoint, name="Tuned", params="q=#query#\nboost=3")

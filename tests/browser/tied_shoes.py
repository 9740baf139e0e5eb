"""The disagreement queue's browser tests share one evaluation: binary, three slots, the
first shoe a tie (1 vs 0, the third slot open), the second relevant for all three
graders, so P@2 counts only the second (1). The tied sandal has a picture and fields,
and its keyword an information need, as a lead reads them in the queue."""

from apps.accounts.services import member_add, team_create
from apps.evaluations.models import Evaluation, KeywordNotes
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_start
from tests.browser.people import PASSWORD
from tests.factories import slots_of

SANDAL = Document(
    "sku-1",
    "Blue sandal",
    image="https://img.shop.test/sku-1.jpg",
    attributes={"colour": "blue", "price": "39.90"},
)
NEED = "road shoes, red, any brand"


def tied_shoes(reasons: list[str]) -> Evaluation:
    """The evaluation of team "Shop" (lead: lead@shop.test), graded with these reasons."""
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    graders = [
        member_add(team=team, email=f"g{n}@shop.test", role="evaluator").user for n in range(3)
    ]
    evaluation = evaluation_create(
        team=team, name="Shoes 1", scale="binary", strategy=3, metrics=[("precision", 2)]
    )
    [keyword] = keywords_add(evaluation=evaluation, texts=["red running shoes"])
    KeywordNotes.objects.create(keyword=keyword, information_need=NEED)
    snapshots_add(keyword=keyword, documents=[SANDAL, Document("sku-2", "Red runner")])
    evaluation = evaluation_start(evaluation=evaluation)
    grades = [1, 0, None, 1, 1, 1]
    for slot, grade, reason, grader in zip(
        slots_of(evaluation), grades, reasons, graders * 2, strict=True
    ):
        if grade is not None:
            slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=grade, reason=reason)
    return evaluation

"""Judge what decides: an AI judge reads the queue in the same decision order as people
(apps/judging/decisive.py writes it; apps/judges/sql.py walks it)."""

import pytest
from django.utils import timezone

from apps.judges.sql import claim_candidates
from apps.judging.decisive import decisive_order_clear, decisive_order_set
from apps.judging.tests.test_decisive_order import (
    DECISION_ORDER,
    KEYWORD_ORDER,
    rival_and_candidate,
)

pytestmark = pytest.mark.django_db


def candidates_in_order(evaluation, judge_user) -> list[tuple[str, int]]:
    claimed = claim_candidates(
        evaluation_id=evaluation.id,
        run_id=0,
        judge_user_id=judge_user.id,
        cutoff=timezone.now(),
        wanted=6,
    )
    return [(slot.keyword, slot.snapshot_position) for slot in claimed]


def test_an_ai_judge_reads_the_decision_order_and_then_keyword_order_again(team_a, owner):
    rival, candidate = rival_and_candidate(team_a)

    decisive_order_set(evaluation=candidate, rival_id=rival.id, metric="dcg@2", lead=owner)
    assert candidates_in_order(candidate, owner) == DECISION_ORDER

    decisive_order_clear(evaluation=candidate)
    assert candidates_in_order(candidate, owner) == KEYWORD_ORDER

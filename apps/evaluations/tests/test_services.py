"""Evaluation services: create, keywords, snapshots, start, clone; and the rules the
database keeps for them."""

import pytest
from django.db import IntegrityError, transaction

from apps.accounts.models import Tag
from apps.core.errors import InvalidInput, InvalidState
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    Snapshot,
    Status,
)
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.lifecycle.steps import evaluation_clone, evaluation_start, next_name
from tests.factories import assign, make_evaluation, make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db


def problems_of(**overrides) -> dict[str, str]:
    """Each problem evaluation_create reports, keyed by the field it names."""
    arguments = {"team": make_team(), "name": "Holiday set", "metrics": [("ndcg", 10)]}
    arguments.update(overrides)
    with pytest.raises(InvalidInput) as raised:
        evaluation_create(**arguments)
    return dict(problem.split(": ", 1) for problem in raised.value.problems)


# --- evaluation_create ----------------------------------------------------------------


def test_a_valid_evaluation_is_created_pending_with_its_metrics_in_order():
    team = make_team()

    evaluation = evaluation_create(
        team=team,
        name="  Holiday set  ",
        scale="binary",
        strategy=3,
        profile="trec",
        metrics=[("precision", 5), ("ap", 1), ("rr", 100)],
    )

    evaluation.refresh_from_db()
    assert evaluation.name == "Holiday set"
    assert (evaluation.scale, evaluation.strategy, evaluation.profile) == ("binary", 3, "trec")
    assert evaluation.status == Status.PENDING
    assert evaluation.total_slots == 0
    assert list(evaluation.metrics.values_list("metric", "k", "value")) == [
        ("precision", 5, None),
        ("ap", 1, None),
        ("rr", 100, None),
    ]


def test_metric_names_are_read_in_any_case_whoever_wrote_them():
    evaluation = evaluation_create(
        team=make_team(), name="Loud", metrics=[("NDCG", 10), (" AP ", 0)]
    )

    assert list(evaluation.metrics.values_list("metric", "k")) == [("ndcg", 10), ("ap", 0)]


def test_a_blank_name_is_reported_against_the_name():
    assert problems_of(name="   ") == {"name": "required"}


def test_an_unknown_scale_is_reported_against_the_scale():
    assert problems_of(scale="likert") == {
        "scale": "'likert' is not one of binary, graded, detail, custom"
    }


def test_an_unknown_profile_is_reported_against_the_profile():
    assert problems_of(profile="bing") == {"profile": "'bing' is not one of searchtweak, trec"}


def test_an_unknown_reuse_is_reported_against_the_reuse_setting():
    problems = problems_of(reuse="always")

    assert list(problems) == ["reuse"]
    assert problems["reuse"].startswith("'always' is not one of none, ")


def test_strategy_two_is_reported_against_the_strategy():
    assert problems_of(strategy=2) == {"strategy": "2 must be 1 or 3"}


def test_an_evaluation_needs_at_least_one_metric():
    assert problems_of(metrics=[]) == {"metrics": "at least one (metric, k) is required"}


def test_an_unknown_metric_is_reported_with_its_index():
    problems = problems_of(metrics=[("ndcg", 10), ("bleu", 10)])

    assert problems == {"metrics[1].metric": "unknown metric 'bleu'"}


@pytest.mark.parametrize("k", [1001, -1])
def test_a_cutoff_outside_1_to_1000_is_reported_with_its_index(k):
    problems = problems_of(metrics=[("ndcg", 10), ("precision", k)])

    assert problems == {
        "metrics[1].k": f"{k} must be a whole number from 1 to 1000, or null for the whole list"
    }


def test_cutoffs_1_and_100_are_accepted():
    evaluation = evaluation_create(
        team=make_team(), name="Edges", metrics=[("ndcg", 1), ("ndcg", 100)]
    )

    assert sorted(evaluation.metrics.values_list("k", flat=True)) == [1, 100]


def test_cutoff_1000_and_the_whole_list_are_accepted_and_the_whole_list_twice_is_not():
    evaluation = evaluation_create(
        team=make_team(), name="Deep", metrics=[("ndcg", 1000), ("ap", 0)]
    )

    assert list(evaluation.metrics.values_list("metric", "k")) == [("ndcg", 1000), ("ap", 0)]
    assert problems_of(metrics=[("ap", 0), ("ap", 0)]) == {"metrics[1]": "ap is listed twice"}


def test_the_same_metric_and_cutoff_twice_is_reported_at_the_second():
    problems = problems_of(metrics=[("ndcg", 10), ("precision", 5), ("ndcg", 10)])

    assert problems == {"metrics[2]": "ndcg@10 is listed twice"}


def test_the_same_metric_at_two_cutoffs_is_accepted():
    evaluation = evaluation_create(
        team=make_team(), name="Two cutoffs", metrics=[("ndcg", 5), ("ndcg", 10)]
    )

    assert evaluation.metrics.count() == 2


def test_transformer_rules_that_leave_out_grades_report_each_missing_grade():
    problems = problems_of(scale="graded", transformers={"binary": {"0": 0}})

    assert problems == {
        "transformers.binary.1": "missing",
        "transformers.binary.2": "missing",
        "transformers.binary.3": "missing",
    }


def test_complete_transformer_rules_are_kept():
    rules = {"binary": {"0": 0, "1": 0, "2": 1, "3": 1}}

    evaluation = evaluation_create(
        team=make_team(), name="Strict binary", metrics=[("precision", 5)], transformers=rules
    )

    evaluation.refresh_from_db()
    assert evaluation.transformers == rules


def test_every_problem_is_reported_at_once():
    problems = problems_of(
        name="",
        scale="graded",
        strategy=2,
        profile="bing",
        reuse="always",
        metrics=[("bleu", 1001), ("ndcg", 1001), ("ndcg", -1), ("ndcg", 0), ("ndcg", 0)],
        transformers={"binary": {"0": 0, "1": 1, "2": 1}},
    )

    assert set(problems) == {
        "name",
        "strategy",
        "profile",
        "reuse",
        "metrics[0].metric",
        "metrics[0].k",
        "metrics[1].k",
        "metrics[2].k",
        "metrics[4]",
        "transformers.binary.3",
    }


def test_an_invalid_evaluation_writes_nothing():
    team = make_team()

    problems_of(team=team, name="", metrics=[("bleu", 0)])

    assert not Evaluation.objects.exists()
    assert not EvaluationMetric.objects.exists()


def test_tags_of_the_evaluations_team_are_kept():
    team = make_team()
    tags = [Tag.objects.create(team=team, name="shoes"), Tag.objects.create(team=team, name="eu")]

    evaluation = evaluation_create(team=team, name="Tagged", metrics=[("ndcg", 10)], tags=tags)

    assert sorted(evaluation.tags.values_list("name", flat=True)) == ["eu", "shoes"]


def test_a_tag_of_another_team_is_refused_and_nothing_is_written():
    team = make_team()
    own = Tag.objects.create(team=team, name="shoes")
    foreign = Tag.objects.create(team=make_team(), name="shoes")

    problems = problems_of(team=team, tags=[own, foreign])

    assert problems == {"tags": "every tag must belong to the evaluation's team"}
    assert not Evaluation.objects.exists()
    assert not EvaluationMetric.objects.exists()


def test_a_foreign_tag_is_reported_together_with_the_other_problems():
    team = make_team()
    foreign = Tag.objects.create(team=make_team(), name="shoes")

    problems = problems_of(team=team, name="", tags=[foreign])

    assert set(problems) == {"name", "tags"}


def test_a_name_longer_than_200_characters_is_reported_against_the_name():
    assert set(problems_of(name="x" * 201)) == {"name"}


# --- keywords_add ---------------------------------------------------------------------


def keyword_rows(evaluation: Evaluation) -> list[tuple[str, int]]:
    return list(evaluation.keywords.order_by("position").values_list("text", "position"))


def test_keywords_are_trimmed_and_numbered_from_one():
    evaluation = make_evaluation(keywords={}, start=False)

    added = keywords_add(evaluation=evaluation, texts=["  red shoes ", "blue bag"])

    assert [(k.text, k.position) for k in added] == [("red shoes", 1), ("blue bag", 2)]
    assert keyword_rows(evaluation) == [("red shoes", 1), ("blue bag", 2)]


def test_blank_and_repeated_keywords_are_skipped():
    evaluation = make_evaluation(keywords={}, start=False)

    added = keywords_add(
        evaluation=evaluation, texts=["red shoes", "", "   ", "red shoes ", "blue bag"]
    )

    assert [k.text for k in added] == ["red shoes", "blue bag"]
    assert keyword_rows(evaluation) == [("red shoes", 1), ("blue bag", 2)]


def test_keywords_added_later_continue_the_positions_and_skip_existing_ones():
    evaluation = make_evaluation(keywords={"red shoes": 1, "blue bag": 1}, start=False)

    added = keywords_add(evaluation=evaluation, texts=["blue bag", "green hat", "red shoes"])

    assert [(k.text, k.position) for k in added] == [("green hat", 3)]
    assert keyword_rows(evaluation) == [("red shoes", 1), ("blue bag", 2), ("green hat", 3)]


def test_positions_continue_after_the_highest_even_when_one_was_removed():
    evaluation = make_evaluation(keywords={"a": 1, "b": 1, "c": 1}, start=False)
    Keyword.objects.filter(evaluation=evaluation, text="b").delete()

    [added] = keywords_add(evaluation=evaluation, texts=["d"])

    assert added.position == 4


def test_the_same_keyword_may_be_used_by_two_evaluations():
    first = make_evaluation(keywords={"red shoes": 1}, start=False)
    second = make_evaluation(keywords={}, start=False)

    [added] = keywords_add(evaluation=second, texts=["red shoes"])

    assert (added.text, added.position) == ("red shoes", 1)
    assert Keyword.objects.filter(text="red shoes").count() == 2
    assert first.keywords.count() == 1


# --- snapshots_add --------------------------------------------------------------------


def test_each_snapshot_gets_one_slot_per_grade_of_the_strategy():
    evaluation = make_evaluation(strategy=3, keywords={"red shoes": 0}, start=False)
    keyword = evaluation.keywords.get()

    snapshots = snapshots_add(
        keyword=keyword,
        documents=[
            Document("sku-1", "Trail runner", "https://img.test/1.png", {"colour": "red"}),
            Document("sku-2"),
        ],
    )

    assert [(s.position, s.doc_id) for s in snapshots] == [(1, "sku-1"), (2, "sku-2")]
    first = Snapshot.objects.get(doc_id="sku-1")
    assert (first.name, first.image, first.attributes) == (
        "Trail runner",
        "https://img.test/1.png",
        {"colour": "red"},
    )
    slots = slots_of(evaluation)
    assert [(slot.snapshot.doc_id, slot.index) for slot in slots] == [
        ("sku-1", 0),
        ("sku-1", 1),
        ("sku-1", 2),
        ("sku-2", 0),
        ("sku-2", 1),
        ("sku-2", 2),
    ]
    assert {(slot.evaluation_id, slot.keyword_id) for slot in slots} == {
        (evaluation.id, keyword.id)
    }
    assert all(slot.grade is None and slot.grader is None for slot in slots)
    evaluation.refresh_from_db()
    assert evaluation.total_slots == 6


def test_snapshots_added_later_continue_the_positions_and_raise_the_total():
    evaluation = make_evaluation(strategy=1, keywords={"red shoes": 2, "blue bag": 3}, start=False)
    keyword = evaluation.keywords.get(text="red shoes")

    added = snapshots_add(keyword=keyword, documents=[Document("late-1"), Document("late-2")])

    assert [s.position for s in added] == [3, 4]
    assert keyword.evaluation.total_slots == 7
    evaluation.refresh_from_db()
    assert evaluation.total_slots == 7
    assert FeedbackSlot.objects.filter(evaluation=evaluation).count() == 7


def test_a_document_already_among_the_results_or_given_twice_is_refused():
    evaluation = make_evaluation(strategy=1, keywords={"red shoes": 2}, start=False)
    keyword = evaluation.keywords.get()
    existing = keyword.snapshots.order_by("position").first().doc_id
    documents = [Document("new"), Document(existing), Document("new")]

    with pytest.raises(InvalidInput) as refused:
        snapshots_add(keyword=keyword, documents=documents)

    assert refused.value.problems == [
        f"documents[1].doc_id: {existing!r} is among the keyword's results",
        "documents[2].doc_id: 'new' is given as documents[0]",
    ]
    assert keyword.snapshots.count() == 2


def test_an_image_that_is_not_a_picture_address_is_refused():
    keyword = make_evaluation(keywords={"red shoes": 0}, start=False).keywords.get()

    with pytest.raises(InvalidInput) as refused:
        snapshots_add(keyword=keyword, documents=[Document("d", image="javascript:alert(1)")])

    assert refused.value.problems == [
        "documents[0].image: must be an http(s) address, or a data:image/png, jpeg, gif, "
        "webp or avif picture"
    ]


def test_adding_no_documents_changes_nothing():
    evaluation = make_evaluation(keywords={"red shoes": 2}, start=False)

    assert snapshots_add(keyword=evaluation.keywords.get(), documents=[]) == []

    evaluation.refresh_from_db()
    assert evaluation.total_slots == 2


# --- evaluation_start -----------------------------------------------------------------


def test_a_pending_evaluation_starts():
    evaluation = make_evaluation(start=False)

    started = evaluation_start(evaluation=evaluation)

    assert started.status == Status.ACTIVE
    assert started.started_at is not None
    assert Evaluation.objects.get(id=evaluation.id).status == Status.ACTIVE


@pytest.mark.parametrize("status", ["active", "finished"])
def test_only_a_pending_evaluation_can_start(status):
    evaluation = make_evaluation(start=False)
    Evaluation.objects.filter(id=evaluation.id).update(status=status)
    evaluation.refresh_from_db()

    with pytest.raises(InvalidState, match=f"only a pending evaluation can start; .* {status}"):
        evaluation_start(evaluation=evaluation)

    assert Evaluation.objects.get(id=evaluation.id).status == status


def test_starting_twice_is_refused_and_keeps_the_first_start_time():
    evaluation = make_evaluation()
    started_at = evaluation.started_at

    with pytest.raises(InvalidState):
        evaluation_start(evaluation=evaluation)

    assert Evaluation.objects.get(id=evaluation.id).started_at == started_at


def test_starting_from_a_stale_copy_names_the_real_status():
    evaluation = make_evaluation(start=False)
    evaluation_start(evaluation=Evaluation.objects.get(id=evaluation.id))

    with pytest.raises(InvalidState, match="this one is active"):
        evaluation_start(evaluation=evaluation)


# --- next_name ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Holiday set 4", "Holiday set 5"),
        ("Try 9", "Try 10"),
        ("Baseline", "Baseline 2"),
        ("Catalogue search, binary 1", "Catalogue search, binary 2"),
        ("Run 99", "Run 100"),
        ("2026", "2027"),
    ],
)
def test_next_name_increments_a_trailing_number_or_adds_two(name, expected):
    assert next_name(name) == expected


# --- evaluation_clone -----------------------------------------------------------------


@pytest.fixture
def graded_source() -> Evaluation:
    """An active evaluation with every setting away from its default, partly graded."""
    team = make_team()
    grader = make_grader(team)
    tags = [Tag.objects.create(team=team, name="shoes"), Tag.objects.create(team=team, name="eu")]
    evaluation = evaluation_create(
        team=team,
        name="Holiday set 4",
        scale="graded",
        strategy=3,
        profile="trec",
        metrics=[("ndcg", 10), ("precision", 5), ("err", 3)],
        transformers={"binary": {"0": 0, "1": 0, "2": 1, "3": 1}},
        description="Winter catalogue",
        show_position=True,
        scoring_guidelines="Judge as a shopper.",
        reuse="keyword_doc",
        auto_restart=True,
        tags=tags,
        created_by=grader,
    )
    for keyword in keywords_add(evaluation=evaluation, texts=["red shoes", "blue bag"]):
        snapshots_add(
            keyword=keyword,
            documents=[
                Document(f"{keyword.text}-1", "First", "https://img.test/1.png", {"rank": 1}),
                Document(f"{keyword.text}-2", "Second"),
            ],
        )
    evaluation_start(evaluation=evaluation)
    slot = assign(slots_of(evaluation)[0], grader)
    FeedbackSlot.objects.filter(id=slot.id).update(grade=2, reason="close enough")
    Evaluation.objects.filter(id=evaluation.id).update(graded_slots=1, progress=1 / 12)
    evaluation.refresh_from_db()
    return evaluation


SETTINGS = [
    "team_id",
    "scale",
    "strategy",
    "profile",
    "transformers",
    "description",
    "show_position",
    "scoring_guidelines",
    "reuse",
    "auto_restart",
    "created_by_id",
]


def test_a_clone_copies_the_settings_and_is_pending_under_the_next_name(graded_source):
    copy = evaluation_clone(evaluation=graded_source)

    assert copy.id != graded_source.id
    assert copy.name == "Holiday set 5"
    assert {name: getattr(copy, name) for name in SETTINGS} == {
        name: getattr(graded_source, name) for name in SETTINGS
    }
    assert copy.status == Status.PENDING
    assert (copy.started_at, copy.finished_at) == (None, None)


def test_a_clone_may_be_given_its_own_name(graded_source):
    assert evaluation_clone(evaluation=graded_source, name="Winter rerun").name == "Winter rerun"


def test_a_clone_copies_metrics_in_order_without_their_values(graded_source):
    EvaluationMetric.objects.filter(evaluation=graded_source).update(value=0.5, value_count=1)

    copy = evaluation_clone(evaluation=graded_source)

    assert list(copy.metrics.values_list("metric", "k", "value", "value_count")) == [
        ("ndcg", 10, None, 0),
        ("precision", 5, None, 0),
        ("err", 3, None, 0),
    ]


def test_a_clone_copies_the_tags(graded_source):
    copy = evaluation_clone(evaluation=graded_source)

    assert sorted(copy.tags.values_list("id", flat=True)) == sorted(
        graded_source.tags.values_list("id", flat=True)
    )


def test_a_clone_copies_keywords_and_results_with_empty_slots(graded_source):
    copy = evaluation_clone(evaluation=graded_source)

    assert keyword_rows(copy) == keyword_rows(graded_source)

    def results(evaluation):
        return list(
            Snapshot.objects.filter(keyword__evaluation=evaluation)
            .order_by("keyword__position", "position")
            .values_list("keyword__text", "position", "doc_id", "name", "image", "attributes")
        )

    assert results(copy) == results(graded_source)
    slots = slots_of(copy)
    assert len(slots) == 12
    assert all(slot.grade is None and slot.grader_id is None for slot in slots)
    assert all(slot.reason == "" and slot.graded_at is None for slot in slots)
    assert (copy.total_slots, copy.graded_slots, copy.progress) == (12, 0, 0.0)


def test_cloning_leaves_the_source_as_it_was(graded_source):
    evaluation_clone(evaluation=graded_source)

    source = Evaluation.objects.get(id=graded_source.id)
    assert (source.status, source.total_slots, source.graded_slots) == (Status.ACTIVE, 12, 1)
    assert FeedbackSlot.objects.filter(evaluation=source, grade__isnull=False).count() == 1


# --- what the database refuses --------------------------------------------------------


def test_a_grader_never_gets_two_slots_of_one_snapshot():
    evaluation = make_evaluation(strategy=3, keywords={"red shoes": 1})
    grader = make_grader(evaluation.team)
    first, second, _ = slots_of(evaluation)
    assign(first, grader)

    with pytest.raises(IntegrityError), transaction.atomic():
        FeedbackSlot.objects.filter(id=second.id).update(grader=grader)

    assert FeedbackSlot.objects.filter(grader=grader).count() == 1


def test_a_grader_may_hold_slots_of_different_snapshots():
    evaluation = make_evaluation(strategy=3, keywords={"red shoes": 2})
    grader = make_grader(evaluation.team)
    slots = slots_of(evaluation)

    assign(slots[0], grader)
    assign(slots[3], grader)

    assert FeedbackSlot.objects.filter(grader=grader).count() == 2


def test_many_unassigned_slots_of_one_snapshot_are_allowed():
    evaluation = make_evaluation(strategy=3, keywords={"red shoes": 1})

    assert [slot.grader_id for slot in slots_of(evaluation)] == [None, None, None]


def test_one_evaluation_cannot_hold_the_same_keyword_twice():
    evaluation = make_evaluation(keywords={"red shoes": 1})

    with pytest.raises(IntegrityError), transaction.atomic():
        Keyword.objects.create(evaluation=evaluation, text="red shoes", position=2)

    assert evaluation.keywords.count() == 1


def test_two_slots_of_a_snapshot_cannot_share_an_index():
    evaluation = make_evaluation(strategy=1, keywords={"red shoes": 1})
    [slot] = slots_of(evaluation)

    with pytest.raises(IntegrityError), transaction.atomic():
        FeedbackSlot.objects.create(
            evaluation=evaluation, keyword=slot.keyword, snapshot=slot.snapshot, index=0
        )


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("ndcg@10, precision@5, ap", [("ndcg", 10), ("precision", 5), ("ap", 0)]),
        # trec_eval's names, for people who come from it
        (
            "map, P_10, ndcg_cut_100, recip_rank",
            [("ap", 0), ("precision", 10), ("ndcg", 100), ("rr", 0)],
        ),
        (
            "map_cut_1000, recall_5, set_P, set_recall",
            [("ap", 1000), ("recall", 5), ("precision", 0), ("recall", 0)],
        ),
        ("P@5, map@10, NDCG", [("precision", 5), ("ap", 10), ("ndcg", 0)]),
        ("err_018@3, ndcg_d", [("err_018", 3), ("ndcg_d", 0)]),
        (
            "Rprec, bpref, success_10, 11pt_avg, iprec_at_recall_0.10, num_rel_ret",
            [
                ("rprec", 0),
                ("bpref", 0),
                ("success", 10),
                ("iprec_avg", 0),
                ("iprec_10", 0),
                ("num_rel_ret", 0),
            ],
        ),
        ("rbp_80@20, rbp_80_res@20", [("rbp_80", 20), ("rbp_80_res", 20)]),
        ("gm_map, gm_ap@10, ndcg_cond@10", [("gm_ap", 0), ("gm_ap", 10), ("ndcg_cond", 10)]),
    ],
)
def test_metrics_are_written_as_relevo_or_trec_eval_names_them(written, meant):
    from apps.evaluations.metric_list import parse_metric_list

    assert parse_metric_list(written) == meant


@pytest.mark.parametrize("written", ["ndcg@ten", "@5", "ndcg@0", " , "])
def test_a_metric_list_that_is_not_metric_at_k_is_refused(written):
    from apps.evaluations.metric_list import parse_metric_list

    with pytest.raises(ValueError):
        parse_metric_list(written)

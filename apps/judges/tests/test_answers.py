"""Reading a judge's answer: tolerant of how models write JSON, strict about the scale,
and every result either judged or failed with its reason, never neither."""

import pytest

from apps import engine
from apps.judges.answers import MAX_ANSWER_CHARS, Judged, read_answer

GRADED = engine.SCALES["graded"]
IDS = ["r1", "r2"]


def test_plain_json_gives_each_result_its_grade_and_reason():
    answer = read_answer(
        '{"judgements": [{"id": "r1", "grade": 3, "reason": "Exact match."},'
        ' {"id": "r2", "grade": 0, "reason": "Off topic."}]}',
        IDS,
        GRADED,
    )
    assert answer.judged == {"r1": Judged(3, "Exact match."), "r2": Judged(0, "Off topic.")}
    assert answer.failed == {}


@pytest.mark.parametrize(
    "text",
    [
        'Here you go:\n```json\n{"judgements": [{"id": "r1", "grade": "2", "reason": "ok"},'
        ' {"id": "r2", "grade": 1.0, "reason": "meh"}]}\n```',
        'Sure! [{"id": "r1", "grade": 2, "reason": "ok"}, {"id": "r2", "grade": 1}] Done.',
    ],
)
def test_fences_preamble_bare_lists_and_numbers_as_text_are_read(text):
    answer = read_answer(text, IDS, GRADED)
    assert {k: v.grade for k, v in answer.judged.items()} == {"r1": 2, "r2": 1}


def test_a_grade_off_the_scale_fails_that_result_only():
    answer = read_answer(
        '{"judgements": [{"id": "r1", "grade": 7}, {"id": "r2", "grade": true}]}', IDS, GRADED
    )
    assert answer.judged == {}
    assert answer.failed["r1"] == "grade 7 is not a graded grade (0, 1, 2, 3)"
    assert "True is not a graded grade" in answer.failed["r2"]


def test_a_result_left_out_fails_and_an_unknown_id_is_counted():
    answer = read_answer('[{"id": "r1", "grade": 1}, {"id": "r9", "grade": 2}]', IDS, GRADED)
    assert answer.judged == {"r1": Judged(1, "")}
    assert answer.failed == {"r2": "the answer did not judge this result"}
    assert answer.unknown_ids == 1


def test_a_result_judged_twice_differently_fails():
    answer = read_answer('[{"id": "r1", "grade": 1}, {"id": "r1", "grade": 2}]', ["r1"], GRADED)
    assert answer.failed == {"r1": "the answer judged this result twice, differently"}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the answer was empty"),
        ("I can't help with that.", "the answer held no judgements in JSON: \"I can't help"),
        ('{"judgements": [{"id": "r1", "gra', "the answer held no judgements in JSON"),
        ("[" * 50 + "]" * 50, "the answer held no judgements in JSON"),
        ("x" * (MAX_ANSWER_CHARS + 1), f"longer than {MAX_ANSWER_CHARS} characters"),
    ],
)
def test_an_answer_without_usable_json_fails_every_result_with_what_came_back(text, reason):
    answer = read_answer(text, IDS, GRADED)
    assert answer.judged == {}
    assert set(answer.failed) == set(IDS)
    assert all(reason in why for why in answer.failed.values())


def test_a_long_reason_is_cut():
    answer = read_answer(
        '[{"id": "r1", "grade": 1, "reason": "' + "w" * 900 + '"}]', ["r1"], GRADED
    )
    assert len(answer.judged["r1"].reason) == 300


def test_a_confidence_beside_a_grade_is_kept_when_it_is_one_and_dropped_otherwise():
    answer = read_answer(
        '{"judgements": ['
        '{"id": "r1", "grade": 1, "confidence": 0.25, "reason": "a"},'
        '{"id": "r2", "grade": 1, "confidence": "0.9", "reason": "b"},'
        '{"id": "r3", "grade": 0, "confidence": 7, "reason": "c"},'
        '{"id": "r4", "grade": 0, "confidence": true, "reason": "d"},'
        '{"id": "r5", "grade": 0, "reason": "e"}]}',
        ["r1", "r2", "r3", "r4", "r5"],
        engine.get_scale("binary"),
    )
    confidences = {rid: judged.confidence for rid, judged in answer.judged.items()}
    assert confidences == {"r1": 0.25, "r2": 0.9, "r3": None, "r4": None, "r5": None}
    assert not answer.failed

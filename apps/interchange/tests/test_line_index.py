"""Where each qid's lines are: the first reading of a TREC file, and reading one qid back."""

import io

from apps.interchange.line_index import index_lines, stretches_of
from apps.interchange.problems import Problems, ProblemsByLine


def read_back(text: bytes) -> dict[str, list[tuple[int, bytes]]]:
    stream = io.BytesIO(text)
    return {qid: lines_read(stream, where) for qid, where in index_lines(stream).items()}


def lines_read(stream: io.BytesIO, where) -> list[tuple[int, bytes]]:
    """(line number, line) of a qid's stretches, as the import splits them."""
    lines = []
    for first, block in stretches_of(stream, where):
        pieces = block.split(b"\n")
        lines += [(first + offset, piece) for offset, piece in enumerate(pieces) if piece]
    return lines


def test_a_file_grouped_by_qid_is_one_stretch_per_qid():
    text = b"q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq2 Q0 a 1 1 t\n"

    index = index_lines(io.BytesIO(text))

    assert {qid: list(where.stretches) for qid, where in index.items()} == {
        "q1": [0, 28, 1],
        "q2": [28, 42, 3],
    }
    assert read_back(text) == {
        "q1": [(1, b"q1 Q0 a 1 2 t"), (2, b"q1 Q0 b 2 1 t")],
        "q2": [(3, b"q2 Q0 a 1 1 t")],
    }


def test_interleaved_qids_read_back_with_their_own_line_numbers():
    text = b"q1 x 1\nq2 x 2\nq1 y 3\n\nq1 z 4\nq2 y 5"

    assert read_back(text) == {
        "q1": [(1, b"q1 x 1"), (3, b"q1 y 3"), (5, b"q1 z 4")],
        "q2": [(2, b"q2 x 2"), (6, b"q2 y 5")],
    }
    assert index_lines(io.BytesIO(text))["q1"].first_line == 1


def test_blank_lines_belong_to_no_qid_and_a_byte_order_mark_is_not_part_of_the_first():
    text = "\ufeffq1 a\r\n\n   \nq2 b\r\n".encode()

    assert list(index_lines(io.BytesIO(text))) == ["q1", "q2"]
    assert read_back(text)["q2"] == [(4, b"q2 b\r")]


def test_qids_split_at_unicode_spaces_as_the_reader_splits_them():
    text = "q1\u00a0Q0 a\nq1 Q0 b\nq\u00e9 Q0 c\n".encode() + b"\xff\xfe Q0 d\n"

    assert list(index_lines(io.BytesIO(text))) == ["q1", "q\u00e9", "\ufffd\ufffd"]


def test_a_file_larger_than_a_chunk_keeps_its_line_numbers(monkeypatch):
    monkeypatch.setattr("apps.interchange.line_index.CHUNK_BYTES", 7)
    text = b"".join(f"q{n % 3} Q0 d{n} {n} 1 t\n".encode() for n in range(1, 40))

    back = read_back(text)

    assert [number for number, _ in back["q1"]] == list(range(1, 40, 3))
    assert all(line.split()[2] == f"d{number}".encode() for number, line in back["q1"])


def test_problems_found_out_of_order_are_listed_in_line_order_up_to_the_cap():
    found = ProblemsByLine(limit=3)
    for line in (9, 4, 7, 1, 4, 12):
        found.add(line, f"line {line}")
    problems = Problems()

    found.move_to(problems)

    assert problems.as_list() == ["line 1", "line 4", "line 4", "... and 3 more problems"]

"""Header and parameter lines as a lead types them, on plain strings (no database)."""

from apps.endpoints.name_value_lines import Line, format_lines, keyword_lines, parse_lines


def headers(text: str) -> tuple[list[Line], list[str]]:
    return parse_lines(text, separator=":", field="headers")


def params(text: str) -> tuple[list[Line], list[str]]:
    return parse_lines(text, separator="=", field="params")


def test_a_header_line_splits_at_the_first_colon_so_values_keep_theirs():
    lines, problems = headers("Authorization: Basic user:secret\nX-When: 12:30:00")

    assert problems == []
    assert [(line.name, line.value) for line in lines] == [
        ("Authorization", "Basic user:secret"),
        ("X-When", "12:30:00"),
    ]


def test_names_and_values_are_trimmed_and_an_empty_value_is_kept():
    lines, problems = headers("  Accept :  application/json  \nX-Empty:")

    assert problems == []
    assert [(line.name, line.value) for line in lines] == [
        ("Accept", "application/json"),
        ("X-Empty", ""),
    ]


def test_blank_lines_are_skipped_but_still_counted_in_line_numbers():
    lines, problems = headers("\nAccept: a\n   \nno colon here\n")

    assert [line.number for line in lines] == [2]
    assert problems == ["headers line 4: no ':' (write Name: value)"]


def test_every_bad_line_is_reported_with_its_number():
    _lines, problems = headers("one\nAccept: a\n: no name\ntwo")

    assert problems == [
        "headers line 1: no ':' (write Name: value)",
        "headers line 3: the name before ':' is empty",
        "headers line 4: no ':' (write Name: value)",
    ]


def test_a_parameter_line_splits_at_the_first_equals_sign():
    lines, problems = params("q=#query#\nfilter=type=shoe\nfq=brand:acme")

    assert problems == []
    assert [(line.name, line.value) for line in lines] == [
        ("q", "#query#"),
        ("filter", "type=shoe"),
        ("fq", "brand:acme"),
    ]


def test_a_parameter_line_without_an_equals_sign_names_its_line():
    _lines, problems = params("q=#query#\nsize: 10\n=20")

    assert problems == [
        "params line 2: no '=' (write name=value)",
        "params line 3: the name before '=' is empty",
    ]


def test_windows_line_endings_leave_no_carriage_return_in_values():
    lines, _ = headers("Accept: a\r\nX-Key: b\r\n")

    assert [line.value for line in lines] == ["a", "b"]


def test_stored_pairs_format_back_to_the_lines_that_parse_to_them():
    pairs = [["Authorization", "Basic a:b"], ["Accept", "application/json"]]

    text = format_lines(pairs, separator=":")

    assert text == "Authorization: Basic a:b\nAccept: application/json"
    assert [[line.name, line.value] for line in headers(text)[0]] == pairs
    assert format_lines([["q", "#query#"], ["f", "a=b"]], separator="=") == "q=#query#\nf=a=b"


def test_keywords_are_trimmed_with_blanks_and_repeats_skipped_in_order():
    assert keyword_lines("  red shoes \n\nblue shirt\nred shoes\n hat") == [
        "red shoes",
        "blue shirt",
        "hat",
    ]

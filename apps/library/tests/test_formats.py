"""Judgement lists read and written in TREC qrels, Quepid's CSV, the Search Relevance
Workbench's JSON and the learning-to-rank form: each layout as published, a round trip
through every format, and every refusal named by its place."""

import json

import pytest

from apps.library import formats
from apps.library.formats import (
    FORMATS,
    FormatError,
    read_qrels,
    read_quepid,
    read_ranklib,
    read_srw,
    write_qrels,
    write_qrels_queries,
    write_quepid,
    write_ranklib,
    write_srw,
)

# Grouped by query, so every writer keeps this order and a read gives it back.
AWKWARD = [
    ('red, "dress"', "doc-1", 3),
    ('red, "dress"', "doc-2", 0),
    ("café crème # 2: strong", "SKU-77", 2),
    ("100% wool\u2028scarf", "d/3?x=1", -1),
    ("日本語の検索", "doc-1", 99),
]


def written_and_read(name, judgements):
    spec = FORMATS[name]
    text = spec.write(judgements)
    queries = spec.companion.write(judgements) if spec.companion else None
    return spec.read(text.encode(), queries.encode() if queries else None)


def where_and_messages(read):
    return [(problem.where, problem.message) for problem in read.problems]


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_reads_back_what_it_wrote(name):
    read = written_and_read(name, AWKWARD)

    assert read.problems == []
    assert [judgement.triple() for judgement in read.judgements] == AWKWARD


@pytest.mark.parametrize("name", ["quepid", "srw"])
def test_csv_and_json_keep_doc_ids_with_spaces(name):
    judgements = [("red dress", "my doc 1", 1), ("red dress", "my,doc 2", 2)]

    read = written_and_read(name, judgements)

    assert [judgement.triple() for judgement in read.judgements] == judgements


def test_the_formats_are_listed_by_short_name_with_label_extension_and_media_type():
    assert list(FORMATS) == ["qrels", "quepid", "srw", "ranklib"]
    assert [(spec.extension, spec.media_type) for spec in FORMATS.values()] == [
        ("qrels", "text/plain"),
        ("csv", "text/csv"),
        ("json", "application/json"),
        ("txt", "text/plain"),
    ]
    assert all(spec.name == name and spec.label for name, spec in FORMATS.items())
    assert FORMATS["qrels"].companion.extension == "tsv"
    assert [name for name, spec in FORMATS.items() if spec.companion] == ["qrels"]


SMALL = [("red dress", "d1", 3), ("shoes", "d2", 0), ("red dress", "d3", 1)]


def test_qrels_are_numbered_in_first_seen_order_with_a_queries_file():
    assert write_qrels(SMALL) == "1 0 d1 3\n2 0 d2 0\n1 0 d3 1\n"
    assert write_qrels_queries(SMALL) == "1\tred dress\n2\tshoes\n"


def test_quepid_csv_has_its_header_and_rfc_4180_quoting():
    judgements = [('red, "dress"', "d1", 3), ("=shoes", "d2", 0)]

    assert write_quepid(judgements) == ('query,docid,rating\n"red, ""dress""",d1,3\n=shoes,d2,0\n')


def test_srw_body_has_the_workbench_keys_and_ratings_as_strings():
    text = write_srw(SMALL, name="Shoes", description="from Relevo")
    body = json.loads(text)

    assert text == (
        "{\n"
        '  "name": "Shoes",\n'
        '  "description": "from Relevo",\n'
        '  "type": "IMPORT_JUDGMENT",\n'
        '  "judgmentRatings": [\n'
        '    {"query": "red dress", "ratings": [{"docId": "d1", "rating": "3"}, '
        '{"docId": "d3", "rating": "1"}]},\n'
        '    {"query": "shoes", "ratings": [{"docId": "d2", "rating": "0"}]}\n'
        "  ]\n"
        "}\n"
    )
    assert list(body) == ["name", "description", "type", "judgmentRatings"]
    assert body == {
        "name": "Shoes",
        "description": "from Relevo",
        "type": "IMPORT_JUDGMENT",
        "judgmentRatings": [
            {
                "query": "red dress",
                "ratings": [{"docId": "d1", "rating": "3"}, {"docId": "d3", "rating": "1"}],
            },
            {"query": "shoes", "ratings": [{"docId": "d2", "rating": "0"}]},
        ],
    }


def test_ranklib_names_each_query_in_a_header_and_groups_its_lines():
    assert write_ranklib(SMALL) == (
        "# qid:1: red dress\n"
        "# qid:2: shoes\n"
        "3\tqid:1 #\td1\tred dress\n"
        "1\tqid:1 #\td3\tred dress\n"
        "0\tqid:2 #\td2\tshoes\n"
    )


def test_a_qid_the_queries_file_does_not_name_is_its_own_query_text():
    read = read_qrels(b"301 Q0 d1 2\n302 0 d2 1\n", b"301\tpink shoes\n")

    assert [judgement.triple() for judgement in read.judgements] == [
        ("pink shoes", "d1", 2),
        ("302", "d2", 1),
    ]
    assert [judgement.where for judgement in read.judgements] == ["line 1", "line 2"]


def test_quepid_columns_may_come_in_any_order_and_case():
    read = read_quepid("\ufeffRating,Query,DocID\r\n2,red dress,d1\r\n\r\n0, shoes ,d2\r\n")

    assert [judgement.triple() for judgement in read.judgements] == [
        ("red dress", "d1", 2),
        ("shoes", "d2", 0),
    ]
    assert read.judgements[1].where == "line 4"


def test_srw_ratings_may_be_numbers_or_numeric_strings_with_zero_fractions():
    body = {
        "name": "x",
        "type": "IMPORT_JUDGMENT",
        "judgmentRatings": [
            {
                "query": "red dress",
                "ratings": [
                    {"docId": "a", "rating": "3.000"},
                    {"docId": "b", "rating": 2},
                    {"docId": "c", "rating": 1.0},
                ],
            }
        ],
    }

    read = read_srw(json.dumps(body))

    assert [judgement.triple() for judgement in read.judgements] == [
        ("red dress", "a", 3),
        ("red dress", "b", 2),
        ("red dress", "c", 1),
    ]
    assert read.judgements[2].where == "judgmentRatings[0].ratings[2]"


def test_ranklib_header_gives_the_query_and_a_lines_own_text_only_when_no_header_does():
    text = (
        "# judgements of the film search, with each film's title\n"
        "# qid:1: space opera\n"
        "#\n"
        "4\tqid:1 #\tm101\tStar Voyage\n"
        "3 qid:1 1:0.5 2:12 # m102 Return of the Comet\n"
        "\n"
        "2 qid:7 # m900 quiet westerns\n"
    )

    read = read_ranklib(text)

    assert read.problems == []
    assert [judgement.triple() for judgement in read.judgements] == [
        ("space opera", "m101", 4),
        ("space opera", "m102", 3),
        ("quiet westerns", "m900", 2),
    ]


def test_a_grade_that_is_not_a_whole_number_in_range_is_refused_on_its_line():
    read = read_qrels("1 0 d1 x\n1 0 d2 100\n1 0 d3 2.5\n1 0 d4 -9\n")

    assert where_and_messages(read) == [
        ("line 1", "grade 'x' is not a number"),
        ("line 2", "grade '100' is outside -9 to 99"),
        (
            "line 3",
            "grade '2.5' is not a whole number: "
            "Relevo's grades are whole numbers on the evaluation's scale",
        ),
    ]
    assert [judgement.triple() for judgement in read.judgements] == [("1", "d4", -9)]


def test_a_fractional_srw_rating_is_refused_naming_the_query_and_doc_id():
    body = {
        "judgmentRatings": [
            {
                "query": "red dress",
                "ratings": [
                    {"docId": "P100", "rating": "3.000"},
                    {"docId": "P200", "rating": "0.700"},
                ],
            }
        ]
    }

    read = read_srw(json.dumps(body).encode())

    assert where_and_messages(read) == [
        (
            "judgmentRatings[0].ratings[1]",
            "rating '0.700' of docId 'P200' for query 'red dress' is not a whole "
            "number: Relevo's grades are whole numbers on the evaluation's scale",
        )
    ]


def test_srw_keys_other_than_the_formats_are_refused_by_name():
    body = {"judgmentRatings": [{"query": "q", "ratings": [{"docid": "a", "rating": "1"}]}]}

    read = read_srw(json.dumps(body))

    assert where_and_messages(read) == [
        ("judgmentRatings[0].ratings[0]", "unknown key 'docid' (a rating holds docId and rating)"),
        ("judgmentRatings[0].ratings[0]", "docId missing"),
    ]


def test_srw_json_nested_deeper_than_the_format_is_refused():
    read = read_srw('{"judgmentRatings": [{"query": "q", "ratings": [{"docId": [[1]]}]}]}')

    assert where_and_messages(read) == [("body", "nested deeper than 5 levels")]


def test_srw_text_that_is_not_valid_unicode_is_refused_where_it_is():
    read = read_srw(
        '{"judgmentRatings": [{"query": "q", "ratings": [{"docId": "a\\udfff", '
        '"rating": 1}, {"docId": "b\\u0000", "rating": 1}]}]}'
    )

    assert where_and_messages(read) == [
        (
            "judgmentRatings[0].ratings[0]",
            "doc id 'a\\udfff' holds a lone surrogate U+DFFF, which is not valid Unicode",
        ),
        ("judgmentRatings[0].ratings[1]", "doc id 'b\\x00' holds the control character U+0000"),
    ]


def test_srw_text_that_is_not_json_names_its_line():
    read = read_srw('{"judgmentRatings": [\n  {"query": "q",}\n]}')

    assert [problem.where for problem in read.problems] == ["line 2"]
    assert read.problems[0].message.startswith("not JSON")


def test_a_quepid_file_without_the_rating_column_is_refused():
    read = read_quepid("query,docid\nred dress,d1\n")

    assert where_and_messages(read) == [("line 1", "missing column 'rating'")]
    assert read.judgements == []


def test_a_quepid_file_with_another_column_is_refused_naming_it():
    read = read_quepid("query,docid,rating,Notes\nred dress,d1,2,good\n")

    assert where_and_messages(read) == [
        ("line 1", "column 'Notes' is not one of query, docid, rating")
    ]


def test_broken_csv_quoting_is_refused_on_its_line():
    read = read_quepid('query,docid,rating\n"red" dress,d1,2\n')

    assert [problem.where for problem in read.problems] == ["line 2"]
    assert read.problems[0].message.startswith("not readable as CSV")


def test_an_empty_query_is_refused():
    read = read_quepid("query,docid,rating\n  ,d1,2\n")

    assert where_and_messages(read) == [("line 2", "query is empty")]


def test_a_doc_id_longer_than_500_characters_is_refused():
    read = read_qrels(f"1 0 {'x' * 501} 1\n1 0 {'y' * 500} 1\n")

    assert where_and_messages(read) == [("line 1", "doc id is longer than 500 characters (501)")]
    assert len(read.judgements) == 1


def test_a_query_and_doc_id_judged_twice_names_both_lines():
    read = read_quepid("query,docid,rating\nred dress,d1,2\nshoes,d1,1\nred dress,d1,0\n")

    assert where_and_messages(read) == [
        ("line 4", "query 'red dress' and doc id 'd1' judged twice (also line 2)")
    ]


def test_a_pair_judged_twice_in_srw_names_both_places():
    body = {
        "judgmentRatings": [
            {"query": "q", "ratings": [{"docId": "a", "rating": 1}]},
            {"query": "q", "ratings": [{"docId": "a", "rating": 2}]},
        ]
    }

    read = read_srw(json.dumps(body))

    assert where_and_messages(read) == [
        (
            "judgmentRatings[1].ratings[0]",
            "query 'q' and doc id 'a' judged twice (also judgmentRatings[0].ratings[0])",
        )
    ]


def test_a_ranklib_line_without_query_text_and_no_header_is_refused():
    read = read_ranklib("# qid:1: space opera\n4 qid:1 # m101\n3 qid:2 # m102\n")

    assert where_and_messages(read) == [
        (
            "line 3",
            "no query text for qid '2': none after the doc id, and no "
            "`# qid:2: query text` line names it",
        )
    ]
    assert [judgement.triple() for judgement in read.judgements] == [("space opera", "m101", 4)]


def test_a_ranklib_line_without_a_doc_id_is_refused():
    read = read_ranklib("# qid:1: space opera\n4 qid:1\n4 opera # m101\n")

    assert where_and_messages(read) == [
        ("line 2", "no doc id: expected `# docid` after the qid"),
        ("line 3", "expected `grade qid:N # docid query text`"),
    ]


@pytest.mark.parametrize("name", list(FORMATS))
def test_bytes_that_are_not_utf_8_name_their_lines_and_nothing_is_read(name):
    data = "line one é\n".encode() + b"\xff\xfe bad\nfine\n\x80\n"

    read = FORMATS[name].read(data)

    assert where_and_messages(read) == [
        ("line 2", "not UTF-8 text"),
        ("line 4", "not UTF-8 text"),
    ]
    assert read.judgements == []


def test_a_queries_file_that_is_not_utf_8_is_named_as_the_queries_file():
    read = read_qrels(b"1 0 d1 1\n", b"1\tpink\n2\t\xe9\n")

    assert where_and_messages(read) == [("queries line 2", "not UTF-8 text")]
    assert read.judgements == []


def test_writing_qrels_refuses_a_doc_id_with_whitespace_naming_it():
    with pytest.raises(FormatError) as refused:
        write_qrels([("red dress", "d1", 1), ("red dress", "my doc", 2)])

    assert str(refused.value) == (
        "judgement 2: doc id 'my doc' holds whitespace, which a qrels line cannot hold"
    )
    with pytest.raises(FormatError):
        write_qrels_queries([("red dress", "my doc", 2)])
    with pytest.raises(FormatError):
        write_ranklib([("red dress", "my\u00a0doc", 2)])


def test_no_format_holds_a_tab_in_a_query():
    # A tab would split a queries-file or RankLib line; refusing it everywhere keeps a
    # list read from any format writable in every other.
    for name, spec in FORMATS.items():
        with pytest.raises(FormatError) as refused:
            spec.write([("red\tdress", "d1", 1)])
        assert "query 'red\\tdress' holds a tab" in str(refused.value), name

    read = read_qrels("1 0 d1 1\n", "1\tred\tdress\n")

    assert where_and_messages(read) == [("queries line 1", "query 'red\\tdress' holds a tab")]


def test_writers_refuse_what_their_readers_would_read_differently_or_refuse():
    with pytest.raises(FormatError) as refused:
        write_quepid(
            [
                (" red dress", "d1", 1),
                ("red dress", "d1", 100),
                ("shoes", "d1", 1),
                ("shoes", "d1", 2),
                ("", "d2", True),
            ]
        )

    assert refused.value.problems == [
        formats.ListProblem("judgement 1", "query ' red dress' starts or ends with whitespace"),
        formats.ListProblem("judgement 2", "grade 100 is outside -9 to 99"),
        formats.ListProblem(
            "judgement 4", "query 'shoes' and doc id 'd1' given twice (also judgement 3)"
        ),
        formats.ListProblem("judgement 5", "query is empty"),
        formats.ListProblem("judgement 5", "grade True is not a whole number"),
    ]


def test_only_the_first_200_problems_are_listed_and_the_rest_counted():
    read = read_qrels("".join(f"{n} 0 d{n} x\n" for n in range(250)))

    assert len(read.problems) == 200
    assert read.problems[-1].where == "line 200"
    assert read.more_problems == 50
    assert read.messages()[-1] == "... and 50 more problems"


def test_a_list_stops_at_the_most_judgements_it_may_hold(monkeypatch):
    monkeypatch.setattr(formats, "MAX_JUDGEMENTS", 2)

    read = read_ranklib("1 qid:1 # a q\n1 qid:1 # b q\n1 qid:1 # c q\n1 qid:1 # d q\n")

    assert len(read.judgements) == 2
    assert where_and_messages(read) == [
        ("line 3", "more than 2 judgements: the file is read no further")
    ]


def test_refused_lines_count_toward_the_most_a_file_is_read(monkeypatch):
    monkeypatch.setattr(formats, "MAX_JUDGEMENTS", 3)

    read = read_qrels("\n\nbad\n1 0 d1 1\n\nbad\nbad\n1 0 d2 1\n")

    assert where_and_messages(read)[-1] == (
        "line 7",
        "more than 3 judgements: the file is read no further",
    )
    assert [problem.where for problem in read.problems] == ["line 3", "line 6", "line 7"]


def test_an_srw_body_with_more_values_than_its_judgements_need_is_refused_unparsed(
    monkeypatch,
):
    monkeypatch.setattr(formats, "MAX_JUDGEMENTS", 2)
    filler = ",".join(["0"] * 20)

    read = read_srw(f'{{"name": [{filler}], "judgmentRatings": []}}')

    assert where_and_messages(read) == [("body", "holds more values than 2 judgements need")]


def test_grades_are_ascii_digits_and_srw_ratings_finite_numbers():
    body = {
        "judgmentRatings": [
            {
                "query": "q",
                "ratings": [
                    {"docId": "a", "rating": True},
                    {"docId": "b", "rating": "1e1"},
                    {"docId": "c", "rating": "\u0663"},
                ],
            }
        ]
    }

    read = read_srw(json.dumps(body))
    infinite = read_srw(
        '{"judgmentRatings": [{"query": "q", "ratings": [{"docId": "a", "rating": 1e400}]}]}'
    )

    assert [message for _, message in where_and_messages(read)] == [
        "rating 'True' of docId 'a' for query 'q' is not a number",
        "rating '1e1' of docId 'b' for query 'q' is not a number",
        "rating '\u0663' of docId 'c' for query 'q' is not a number",
    ]
    assert where_and_messages(infinite) == [
        ("judgmentRatings[0].ratings[0]", "rating 'inf' of docId 'a' for query 'q' is not a number")
    ]


def test_a_queries_file_goes_only_with_qrels():
    read = FORMATS["quepid"].read(b"query,docid,rating\n", b"1\tq\n")

    assert where_and_messages(read) == [
        ("queries", "a Quepid judgement CSV list has no queries file")
    ]


def test_an_empty_list_is_written_and_read_back_in_every_format():
    for spec in FORMATS.values():
        read = spec.read(spec.write([]).encode())
        assert (read.judgements, read.problems) == ([], [])

"""The response mapper: path forms, templates, optional and required fields, and the
messages a lead reads when a mapper does not fit a response."""

import pytest

from apps.search import Document, InvalidMapper, Mapper, MappingError, map_response, validate_mapper
from apps.search.paths import Missing, PathSyntaxError, parse_path, parse_template

ES_SPEC = {
    "results": "hits.hits[*]",
    "id": "_id",
    "name": "_source.title",
    "image": "_source.img",
    "attributes": {
        "brand": "_source.brand",
        "price": "_source.price.amount",
        "label": "{_source.brand} {_source.title} ({_source.size})",
    },
}

ES_RESPONSE = {
    "took": 4,
    "hits": {
        "total": 2,
        "hits": [
            {
                "_id": "a1",
                "_source": {
                    "title": "Trail shoe",
                    "img": "https://img.example/a1.jpg",
                    "brand": "Acme",
                    "size": "42",
                    "price": {"amount": 89.5, "currency": "EUR"},
                },
            },
            {"_id": "b2", "_source": {"title": "Rain hat", "brand": "Brolly"}},
        ],
    },
}


def test_an_elasticsearch_response_maps_to_documents_in_order():
    assert map_response(ES_SPEC, ES_RESPONSE) == [
        Document(
            doc_id="a1",
            name="Trail shoe",
            image="https://img.example/a1.jpg",
            attributes={"brand": "Acme", "price": 89.5, "label": "Acme Trail shoe (42)"},
        ),
        Document(
            doc_id="b2",
            name="Rain hat",
            image="",
            attributes={"brand": "Brolly", "label": "Brolly Rain hat ()"},
        ),
    ]


def test_optional_fields_that_find_nothing_or_null_are_left_out():
    spec = {**ES_SPEC, "attributes": {"price": "_source.price.amount", "color": "_source.color"}}
    response = {"hits": {"hits": [{"_id": 1, "_source": {"title": "x", "img": None}}]}}
    [document] = map_response(spec, response)
    assert document.image == ""
    assert document.attributes == {}


def test_a_spec_without_image_or_attributes_is_enough():
    spec = {"results": "[*]", "id": "id", "name": "name"}
    assert map_response(spec, [{"id": 7, "name": "Seven"}]) == [Document("7", "Seven")]


@pytest.mark.parametrize(
    ("results", "payload"),
    [
        ("[*]", [{"id": 1, "n": "a"}]),
        ("items[*]", {"items": [{"id": 1, "n": "a"}]}),
        ("data.search.items[*]", {"data": {"search": {"items": [{"id": 1, "n": "a"}]}}}),
        ('["odd.key"][*]', {"odd.key": [{"id": 1, "n": "a"}]}),
        ("pages[1].items[*]", {"pages": [{"items": []}, {"items": [{"id": 1, "n": "a"}]}]}),
        ("[0][*]", [[{"id": 1, "n": "a"}]]),
    ],
)
def test_the_results_wildcard_may_sit_at_the_root_or_under_any_path(results, payload):
    spec = {"results": results, "id": "id", "name": "n"}
    assert map_response(spec, payload) == [Document("1", "a")]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("name", "plain"),
        ("nested.deeper.value", "deep"),
        ("tags[0]", "first"),
        ("tags[-1]", "last"),
        ("variants[1].sku", "SKU-2"),
        ('["my key"]', "spaced"),
        ("['my key']", "spaced"),
        ('["dotted.key"]', "dotted"),
        ('nested["with [brackets]"]', "bracketed"),
        ('["say \\"hi\\""]', "quoted"),
        ("grid[1][0]", "c"),
        ("unicode.título", "acentos"),
    ],
)
def test_every_path_form_finds_its_value(path, expected):
    item = {
        "id": 1,
        "name": "plain",
        "nested": {"deeper": {"value": "deep"}, "with [brackets]": "bracketed"},
        "tags": ["first", "middle", "last"],
        "variants": [{"sku": "SKU-1"}, {"sku": "SKU-2"}],
        "my key": "spaced",
        "dotted.key": "dotted",
        'say "hi"': "quoted",
        "grid": [["a", "b"], ["c", "d"]],
        "unicode": {"título": "acentos"},
    }
    [document] = map_response({"results": "[*]", "id": "id", "name": path}, [item])
    assert document.name == expected


def test_attributes_keep_json_values_while_templates_give_text():
    spec = {
        "results": "[*]",
        "id": "id",
        "name": "title",
        "attributes": {
            "price": "price",
            "in_stock": "stock.available",
            "sizes": "sizes",
            "facts": "facts",
            "summary": "{title}: {price} EUR, in stock {stock.available}, sizes {sizes}",
        },
    }
    item = {
        "id": 1,
        "title": "Shoe",
        "price": 19.99,
        "stock": {"available": True},
        "sizes": [40, 41],
        "facts": {"a": 1},
    }
    [document] = map_response(spec, [item])
    assert document.attributes == {
        "price": 19.99,
        "in_stock": True,
        "sizes": [40, 41],
        "facts": {"a": 1},
        "summary": "Shoe: 19.99 EUR, in stock true, sizes [40,41]",
    }


def test_a_template_can_be_the_name_and_escapes_braces():
    spec = {"results": "[*]", "id": "id", "name": "{{{brand}}} {title}"}
    [document] = map_response(spec, [{"id": 1, "brand": "Acme", "title": "Shoe"}])
    assert document.name == "{Acme} Shoe"


def test_a_template_placeholder_can_use_quoted_keys_with_braces():
    spec = {"results": "[*]", "id": "id", "name": 'Size {["size {eu}"]}'}
    [document] = map_response(spec, [{"id": 1, "size {eu}": 42}])
    assert document.name == "Size 42"


def test_a_template_whose_placeholders_all_find_nothing_finds_nothing():
    spec = {"results": "[*]", "id": "id", "name": "n", "attributes": {"label": "{a} / {b}"}}
    [document] = map_response(spec, [{"id": 1, "n": "x"}])
    assert "label" not in document.attributes


@pytest.mark.parametrize(
    ("raw_id", "expected"),
    [
        (42, "42"),
        ("42", "42"),
        (0, "0"),
        (12345678901234567890, "12345678901234567890"),
        (1.5, "1.5"),
        ("ä-1", "ä-1"),
    ],
)
def test_ids_are_turned_into_strings(raw_id, expected):
    [document] = map_response({"results": "[*]", "id": "id", "name": "n"}, [{"id": raw_id, "n": 1}])
    assert document.doc_id == expected
    assert document.name == "1"


def test_duplicate_ids_in_one_response_are_reported_with_their_positions():
    payload = [{"id": 1, "n": "a"}, {"id": "1", "n": "b"}, {"id": 2, "n": "c"}, {"id": 2, "n": "d"}]
    with pytest.raises(MappingError) as caught:
        map_response({"results": "[*]", "id": "id", "name": "n"}, payload)
    assert str(caught.value) == (
        "duplicate ids in one response: '1' (results 1, 2), '2' (results 3, 4)"
    )


def test_an_empty_result_list_maps_to_no_documents():
    assert map_response(ES_SPEC, {"hits": {"hits": []}}) == []


def test_a_missing_results_key_names_the_path_and_the_keys_that_are_there():
    with pytest.raises(MappingError) as caught:
        map_response(ES_SPEC, {"took": 1, "timed_out": False, "data": {}})
    assert str(caught.value) == (
        "results path 'hits.hits[*]': 'hits' is missing (top-level keys: took, timed_out, data)"
    )
    assert caught.value.path == "hits.hits[*]"


def test_a_missing_nested_results_key_lists_the_keys_of_its_parent():
    with pytest.raises(MappingError, match=r"'hits.hits' is missing \(keys of 'hits': total\)"):
        map_response(ES_SPEC, {"hits": {"total": 0}})


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"hits": {"hits": {"a": 1}}}, "'hits.hits' is an object, not a list (keys: a)"),
        ({"hits": {"hits": "none"}}, "'hits.hits' is text, not a list"),
        ({"hits": {"hits": None}}, "'hits.hits' is null, not a list"),
        ({"hits": [1, 2]}, "'hits' is a list, not an object"),
        ([1, 2], "the response is a list, not an object"),
    ],
)
def test_a_non_list_at_the_wildcard_says_what_was_found(payload, message):
    with pytest.raises(MappingError) as caught:
        map_response(ES_SPEC, payload)
    assert str(caught.value) == f"results path 'hits.hits[*]': {message}"


def test_a_root_wildcard_over_an_object_says_so():
    with pytest.raises(MappingError, match=r"the response is an object, not a list"):
        map_response({"results": "[*]", "id": "id", "name": "n"}, {"items": []})


def test_a_result_without_its_id_is_named_by_number_and_raw_position():
    payload = {
        "hits": {
            "hits": [
                {"_id": "a", "_source": {"title": "a"}},
                {"_id": "b", "_source": {"title": "b"}},
                {"_index": "products", "_source": {"title": "c"}},
            ]
        }
    }
    with pytest.raises(MappingError) as caught:
        map_response(ES_SPEC, payload)
    assert str(caught.value) == (
        "result 3 (hits.hits[2]): id path '_id' found nothing "
        "('_id' is missing (result keys: _index, _source))"
    )
    assert caught.value.result == 3
    assert caught.value.path == "_id"


def test_a_missing_required_name_is_reported_with_the_step_that_failed():
    payload = {"hits": {"hits": [{"_id": 1, "_source": {"name": "x"}}]}}
    with pytest.raises(
        MappingError,
        match=r"result 1 \(hits.hits\[0\]\): name path "
        r"'_source.title' found nothing \('_source.title' is missing",
    ):
        map_response(ES_SPEC, payload)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"id": None, "n": "a"}, "id path 'id' found nothing (it is null)"),
        ({"id": "", "n": "a"}, "id path 'id' found an empty string"),
        ({"id": True, "n": "a"}, "id path 'id' found a boolean, expected text or a number"),
        ({"id": {"v": 1}, "n": "a"}, "id path 'id' found an object, expected text or a number"),
        ({"id": 1, "n": ["a"]}, "name path 'n' found a list, expected text or a number"),
        (
            {"id": 1, "n": "a", "img": {"url": "x"}},
            "image path 'img' found an object, expected text or a number",
        ),
    ],
)
def test_a_required_or_image_field_of_the_wrong_kind_is_an_error(item, message):
    spec = {"results": "[*]", "id": "id", "name": "n", "image": "img"}
    with pytest.raises(MappingError) as caught:
        map_response(spec, [item])
    assert str(caught.value) == f"result 1 ([0]): {message}"


def test_an_index_out_of_range_and_a_step_into_text_are_explained():
    spec = {"results": "[*]", "id": "ids[3]", "name": "n.first"}
    with pytest.raises(MappingError, match=r"'ids\[3\]' is out of range \(the list has 2 items\)"):
        map_response(spec, [{"ids": [1, 2], "n": "x"}])
    spec = {"results": "[*]", "id": "id", "name": "n.first"}
    with pytest.raises(MappingError, match=r"'n' is text, not an object"):
        map_response(spec, [{"id": 1, "n": "x"}])


def test_a_compiled_mapper_is_reused_across_responses():
    mapper = Mapper.compile(ES_SPEC)
    assert len(mapper.apply(ES_RESPONSE)) == 2
    assert map_response(mapper, {"hits": {"hits": []}}) == []


# --- validating a spec --------------------------------------------------------------


def test_a_good_spec_has_no_problems():
    assert validate_mapper(ES_SPEC) == []


@pytest.mark.parametrize(
    ("spec", "problems"),
    [
        ("hits", ["mapper: must be an object, not text"]),
        ({}, ["mapper.results: required", "mapper.id: required", "mapper.name: required"]),
        (
            {"results": "hits.hits", "id": "a", "name": "b"},
            ["mapper.results: needs exactly one [*] (found 0)"],
        ),
        (
            {"results": "a[*].b[*]", "id": "a", "name": "b"},
            ["mapper.results: needs exactly one [*] (found 2)"],
        ),
        (
            {"results": "a[*].b", "id": "a", "name": "b"},
            ["mapper.results: [*] must be the last step (the list of results)"],
        ),
        ({"results": "[*]", "id": "", "name": "b"}, ["mapper.id: required"]),
        (
            {"results": "[*]", "id": 5, "name": "b"},
            ["mapper.id: must be a path or template (text), not a number"],
        ),
        (
            {"results": "[*]", "id": "a", "name": "tags[*]"},
            ["mapper.name: [*] is only allowed in mapper.results"],
        ),
        (
            {"results": "[*]", "id": "a", "name": "b", "attributes": {"price": "_source.price[0"}},
            ["mapper.attributes.price: unclosed ["],
        ),
        (
            {"results": "[*]", "id": "a", "name": "b", "attributes": {"label": "{brand"}},
            ["mapper.attributes.label: unclosed {"],
        ),
        (
            {"results": "[*]", "id": "a", "name": "b", "attributes": {"x": ""}},
            ["mapper.attributes.x: empty path"],
        ),
        (
            {"results": "[*]", "id": "a", "name": "b", "attributes": ["x"]},
            ["mapper.attributes: must be an object, not a list"],
        ),
        (
            {"results": "[*]", "id": "a", "name": "b", "score": "s"},
            ["mapper.score: unknown field (expected results, id, name, image, attributes)"],
        ),
    ],
)
def test_spec_problems_are_listed_with_their_location(spec, problems):
    assert validate_mapper(spec) == problems
    if isinstance(spec, dict):
        with pytest.raises(InvalidMapper) as caught:
            Mapper.compile(spec)
        assert caught.value.problems == problems


def test_a_blank_image_in_a_form_means_no_image():
    assert validate_mapper({"results": "[*]", "id": "a", "name": "b", "image": ""}) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty path"),
        ("a[0", "unclosed ["),
        ('a["b', "unclosed quote"),
        ('a["b"', "unclosed ["),
        ("a]", "unmatched ] at character 2"),
        ("a..b", "empty key at character 3"),
        (".a", "empty key at character 1"),
        ("a.", "path ends with '.'"),
        ("a[]", "empty [] at character 2"),
        ("a[b]", '[b] must be a number, * or a quoted key like ["b"]'),
        ("a[0]b", "expected '.' or '[' after ']' at character 5"),
    ],
)
def test_path_syntax_errors_say_what_is_wrong(text, message):
    with pytest.raises(PathSyntaxError) as caught:
        parse_path(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{a", "unclosed {"),
        ("a}", "unmatched } at character 2"),
        ("{}", "empty {} at character 1"),
        ("{a[}", "{a[}: unclosed ["),
        ("{{literal}}", "template has no {path} placeholder"),
    ],
)
def test_template_syntax_errors_say_what_is_wrong(text, message):
    with pytest.raises(PathSyntaxError) as caught:
        parse_template(text)
    assert str(caught.value) == message


def test_a_mapper_is_data_and_never_runs_code():
    # A path that looks like code is just a key that is not there.
    spec = {"results": "[*]", "id": "__import__('os').system('true')", "name": "n"}
    assert validate_mapper(spec) == []
    found = parse_path("__class__.__mro__").lookup({"x": 1})
    assert isinstance(found, Missing)

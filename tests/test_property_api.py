"""Property: every API request gets a success, or a 4xx whose JSON body carries a message
in the API's error shape (apps/api/errors.py); never a 5xx.

Two parts, both through the whole Django stack (middleware, DRF, the services) with a
real team token, on the suite's database (SQLite locally; PostgreSQL in CI, where int4
and smallint columns overflow):

- requests schemathesis generates from the app's own OpenAPI schema (/api/schema/),
  valid and invalid ones, a bounded and reproducible number per operation;
- hand-picked hostile bodies on every POST, PUT and PATCH operation of the schema: JSON nested
  5,000 deep, a lone surrogate, NUL, integers past int4/smallint/int64 in every field (at
  every depth), strings of 1 MB, bodies of 3 MB, NaN, wrong types, wrong content types;
  for multipart operations the same in every form field and file, and 1,001 fields;
- hostile query parameters on every GET that takes any, ids past every integer column in
  every path, and broken Authorization headers.

Each hand-picked request starts from the same rows (rolled back after it), and a failure
lists every request that broke the property, grouped by cause, with the head of the
server's traceback.
"""

from typing import Any

import pytest
import schemathesis
from django.test import Client
from hypothesis import HealthCheck, settings

from apps.accounts.api_tokens import api_token_create
from apps.endpoints.tests.factories import make_model
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_finish_now
from apps.scoring.services import recompute_marked
from config.wsgi import application
from tests.factories import make_evaluation, make_grader, make_team, slots_of
from tests.hostile import (
    HOSTILE_INTS,
    HOSTILE_JSON_VALUES,
    MEGABYTE,
    Failure,
    Raw,
    ServerErrors,
    deep_array,
    deep_object,
    encode,
    leaf_paths,
    multipart,
    path_text,
    problems_with_answer,
    render,
    replaced,
    report,
    rolled_back,
)

EXAMPLES_PER_OPERATION = 20

schema = schemathesis.openapi.from_wsgi(
    "/api/schema/", application, headers={"Accept": "application/vnd.oai.openapi+json"}
)


@pytest.fixture
def world() -> dict[str, Any]:
    """A team with a token, evaluations pending, active (partly graded) and finished, a
    search model; another team's evaluation and model."""
    team = make_team("Property team", owner="owner@property.test")
    _token, text = api_token_create(team=team, name="property")
    grader = make_grader(team, "grader@property.test")
    pending = make_evaluation(team=team, start=False, keywords={"hat": 2, "scarf": 2})
    active = make_evaluation(team=team, strategy=3, keywords={"red shoes": 3, "blue shirt": 2})
    for slot in slots_of(active)[::3]:
        slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=2, reason="fits")
    finished = make_evaluation(team=team, keywords={"boots": 2})
    slot_judge(slot_id=slots_of(finished)[0].id, giver=Giver.recorded(None, "vendor-1"), grade=1)
    recompute_marked()
    evaluation_finish_now(evaluation=finished)
    other_team = make_team("Other property team")
    theirs = make_evaluation(team=other_team, start=False)
    our_model, their_model = make_model(team), make_model(other_team)
    headers = {"Authorization": f"Bearer {text}"}
    client = Client(headers=headers, raise_request_exception=False)
    client.get("/api/v1/evaluations/")  # the token's first use is marked; later ones read
    return {
        "headers": headers,
        "client": client,
        "pending": pending.id,
        "evaluation_ids": [pending.id, active.id, finished.id, theirs.id],
        "model_ids": [our_model.id, their_model.id],
        "team": team,
    }


@pytest.fixture
def server_errors():
    with ServerErrors() as recorder:
        yield recorder


def check(
    status: int, content_type: str, content: bytes, request: str, server_errors: ServerErrors
) -> None:
    found = problems_with_answer(status, content_type, content)
    assert not found, f"{request}\n-> {status}: {'; '.join(found)}\n" + (
        server_errors.head() if status >= 500 else ""
    )


# --- Generated requests -------------------------------------------------------------------


def aim(case: Any, world: dict[str, Any]) -> None:
    """Point most generated ids at objects that exist (ours in each state, another
    team's); every fifth id (and any id that is not an int) is kept as generated."""
    parameters = case.path_parameters or {}
    for name in ("evaluation_id", "model_id"):
        generated = parameters.get(name)
        if isinstance(generated, int) and not isinstance(generated, bool) and generated % 5:
            ids = world[name + "s"]
            parameters[name] = ids[generated % len(ids)]
    listed = (case.query or {}).get("evaluations")
    if isinstance(listed, str) and len(listed) % 4:
        ids = world["evaluation_ids"]
        case.query["evaluations"] = f"{ids[len(listed) % 3]},{ids[(len(listed) + 1) % 4]}"


# Transactional, as in production: what a request queues after its commit (a start's
# fetching, a recompute) runs too.
@pytest.mark.django_db(transaction=True)
@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_a_generated_request_gets_a_success_or_a_4xx_with_a_message(case, world, server_errors):
    aim(case, world)
    response = case.call(headers=world["headers"])
    content_type = (response.headers.get("content-type") or [""])[0]
    check(
        response.status_code,
        content_type,
        response.content,
        case.as_curl_command(headers=world["headers"]),
        server_errors,
    )


# --- Hand-picked hostile bodies ----------------------------------------------------------


def openapi_document() -> dict[str, Any]:
    """The schema as schemathesis loaded it from the app (at import, for the ids)."""
    return schema.raw_schema


def writing_operations() -> list[tuple[str, str, list[str]]]:
    """(method, path, request content types) of every POST, PUT and PATCH of the schema."""
    found = []
    for path, methods in openapi_document()["paths"].items():
        for method, operation in methods.items():
            if method in ("post", "put", "patch"):
                content = operation.get("requestBody", {}).get("content", {})
                found.append((method.upper(), path, sorted(content)))
    return found


WRITING = writing_operations()

# A valid body for each JSON operation, with every field the schema lists (a field the
# schema gains later is added with a placeholder by `with_every_field`).
CUSTOM_LEVELS = {
    "lowest": 0,
    "highest": 2,
    "relevant_from": 1,
    "labels": ["no", "partly", "yes"],
    "keys": ["1", "2", "3"],
}
EVALUATION_BODY = {
    "name": "Hostile",
    "description": "d",
    "scale": "custom",
    "scale_levels": CUSTOM_LEVELS,
    "strategy": 3,
    "profile": "trec",
    "show_position": True,
    "scoring_guidelines": "g",
    "reuse": "none",
    "auto_restart": False,
    "zero_without_results": True,
    "transformers": {"binary": {"0": 0, "1": 1, "2": 1}},
    "tags": ["hostile"],
    "model": None,
    "metrics": [{"metric": "ndcg", "k": 10}, {"metric": "ap", "k": None}],
    "keywords": ["red shoes", "blue shirt"],
}
DOCUMENT_BODY = {
    "format": "relevo.evaluation/1",
    "name": "Hostile import",
    "description": "d",
    "scale": "custom",
    "scale_levels": CUSTOM_LEVELS,
    "strategy": 3,
    "profile": "trec",
    "show_position": True,
    "zero_without_results": True,
    "scoring_guidelines": "g",
    "tags": ["hostile"],
    "transformers": {"binary": {"0": 0, "1": 1, "2": 1}},
    "metrics": [{"metric": "ndcg", "k": 10, "value": 0.5}, {"metric": "ap", "k": None}],
    "keywords": [
        {
            "keyword": "red shoes",
            "snapshots": [
                {
                    "position": 1,
                    "doc_id": "d1",
                    "name": "Red shoe",
                    "image": "https://example.test/1.png",
                    "attributes": {"price": 10, "tags": ["a"]},
                    "grades": [2, {"grader": "vendor-1", "grade": 1, "reason": "ok"}, None],
                    "decision": {"grade": 2, "by": "owner@property.test", "reason": "fits"},
                    "value": 0.5,
                },
                {"position": 2, "doc_id": "d2", "grades": [0]},
            ],
            "unretrieved": [{"doc_id": "d9", "grade": 2}],
            "metrics": [{"metric": "ndcg", "k": 10, "value": 0.5}],
        }
    ],
    "id": 1,
    "status": "finished",
    "progress": 1.0,
    "created_at": "2024-01-01T00:00:00Z",
    "finished_at": None,
}
JSON_BODIES = {
    "/api/v1/evaluations/": EVALUATION_BODY,
    "/api/v1/evaluations/{evaluation_id}/": {
        k: v for k, v in EVALUATION_BODY.items() if k != "keywords"
    },
    "/api/v1/evaluations/{evaluation_id}/clone/": {"name": "Hostile copy"},
    "/api/v1/evaluations/import/": DOCUMENT_BODY,
}
RUN = b"1 Q0 d1 1 2.5 run\n1 Q0 d2 2 1.5 run\n2 Q0 d3 1 0.5 run\n"
QRELS = b"1 0 d1 2\n1 0 d9 1\n2 0 d3 0\n"
TOPICS = b"1\tred shoes\n2\tblue shirt\n"
TREC_FIELDS = {
    "name": "Hostile TREC",
    "scale": "graded",
    "metrics": "ndcg@10,precision@5",
    "profile": "trec",
    "strategy": "1",
    "keep_rank": "true",
    "relevant_from": "1",
    "zero_without_results": "false",
}
TREC_FILES = {"run": RUN, "qrels": QRELS, "topics": TOPICS}
LIST_FIELDS = {"format": "quepid", "name": "Hostile list", "scale": "graded", "made_by": "people"}
LIST_FILES = {"judgements": b"query,docid,rating\nred shoes,d1,2\nred shoes,d2,0\n"}
# What every multipart field gets (bytes: a field need not be UTF-8).
HOSTILE_FORM_VALUES: list[tuple[str, bytes]] = [
    *((label, str(value).encode()) for label, value in HOSTILE_INTS.items()),
    ("lone surrogate", encode("\udfff")),
    ("NUL", b"a\x00b"),
    ("not UTF-8", b"\xff\xfe"),
    ("1 MB string", b"x" * MEGABYTE),
    ("3 MB string", b"x" * 3 * MEGABYTE),
    ("empty", b""),
    ("NaN", b"NaN"),
    ("JSON list", b"[1]"),
    ("deep", deep_array().encode()),
]
# What every uploaded file gets.
HOSTILE_FILES: list[tuple[str, bytes]] = [
    ("deep JSON array", deep_array().encode()),
    ("deep JSON object", deep_object().encode()),
    ("lone surrogate", b'{"name": "\\udfff"}'),
    ("NUL", b"1 Q0 d\x001 1 1 run\n"),
    ("not UTF-8", b"\xff\xfe\x00junk"),
    ("BOM", b"\xef\xbb\xbf" + RUN),
    ("CRLF", RUN.replace(b"\n", b"\r\n")),
    ("rank 2**31", b"1 Q0 d1 2147483648 1 run\n"),
    ("grade 2**15", b"1 0 d1 32768\n"),
    ("grade 10**30", b"1 0 d1 " + str(10**30).encode() + b"\n"),
    ("1 MB line", b"1 Q0 " + b"x" * MEGABYTE + b" 1 1 run\n"),
    ("empty", b""),
]


# Bodies sent as what they are not, or with a charset no codec has.
CONTENT_TYPES = [
    "application/json; charset=utf-16",
    "application/json; charset=nope",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "multipart/form-data; boundary=x",
    "",
]


def with_every_field(body: dict[str, Any], request_schema: dict[str, Any]) -> dict[str, Any]:
    """The body with a placeholder for any top-level field the schema lists and it lacks."""
    placeholders = {
        "string": "x",
        "integer": 1,
        "number": 1.0,
        "boolean": False,
        "array": [],
        "object": {},
    }
    body = dict(body)
    for name, field in request_schema.get("properties", {}).items():
        if name not in body and not field.get("readOnly"):
            body[name] = placeholders.get(field.get("type", "string"), "x")
    return body


def request_schema(document: dict[str, Any], method: str, path: str, content_type: str) -> dict:
    operation = document["paths"][path][method.lower()]
    found = operation["requestBody"]["content"][content_type]["schema"]
    if "$ref" in found:
        found = document["components"]["schemas"][found["$ref"].rsplit("/", 1)[1]]
    return found


def url_of(path: str, world: dict[str, Any]) -> str:
    return path.replace("{evaluation_id}", str(world["pending"])).replace(
        "{model_id}", str(world["model_ids"][0])
    )


def json_variants(body: dict[str, Any]) -> list[tuple[str, bytes]]:
    """(label, body) of every hostile JSON body: the whole body nested 5,000 deep or of
    the wrong type, then every field (at every depth) replaced by every hostile value."""
    variants = [
        ("body: deep array", deep_array().encode()),
        ("body: deep object", deep_object().encode()),
        ("body: lone surrogate string", b'"\\udfff"'),
        ("body: list", b"[1, 2]"),
        ("body: number", b"2147483648"),
        ("body: null", b"null"),
        ("body: NaN", b"NaN"),
        ("body: empty", b""),
        ("body: not UTF-8", b'{"name": "\xff\xfe"}'),
        ("body: BOM", b"\xef\xbb\xbf" + render(body).encode()),
        (
            "body: invalid lone surrogate bytes",
            encode(render({**body, "name": "\udfff"}, ensure_ascii=False)),
        ),
        ("body: 1 MB of whitespace", b" " * MEGABYTE + render(body).encode()),
        ("body: 3 MB", render({**body, "description": "x" * 3 * MEGABYTE}).encode()),
    ]
    for path in leaf_paths(body):
        for label, text in HOSTILE_JSON_VALUES:
            variants.append(
                (f"{path_text(path)} = {label}", render(replaced(body, path, Raw(text))).encode())
            )
    return variants


def send_json(client: Client, method: str, url: str, data: bytes) -> Any:
    return client.generic(method, url, data=data, content_type="application/json")


def send_multipart(client: Client, method: str, url: str, fields: dict, files: dict) -> Any:
    content_type, body = multipart(fields, files)
    return client.generic(method, url, data=body, content_type=content_type)


def failures_of(
    requests: list[tuple[str, Any]], method: str, url: str, server_errors: ServerErrors
) -> list[Failure]:
    """Send each (label, send) request, each from the same rows (its changes are rolled
    back after it); the failures, each with its status and the head of the server's
    traceback."""
    failures = []
    for label, send in requests:
        seen = len(server_errors.tracebacks)
        with rolled_back():
            response = send()
        found = problems_with_answer(
            response.status_code, response.get("Content-Type", ""), response.content
        )
        if found:
            head = server_errors.head(6) if len(server_errors.tracebacks) > seen else ""
            failures.append(Failure(f"{method} {url} [{label}]", "; ".join(found), head))
    return failures


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "content_types"),
    WRITING,
    ids=[f"{method} {path}" for method, path, _ in WRITING],
)
def test_hostile_bodies_get_a_success_or_a_4xx_with_a_message(
    method, path, content_types, world, server_errors
):
    document = openapi_document()
    client, url = world["client"], url_of(path, world)
    requests: list[tuple[str, Any]] = []
    if "application/json" in content_types or not content_types:
        body = JSON_BODIES.get(path, {})
        if "application/json" in content_types:
            body = with_every_field(
                body, request_schema(document, method, path, "application/json")
            )
        for label, data in json_variants(body):
            requests.append((label, lambda data=data: send_json(client, method, url, data)))
    for content_type in CONTENT_TYPES:
        data = render(JSON_BODIES.get(path, {})).encode()
        requests.append(
            (
                f"Content-Type: {content_type!r}",
                lambda content_type=content_type, data=data: client.generic(
                    method, url, data=data, content_type=content_type
                ),
            )
        )
    if "multipart/form-data" in content_types:
        if path.endswith("/import-trec/"):
            fields, files = TREC_FIELDS, TREC_FILES
        elif path.endswith("/library/lists/"):
            fields, files = LIST_FIELDS, LIST_FILES
        else:
            fields, files = {}, {"file": render(DOCUMENT_BODY).encode()}
        for name in fields:
            for label, value in HOSTILE_FORM_VALUES:
                changed = {**fields, name: value}
                requests.append(
                    (
                        f"form {name} = {label}",
                        lambda changed=changed: send_multipart(
                            client,
                            method,
                            url,
                            changed,
                            {k: (k + ".txt", v) for k, v in files.items()},
                        ),
                    )
                )
        many = {**fields, **{f"extra{i}": b"1" for i in range(1_001)}}
        requests.append(
            (
                "1,001 form fields",
                lambda: send_multipart(
                    client, method, url, many, {k: (k + ".txt", v) for k, v in files.items()}
                ),
            )
        )
        for name in files:
            for label, data in HOSTILE_FILES:
                changed_files = {
                    k: (k + ".txt", data if k == name else v) for k, v in files.items()
                }
                requests.append(
                    (
                        f"file {name} = {label}",
                        lambda changed_files=changed_files: send_multipart(
                            client, method, url, fields, changed_files
                        ),
                    )
                )
    failures = failures_of(requests, method, url, server_errors)
    assert not failures, report(failures, len(requests))


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "body"), [(path, body) for path, body in JSON_BODIES.items()], ids=list(JSON_BODIES)
)
def test_the_base_bodies_are_valid(path, body, world, server_errors):
    """The hostile bodies are each one change away from a body the API accepts, so they
    reach as far into the app as a request can."""
    method = "PATCH" if path.endswith("{evaluation_id}/") else "POST"
    response = send_json(world["client"], method, url_of(path, world), render(body).encode())
    assert response.status_code in (200, 201), response.content[:2000]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/evaluations/abc/",
        "/api/v1/evaluations/-1/start/",
        "/api/v1/evaluations/1.5/keywords/",
        "/api/v1/models/null/",
        "/api/v1/no-such-thing",
    ],
)
def test_a_path_no_route_matches_gets_a_json_404(url, world, server_errors):
    """Under /api/v1/ every answer is the API's JSON, a path that matches no route too
    (an id that is not a whole number): a client parses one error shape."""
    response = world["client"].get(url)
    assert response.status_code == 404
    check(404, response.get("Content-Type", ""), response.content, f"GET {url}", server_errors)


@pytest.mark.django_db
def test_the_base_trec_upload_is_valid(world, server_errors):
    files = {name: (name + ".txt", data) for name, data in TREC_FILES.items()}
    response = send_multipart(
        world["client"], "POST", "/api/v1/evaluations/import-trec/", TREC_FIELDS, files
    )
    assert response.status_code == 201, response.content[:2000]


@pytest.mark.django_db
def test_the_base_judgement_list_upload_is_valid(world, server_errors):
    files = {name: (name + ".csv", data) for name, data in LIST_FILES.items()}
    response = send_multipart(world["client"], "POST", "/api/v1/library/lists/", LIST_FIELDS, files)
    assert response.status_code == 201, response.content[:2000]


# --- Hostile query parameters, ids and headers ------------------------------------------

HOSTILE_QUERY_VALUES: list[tuple[str, str]] = [
    *((label, str(value)) for label, value in HOSTILE_INTS.items()),
    ("-1", "-1"),
    ("NUL", "a%00b"),
    ("lone surrogate (its UTF-8 bytes)", "%ED%BF%BF"),
    ("not UTF-8", "%FF%FE"),
    ("1 MB", "x" * MEGABYTE),
    ("empty", ""),
    ("float", "1.5"),
    ("ids past int4 and int8", f"{2**31},{2**63},{10**30}"),
    ("an id twice", "{id},{id}"),
    ("list of junk", ",,%00,-1,abc"),
]
HOSTILE_IDS = [2**31, 2**63, 10**30, 0]


def reading_operations() -> list[tuple[str, list[str]]]:
    """(path, query parameter names) of every GET of the schema that takes any."""
    found = []
    for path, methods in openapi_document()["paths"].items():
        operation = methods.get("get")
        if operation:
            names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "query"]
            if names:
                found.append((path, names))
    return found


READING = reading_operations()


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "names"), READING, ids=[path for path, _ in READING])
def test_hostile_query_parameters_get_a_success_or_a_4xx_with_a_message(
    path, names, world, server_errors
):
    client, url = world["client"], url_of(path, world)
    own = world["evaluation_ids"][0]
    requests = []
    for name in names:
        for label, value in HOSTILE_QUERY_VALUES:
            query = f"{name}={value.replace('{id}', str(own))}"
            requests.append(
                (f"?{name} = {label}", lambda query=query: client.get(f"{url}?{query}"))
            )
    failures = failures_of(requests, "GET", url, server_errors)
    assert not failures, report(failures, len(requests))


@pytest.mark.django_db
def test_ids_past_every_integer_column_get_a_success_or_a_4xx_with_a_message(world, server_errors):
    client = world["client"]
    requests = []
    for path, methods in openapi_document()["paths"].items():
        if "{" not in path:
            continue
        for method in methods:
            for value in HOSTILE_IDS:
                url = path.replace("{evaluation_id}", str(value)).replace("{model_id}", str(value))
                requests.append(
                    (
                        f"{method.upper()} {url}",
                        lambda method=method, url=url: client.generic(
                            method.upper(), url, data=b"{}", content_type="application/json"
                        ),
                    )
                )
    failures = failures_of(requests, "", "", server_errors)
    assert not failures, report(failures, len(requests))


HOSTILE_AUTHORIZATION = [
    ("no scheme", "rlv_000000000000_x"),
    ("scheme only", "Bearer"),
    ("other scheme", "Basic dXNlcjpwYXNz"),
    ("unknown token", "Bearer rlv_0123456789ab_nope"),
    ("NUL", "Bearer rlv_0123456789ab_no\x00pe"),
    ("NUL in the prefix", "Bearer rlv_0123\x0056789ab_nope"),
    # A WSGI server hands the header's bytes over as Latin-1 (PEP 3333): UTF-8 text
    # arrives as its bytes' Latin-1 characters.
    ("UTF-8 bytes", "Bearer rlv_0123456789ab_\u00e9\u20ac".encode().decode("latin-1")),
    ("UTF-8 bytes in the prefix", "Bearer rlv_\u20ac23456789ab_x".encode().decode("latin-1")),
    ("1 MB", "Bearer rlv_0123456789ab_" + "x" * MEGABYTE),
    ("many parts", "Bearer " + "_".join(["rlv"] * 10_000)),
]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "url"),
    [("GET", "/api/v1/evaluations/"), ("POST", "/api/v1/evaluations/import/")],
)
def test_hostile_authorization_headers_get_a_401_with_a_message(method, url, server_errors):
    requests = [
        (
            label,
            lambda header=header: Client(raise_request_exception=False).generic(
                method, url, data=b"{}", content_type="application/json", HTTP_AUTHORIZATION=header
            ),
        )
        for label, header in HOSTILE_AUTHORIZATION
    ]
    failures = failures_of(requests, method, url, server_errors)
    assert not failures, report(failures, len(requests))

"""A judge that sees images: a result's image is read by Relevo through the address-safety
layer (or from a data: URL), checked to be a raster of at most 5 MB, and sent to the model
beside the text (OpenAI image_url parts, Anthropic image blocks); the prompt says so, the
cache key holds the image's hash, and a calibration with and one without images stand
side by side, only the first counting for the team's rule."""

import base64
import hashlib
import json
import re

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.models import FeedbackSlot
from apps.judges import calibration, controls, images, runs
from apps.judges.asking import ask, judgement_key
from apps.judges.gold_sets import gold_set_create
from apps.judges.images import MAX_IMAGE_BYTES, image_read, result_shown
from apps.judges.models import CalibrationStatus
from apps.judges.prompting import IMAGES_SAID, JudgeTask, Prompt, Result, default_prompt
from apps.judges.services import judge_create
from apps.judges.team_rule import refusal
from apps.judging.judgements import Giver, slot_judge
from tests.factories import client_for, make_evaluation, slots_of
from tests.image_server import ImageServer

from .fake_provider import FakeProvider, Reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
OTHER_PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 64
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 32
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 16
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


@pytest.fixture(autouse=True)
def nothing_kept_between_tests(settings):
    settings.SEARCH_ALLOW_PRIVATE_ADDRESSES = True  # the image server is on this machine
    images._kept.clear()


@pytest.fixture
def image_server():
    files = {
        "/shoe.png": (PNG, "image/png"),
        "/other.png": (OTHER_PNG, "image/png"),
        "/shoe.webp": (WEBP, "image/webp"),
        "/page.svg": (SVG, "image/svg+xml"),
        "/lying.png": (b"<html>not an image</html>", "image/png"),
        "/huge.jpg": (JPEG + b"\x00" * MAX_IMAGE_BYTES, "image/jpeg"),
    }
    with ImageServer(files) as server:
        yield server


# --- Reading an image ------------------------------------------------------------------


def test_an_image_is_read_once_and_known_by_its_first_bytes(image_server):
    first = image_read(image_server.url("/shoe.png"))
    again = image_read(image_server.url("/shoe.png"))
    webp = image_read(image_server.url("/shoe.webp"))

    assert (first.media_type, first.data, first.sha256) == (
        "image/png",
        PNG,
        hashlib.sha256(PNG).hexdigest(),
    )
    assert again == first and image_server.hits.count("/shoe.png") == 1
    assert webp.media_type == "image/webp"


def test_a_data_url_raster_is_read_without_a_request():
    shown = image_read("data:image/jpeg;base64," + base64.b64encode(JPEG).decode())

    assert (shown.media_type, shown.data) == ("image/jpeg", JPEG)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/page.svg", "not a PNG, JPEG, GIF or WebP image"),
        ("/lying.png", "not a PNG, JPEG, GIF or WebP image"),
        ("/huge.jpg", "larger than 5,000,000 bytes"),
        ("/missing.png", "its address answered 404"),
    ],
)
def test_what_is_not_a_small_raster_is_not_shown_and_says_why(image_server, path, why):
    assert image_read(image_server.url(path)) == why


@pytest.mark.parametrize(
    ("reference", "why"),
    [
        ("data:image/png,notbase64", "a data: URL of an image must be base64"),
        ("data:image/png;base64,%%%", "its data: URL is not valid base64"),
        ("ftp://example.test/a.png", "must be an http:// or https:// URL with a host"),
        ("http://x/" + "a" * 3000, "its address is longer than 2,000 characters"),
    ],
)
def test_references_that_cannot_be_read_say_why(reference, why):
    assert why in image_read(reference)


def test_a_private_address_is_refused_unless_the_search_system_may_use_them(image_server, settings):
    settings.SEARCH_ALLOW_PRIVATE_ADDRESSES = False

    why = image_read(image_server.url("/shoe.png"))

    assert why.startswith("its address may not be called")
    assert image_server.hits == []


# --- Asking with images ----------------------------------------------------------------


def seeing_judge(team, server, protocol="openai"):
    return judge_create(
        team=team,
        name="Eyes",
        protocol=protocol,
        base_url=server.openai_url if protocol == "openai" else server.anthropic_url,
        model_name="vision-test",
        api_key="not-a-real-key-images",
        sees_images=True,
    )


def task_with(team_image_server, scale, *paths):
    results = [
        result_shown(
            f"r{n}",
            f"Shoe {n}",
            {},
            team_image_server.url(path) if path else "",
            sees_images=True,
        )
        for n, path in enumerate(paths, start=1)
    ]
    return JudgeTask(keyword="red shoes", results=results, scale=scale)


ANSWER = json.dumps(
    {
        "judgements": [
            {"id": "r1", "grade": 3, "confidence": 0.9, "reason": "red shoe"},
            {"id": "r2", "grade": 0, "confidence": 0.9, "reason": "no image"},
        ]
    }
)


def test_an_openai_compatible_model_gets_the_images_as_image_url_parts(team_a, image_server):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2})
    with FakeProvider() as server:
        server.script(Reply.openai(ANSWER))
        judge = seeing_judge(team_a, server)
        task = task_with(image_server, evaluation.grading_scale, "/shoe.png", "/page.svg")

        asked = ask(judge, default_prompt(task.scale), task)

        content = server.requests[0].body["messages"][1]["content"]
    assert asked.judged["r1"].grade == 3
    text, label, image = content
    assert IMAGES_SAID in text["text"]
    shown = json.loads(re.search(r"RESULTS BEGIN\n(.*)\nRESULTS END", text["text"], re.S)[1])
    assert shown["results"][0]["image"] == "attached after the results"
    assert shown["results"][1]["image"] == "not shown (not a PNG, JPEG, GIF or WebP image)"
    assert label == {"type": "text", "text": "Image of result r1:"}
    assert image == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
    }


def test_an_anthropic_model_gets_the_images_as_image_blocks(team_a, image_server):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2})
    with FakeProvider() as server:
        server.script(Reply.anthropic(ANSWER))
        judge = seeing_judge(team_a, server, protocol="anthropic")
        task = task_with(image_server, evaluation.grading_scale, "/shoe.png", "")

        ask(judge, default_prompt(task.scale), task)

        content = server.requests[0].body["messages"][0]["content"]
    assert content[2] == {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(PNG).decode(),
        },
    }


def test_a_judge_that_does_not_see_images_sends_text_as_before(team_a, image_server):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2})
    plain = result_shown("r1", "Shoe", {}, image_server.url("/shoe.png"), sees_images=False)

    with FakeProvider() as server:
        server.script(Reply.openai(ANSWER))
        judge = seeing_judge(team_a, server)
        task = JudgeTask("red shoes", [plain], evaluation.grading_scale)
        ask(judge, default_prompt(task.scale), task)
        content = server.requests[0].body["messages"][1]["content"]

    assert isinstance(content, str) and IMAGES_SAID not in content
    assert image_server.hits == []


def test_the_cache_key_holds_the_images_hash_and_text_only_keys_are_unchanged(team_a, image_server):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2})
    with FakeProvider() as server:
        judge = seeing_judge(team_a, server)
    context = JudgeTask("red shoes", [], evaluation.grading_scale)
    prompt = Prompt("default-graded-v2")

    def key(result):
        return judgement_key(judge, prompt, context, result)

    text_only = Result("", "Shoe", {})
    with_shoe = result_shown("", "Shoe", {}, image_server.url("/shoe.png"), sees_images=True)
    with_other = result_shown("", "Shoe", {}, image_server.url("/other.png"), sees_images=True)

    assert len({key(text_only), key(with_shoe), key(with_other)}) == 3
    assert key(text_only) == key(result_shown("", "Shoe", {}, "", sees_images=True))


# --- Calibrating with and without images -------------------------------------------------


def test_a_calibration_with_and_one_without_images_stand_side_by_side(team_a, owner, image_server):
    evaluation = make_evaluation(team=team_a, strategy=3, keywords={"red shoes": 2, "hats": 2})
    for slot in slots_of(evaluation):
        slot.snapshot.image = image_server.url("/shoe.png")
        slot.snapshot.save(update_fields=["image"])
        grader = ("ann", "bob", "cy")[slot.index]
        grade = 3 if slot.snapshot.position == 1 else 0
        slot_judge(slot_id=slot.id, giver=Giver.recorded(None, grader), grade=grade)
    gold = gold_set_create(team=team_a, name="Gold", baseline=evaluation.id, keywords=2, seed=1)
    calibration.gate_set(team=team_a, min_alpha=0.5)

    def right_only_with_images(seen):
        """People's grade when the images are shown (Result 1: 3, Result 2: 0), the
        opposite without them."""
        content = seen.body["messages"][1]["content"]
        saw = isinstance(content, list)
        user = content[0]["text"] if saw else content
        shown = re.findall(r'"id": "(r\d+)",\s*"title": "Result (\d)"', user)
        judgements = [
            {
                "id": rid,
                "grade": (3 if number == "1" else 0) if saw else (0 if number == "1" else 3),
                "confidence": 1,
                "reason": "r",
            }
            for rid, number in shown
        ]
        return Reply.openai(json.dumps({"judgements": judgements}))

    with FakeProvider() as server:
        server.respond_with(right_only_with_images)
        judge = seeing_judge(team_a, server)
        runs = []
        for with_images in (None, False):
            run = calibration.calibration_create(
                gold_set=gold, judge=judge, with_images=with_images
            )
            calibration.calibration_execute(run_id=run.id)
            runs.append(run)
        page = client_for(owner).get(f"/judges/calibration/{gold.id}/").content.decode()

    seeing, blind = (run.__class__.objects.get(id=run.id) for run in runs)
    assert (seeing.with_images, blind.with_images) == (True, False)
    assert seeing.status == blind.status == CalibrationStatus.FINISHED
    assert seeing.alpha == pytest.approx(1.0) and blind.alpha < 0
    assert re.findall(r'data-testid="calibration-images">([^<]*)<', page) == [
        "shown",
        "not shown",
    ]
    assert gold.items.first().image == image_server.url("/shoe.png")
    # The calibration with images speaks for the judge that sees them, not for it blind.
    assert refusal(judge, seeing.prompt_version) == ""
    judge.sees_images = False
    assert f"its best is {blind.alpha:.2f}" in refusal(judge, blind.prompt_version)


def test_a_seeing_judges_run_shows_each_result_with_its_image(team_a, image_server):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2})
    for slot in slots_of(evaluation):
        slot.snapshot.image = image_server.url("/shoe.png" if slot.snapshot.position == 1 else "/x")
        slot.snapshot.save(update_fields=["image"])

    with FakeProvider() as server:
        server.script(Reply.openai(ANSWER))
        judge = seeing_judge(team_a, server)
        run = controls.run_start(judge=judge, evaluation=evaluation)
        runs.run_step(run_id=run.id)
        content = server.requests[0].body["messages"][1]["content"]

    assert [part["type"] for part in content] == ["text", "text", "image_url"]
    assert '"image": "not shown (its address answered 404)"' in content[0]["text"]
    graded = FeedbackSlot.objects.filter(evaluation_id=evaluation.id, grade__isnull=False)
    assert sorted(graded.values_list("snapshot__position", "grade")) == [(1, 3), (2, 0)]


def test_the_api_sets_a_judge_to_see_images_and_says_so(team_a):
    _token, text = api_token_create(team=team_a, name="eyes")
    api = Client(headers={"Authorization": f"Bearer {text}"})
    given = {
        "name": "Eyes",
        "protocol": "openai",
        "base_url": "https://api.openai.com/v1",
        "model_name": "gpt-4o",
    }

    made = api.post(
        "/api/v1/judges/", {**given, "sees_images": True}, content_type="application/json"
    )
    bad = api.post(
        "/api/v1/judges/",
        {**given, "name": "B", "sees_images": "yes"},
        content_type="application/json",
    )

    assert made.status_code == 201 and made.json()["sees_images"] is True
    assert bad.status_code == 400
    assert bad.json()["errors"][0] == {"field": "sees_images", "message": "must be true or false"}

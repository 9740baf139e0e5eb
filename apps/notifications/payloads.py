"""The body a webhook receives, in its chosen format. Pure: no Django.

Relevo's own format carries everything a program needs:

    {"event": "evaluation.finished", "delivery": 17, "sent_at": "2026-…Z",
     "team": "Search", "summary": "…one sentence…", "url": "https://…", "data": {…}}

The Slack-compatible one is what an incoming webhook of Slack (or Mattermost, Rocket.Chat,
Microsoft Teams' Slack-compatible connectors) shows as a message: {"text": …}, the
summary with its link in Slack's <url|label> markup, and the event's name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# A body is at most this long: the data of an event is a summary, never a result list.
MAX_BODY_BYTES = 64_000


@dataclass(frozen=True)
class Announcement:
    """One event as the team is told it: a sentence, a link, the figures behind it."""

    event: str
    team: str
    summary: str
    url: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def relevo_body(announcement: Announcement, *, delivery: int, sent_at: str) -> bytes:
    body = {
        "event": announcement.event,
        "delivery": delivery,
        "sent_at": sent_at,
        "team": announcement.team,
        "summary": announcement.summary,
        "url": announcement.url,
        "data": announcement.data,
    }
    return _bounded(body)


def slack_body(announcement: Announcement, *, delivery: int, sent_at: str) -> bytes:
    text = _slack_escape(announcement.summary)
    if announcement.url:
        text = f"{text} <{announcement.url}|Open in Relevo>"
    body = {"text": f"*Relevo · {_slack_escape(announcement.team)}*: {text}"}
    return _bounded(body)


FORMATS = {"relevo": relevo_body, "slack": slack_body}


def body_for(format_name: str, announcement: Announcement, *, delivery: int, sent_at: str) -> bytes:
    return FORMATS[format_name](announcement, delivery=delivery, sent_at=sent_at)


def _slack_escape(text: str) -> str:
    """Slack's three control characters in plain text (its message formatting rules)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _bounded(body: dict[str, Any]) -> bytes:
    encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if len(encoded) > MAX_BODY_BYTES:
        raise ValueError(f"a webhook body is at most {MAX_BODY_BYTES} bytes")
    return encoded

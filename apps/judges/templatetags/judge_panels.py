"""How a run's calls read when one ask is several calls: a panel's members' or a sampled
judge's samples (each a call of its own, JudgeRun.calls counting every one)."""

from django import template

from apps.judges.models import Judge, JudgeRun

register = template.Library()


def calls_per_ask(judge: Judge) -> tuple[int, str]:
    """How many calls one ask makes, and what makes them ("3 members", "3 samples", "5
    calls of its 3 members" when members sample); (1, "") for a judge that asks once.
    Read from the judge as it is now."""
    if judge.is_panel:
        members = judge.members()
        calls = sum(member.samples for member in members)
        if calls == len(members):
            return calls, f"{len(members)} members"
        return calls, f"{calls} calls of its {len(members)} members"
    if judge.samples > 1:
        return judge.samples, f"{judge.samples} samples"
    return 1, ""


@register.filter
def calls_shown(run: JudgeRun) -> str:
    """30 calls (10 asks × 3 members); "12 calls" for a judge that asks once. A count
    that does not divide (a member's call held back by the rate limits, or members
    changed since) says what an ask makes instead."""
    calls = run.calls
    counted = f"{calls} call{'' if calls == 1 else 's'}"
    per_ask, what = calls_per_ask(run.judge)
    if per_ask == 1 or calls == 0:
        return counted
    if calls % per_ask == 0:
        asks = calls // per_ask
        return f"{counted} ({asks} ask{'' if asks == 1 else 's'} × {what})"
    return f"{counted} ({what} an ask)"

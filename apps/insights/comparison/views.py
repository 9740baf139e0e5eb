"""The lead's comparison of evaluations: the page and its CSV downloads.

GET ?e=1&e=2[&e=3...]: the first evaluation is the baseline, every other is compared with
it. The page also takes vs (which evaluation the per-keyword table shows), sort, page, and
people=1 (compare only the common keywords no AI judge or click model graded on any side).
One keyword's result lists side by side: the same e's and k=<the keyword's text>.
"""

import io
from dataclasses import dataclass
from urllib.parse import urlencode

from django.http import HttpResponse
from django.shortcuts import render

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput
from apps.core.typed import parse_id

from .naming import short_names
from .selectors import (
    Comparison,
    PairComparison,
    comparison_build,
    parse_evaluation_ids,
)
from .side_by_side import keyword_side_by_side, parse_keyword_text
from .table import (
    keyword_page,
    parse_sort,
    sort_choices,
    write_keywords_csv,
    write_summary_csv,
)

CSV_PARTS = {"keywords": write_keywords_csv, "summary": write_summary_csv}


def _refused(request: TeamRequest, error: InvalidInput) -> HttpResponse:
    return render(
        request, "insights/comparison_error.html", {"problems": error.problems}, status=400
    )


def _chosen_pair(comparison: Comparison, text: str) -> PairComparison:
    """The pair the per-keyword table shows: ?vs=<evaluation id>, else the first."""
    if not text.strip():
        return comparison.pairs[0]
    chosen = parse_id(text)
    pair = comparison.pair_with(chosen) if chosen is not None else None
    if pair is None:
        ids = ", ".join(str(p.candidate.id) for p in comparison.pairs)
        raise InvalidInput([f"vs: {text[:40]!r} is not one of the compared evaluations ({ids})"])
    return pair


def _query(ids: list[int], **more: object) -> str:
    return "?" + urlencode([("e", i) for i in ids] + [(k, v) for k, v in more.items() if v])


def _people_only(request: TeamRequest) -> bool:
    """people=1: compare on people's grades alone; InvalidInput names `people`."""
    given = request.GET.get("people", "")
    if given not in ("", "0", "1"):
        raise InvalidInput([f"people: {given[:40]!r} is not 1 (people's grades only) or 0"])
    return given == "1"


@dataclass(frozen=True)
class SortLink:
    query: str  # what a click on the column asks for: this order, or reversed
    state: str  # "ascending", "descending" or "" (the table is not sorted by it)


def _sort_links(
    ids: list[int], pair: PairComparison, sort: str, vs: int | None, people: str | None
) -> dict:
    links = {}
    for choice in sort_choices(pair):
        state = "ascending" if sort == choice else "descending" if sort == f"-{choice}" else ""
        next_sort = f"-{choice}" if state == "ascending" else choice
        links[choice] = SortLink(_query(ids, vs=vs, sort=next_sort, people=people), state)
    return links


@lead_required
def evaluation_comparison(request: TeamRequest) -> HttpResponse:
    team_id = request.membership.team_id
    try:
        ids = parse_evaluation_ids(request.GET.getlist("e"), field="e")
        people = "1" if _people_only(request) else None
        comparison = comparison_build(
            team_id=team_id, evaluation_ids=ids, people_only=people is not None
        )
        pair = _chosen_pair(comparison, request.GET.get("vs", ""))
        sort = parse_sort(request.GET.get("sort", ""), pair)
    except InvalidInput as error:
        return _refused(request, error)
    page, rows = keyword_page(comparison, pair, sort=sort, page_number=request.GET.get("page", 1))
    vs = pair.candidate.id if len(comparison.pairs) > 1 else None
    sort_links = _sort_links(ids, pair, sort, vs, people)
    baseline_links = [
        (e, _query([e.id, *[i for i in ids if i != e.id]], people=people))
        for e in comparison.evaluations[1:]
    ]
    # Names alike ("..., week 2", "..., week 3") are told apart in the narrow headers.
    names = short_names([e.name for e in comparison.evaluations])
    short = {e.id: name for e, name in zip(comparison.evaluations, names, strict=True)}
    return render(
        request,
        "insights/comparison.html",
        {
            "comparison": comparison,
            "pair": pair,
            "page": page,
            "rows": rows,
            "sort": sort,
            "sort_links": sort_links,
            "metric_sort_links": [(m, sort_links[m.key]) for m in pair.metrics],
            "column_count": 3 * len(pair.metrics) + 4,
            "page_query": _query(ids, vs=vs, sort=sort, people=people),
            "pair_links": [
                (p, _query(ids, vs=p.candidate.id, sort=sort, people=people))
                for p in comparison.pairs
            ],
            "baseline_links": baseline_links,
            "base_short": short[comparison.baseline.id],
            "pair_short": short[pair.candidate.id],
            "pair_sides": [(p, short[p.candidate.id]) for p in comparison.pairs],
            "export_query": _query(ids, people=people),
            "keyword_query": _query(ids),
            "people_query": _query(ids, vs=vs, people="1"),
            "all_query": _query(ids, vs=vs),
        },
    )


@lead_required
def evaluation_comparison_keyword(request: TeamRequest) -> HttpResponse:
    """One keyword's result lists side by side, with its metric values on top."""
    try:
        ids = parse_evaluation_ids(request.GET.getlist("e"), field="e")
        text = parse_keyword_text(request.GET.get("k", ""), field="k")
    except InvalidInput as error:
        return _refused(request, error)
    keyword = keyword_side_by_side(
        team_id=request.membership.team_id, evaluation_ids=ids, text=text
    )
    return render(
        request,
        "insights/comparison_keyword.html",
        {"keyword": keyword, "comparison_query": _query(ids)},
    )


@lead_required
def evaluation_comparison_export(request: TeamRequest) -> HttpResponse:
    """?part=keywords (default): a row per common keyword; ?part=summary: per metric."""
    team_id = request.membership.team_id
    part = request.GET.get("part", "keywords")
    try:
        if part not in CSV_PARTS:
            raise InvalidInput([f"part: {part[:40]!r} is not one of {', '.join(CSV_PARTS)}"])
        ids = parse_evaluation_ids(request.GET.getlist("e"), field="e")
        comparison = comparison_build(
            team_id=team_id, evaluation_ids=ids, people_only=_people_only(request)
        )
    except InvalidInput as error:
        return _refused(request, error)
    out = io.StringIO()
    CSV_PARTS[part](comparison, out)
    name = "comparison-" + "-".join(str(i) for i in ids) + f"-{part}.csv"
    return HttpResponse(
        out.getvalue(),
        content_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )

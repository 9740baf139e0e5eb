"""A try's report as plain text: what `manage.py try_model` prints."""

from __future__ import annotations

from .report import MetricLine, TryReport


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _metric_text(line: MetricLine, indent: str = "  ") -> list[str]:
    paired = line.paired
    text = (
        f"{indent}{line.label}: {_number(line.tried_mean)} (judged@k {_share(line.judged_tried)})"
        f" against {_number(line.baseline_mean)} (judged@k {_share(line.judged_baseline)})"
    )
    if paired is not None and paired.difference is not None:
        text += (
            f", difference {paired.difference:+.4f} [{paired.ci_low:+.4f}, {paired.ci_high:+.4f}]"
            f" over {paired.compared} queries, p {_number(paired.p_adjusted)}"
        )
    lines = [f"{text}: {line.verdict}"]
    if line.condensed is not None:
        lines += _metric_text(line.condensed, indent + "  condensed, as coverage differs: ")
    return lines


def report_text(report: TryReport) -> str:
    attempt = report.attempt
    lines = [
        f"{attempt} ({attempt.state}, {attempt.queries_done} of {attempt.queries_total} queries)",
        f"baseline: {report.baseline_label or 'none'}",
    ]
    if attempt.error:
        lines.append(f"failed: {attempt.error}")
    failed = [row for row in report.queries if row.error]
    if failed:
        lines.append(f"{len(failed)} queries failed, e.g. {failed[0].text!r}: {failed[0].error}")
    lines.append(
        f"agreement with the baseline: RBO {_number(report.rbo_mean)}, "
        f"Kendall's tau {_number(report.tau_mean)}"
    )
    judged_by = ", ".join(f"{count} {basis}" for basis, count in sorted(report.bases.items()))
    lines.append(
        f"judged by: {judged_by or 'nobody yet'}; unjudged in the top k: {report.unjudged}"
    )
    for line in report.metrics:
        lines += _metric_text(line)
    lines.append(f"verdict: {report.verdict}")
    return "\n".join(lines)

"""Cells for CSV files that people open in a spreadsheet.

A spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage
return as a formula, so a keyword or document name typed by anyone (or returned by a
search endpoint) could run one on a lead's machine. Text cells that start that way get a
leading apostrophe, which spreadsheets show as plain text; numbers are written as numbers.
"""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def text_cell(value: str) -> str:
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def number_cell(value: float | None) -> str:
    """Full precision (repr), empty for a missing value."""
    return "" if value is None else repr(value)

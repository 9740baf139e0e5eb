"""Cells for CSV files that people open in a spreadsheet.

A spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage
return as a formula, so a keyword or document name typed by anyone (or returned by a
search endpoint) could run one on a lead's machine. Text cells that start that way get a
leading apostrophe, which spreadsheets show as plain text; numbers are written as numbers.
"""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def text_cell(value: str) -> str:
    return "'" + value if value.startswith(FORMULA_STARTS) else value


# Twelve significant digits: every digit a metric can mean, and none of the binary noise
# a float carries after the 15th (2.3333333333333335 is written 2.33333333333, 0.1 + 0.2 is
# 0.3). The JSON export and the API keep full precision for machines.
SIGNIFICANT_DIGITS = 12


def number_cell(value: float | None) -> str:
    """A number as a spreadsheet should show it (SIGNIFICANT_DIGITS); empty when missing."""
    return "" if value is None else format(value, f".{SIGNIFICANT_DIGITS}g")

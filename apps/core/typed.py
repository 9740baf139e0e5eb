"""Whole numbers from what a request sends: ids, grades, cutoffs, sizes.

One reading for every form, query string, JSON body and command line: ASCII digits only,
a leading minus only where the column allows one, and a value within the column it goes
to. `str.isdigit` is not enough ("²" and "١" are digits to it; `int("²")` fails), and a
number past its column is a database error on PostgreSQL, silently stored on SQLite.
A value that does not fit is None: the caller says which field, in its own words.
"""

import re

# The ranges of the database's integer columns.
SMALLINT_MIN, SMALLINT_MAX = -(2**15), 2**15 - 1
INTEGER_MIN, INTEGER_MAX = -(2**31), 2**31 - 1
BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1
# Every table's id is a BigAutoField: from 1.
ID_MAX = BIGINT_MAX

# A bigint has 19 digits at most: a longer text is refused before int() reads it.
_WHOLE = re.compile(r"-?[0-9]{1,19}")


def parse_int(value: object, low: int, high: int) -> int | None:
    """`value` as a whole number from `low` to `high`, or None.

    Text (trimmed) must be ASCII digits with an optional leading minus; an int is taken
    as it is (a JSON number); a bool, a float or anything else is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        return None
    return number if low <= number <= high else None


def parse_id(value: object) -> int | None:
    """An id as sent (text or a JSON number): a whole number from 1 to ID_MAX, or None."""
    return parse_int(value, 1, ID_MAX)

"""Compare two runs of the whole test suite, as JUnit XML files: is the suite slower?

Run both suites at the same time on the same machine, so both see the same load (two
checkouts, each with its own database and Redis numbers; `make setup` in each):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/relevo_suite_before \\
    CELERY_BROKER_URL=redis://127.0.0.1:6379/9 RELEVO_TEST_REDIS_URL=redis://127.0.0.1:6379/10 \\
    RELEVO_CHROMIUM=/usr/bin/chromium RELEVO_REQUIRE_SERVICES=1 \\
        .venv/bin/python -m pytest -q --junitxml=/tmp/before.xml      # in the earlier checkout
    (the same in this one, with its own database and Redis numbers 4 and 5, into after.xml)

then: .venv/bin/python bench/suite_compare.py /tmp/before.xml /tmp/after.xml

A test is matched across the two by its module's name and its own (a test moved to
another package keeps both), so the tests common to both compare like for like; new
tests and removed ones are counted apart.
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ElementTree
from collections import defaultdict

Key = tuple[str, str]  # (module, test name)


def test_times(path: str) -> dict[Key, float]:
    times: dict[Key, float] = defaultdict(float)
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        times[(module, case.get("name", ""))] += float(case.get("time", 0))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    arguments = parser.parse_args()
    before, after = test_times(arguments.before), test_times(arguments.after)
    common = before.keys() & after.keys()
    common_before = sum(before[key] for key in common)
    common_after = sum(after[key] for key in common)
    print(f"before: {len(before)} tests, {sum(before.values()):,.0f} s")
    print(f"after:  {len(after)} tests, {sum(after.values()):,.0f} s")
    print(
        f"the {len(common)} tests of both: {common_before:,.0f} s -> {common_after:,.0f} s, "
        f"ratio {common_after / common_before:.3f}"
    )
    added = after.keys() - before.keys()
    removed = before.keys() - after.keys()
    print(f"new: {len(added)} tests, {sum(after[key] for key in added):,.0f} s; ", end="")
    print(f"gone or renamed: {len(removed)} tests, {sum(before[key] for key in removed):,.0f} s")
    by_module: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for key in common:
        by_module[key[0]][0] += before[key]
        by_module[key[0]][1] += after[key]
    changes = sorted(by_module.items(), key=lambda item: item[1][1] - item[1][0])
    for label, chosen in (("most slower", changes[::-1][:5]), ("most faster", changes[:5])):
        shown = ", ".join(f"{module} {old:.0f} -> {new:.0f} s" for module, (old, new) in chosen)
        print(f"{label}: {shown}")
    verdict = "PASS" if common_after <= common_before * 1.05 else "NOT MET"
    print(f"target: the common tests no slower than before (within 5 % noise): {verdict}")


if __name__ == "__main__":
    main()

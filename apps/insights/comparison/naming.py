"""Short names that tell compared evaluations apart in a table's narrow column headers.

Evaluations of one ranking are often named alike ("Default ranking, week 2" and "...,
week 3"): cut to a column's width both would read "Default ranki…". A short name keeps
what differs, with the word before it when that alone would be a bare number or letter
("week 2", "Ranking B"); the page shows the full name on hover.
"""

WIDTH = 16  # characters a narrow number column shows
TERSE = 3  # a difference this short ("2", "B") keeps the word before it


def short_names(names: list[str]) -> list[str]:
    """One short name per evaluation name, in order, all different. When cutting them to
    WIDTH would make two alike, they are lettered instead: "A", "B", ..."""
    words = [name.split() for name in names]
    shared = _shared_leading_words(words)
    shorts = []
    for name_words in words:
        keep = shared
        if len(" ".join(name_words[keep:])) <= TERSE:
            keep = max(keep - 1, 0)
        shorts.append(_cut(" ".join(name_words[keep:]) or " ".join(name_words)))
    if len(set(shorts)) < len(shorts):
        return [chr(ord("A") + index) for index in range(len(names))]
    return shorts


def _shared_leading_words(words: list[list[str]]) -> int:
    """How many leading words every name has in common, leaving each at least one."""
    shortest = min((len(w) for w in words), default=0)
    count = 0
    while count < shortest - 1 and len({w[count] for w in words}) == 1:
        count += 1
    return count


def _cut(text: str) -> str:
    return text if len(text) <= WIDTH else text[: WIDTH - 1].rstrip() + "…"

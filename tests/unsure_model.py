"""A first judge for chain tests, answered by a local model server (FakeProvider's
responder): sure of every result but three, so a chain sends exactly those on."""

import json
import re

from apps.judges.tests.fake_provider import Reply, Seen

# The results the judge is unsure of (confidence below a chain's 0.6), by keyword and
# title number, for an evaluation of {"red shoes": 4, "blue hat": 4}.
UNSURE = {"red shoes-doc-2", "red shoes-doc-4", "blue hat-doc-3"}


def unsure_of_three(seen: Seen) -> Reply:
    """Good (2) for every result shown, at once; confidence 0.3 for those of UNSURE (named
    by keyword and title, as the prompt shows them), 0.9 for the others."""
    user = seen.body["messages"][-1]["content"]
    keyword_line = re.search(r"^Keyword: (.*)$", user, re.M)
    results_block = re.search(r"RESULTS BEGIN\n(.*)\nRESULTS END", user, re.S)
    assert keyword_line and results_block, "the prompt has no keyword line or results block"
    keyword = keyword_line.group(1)
    shown = json.loads(results_block.group(1))
    judgements = [
        {
            "id": result["id"],
            "grade": 2,
            "confidence": 0.3 if f"{keyword}-doc-{result['title'].split()[-1]}" in UNSURE else 0.9,
            "reason": "the title matches the keyword",
        }
        for result in shown["results"]
    ]
    return Reply.openai(json.dumps({"judgements": judgements}))

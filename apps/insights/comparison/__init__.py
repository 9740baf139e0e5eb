"""Comparing evaluations over their common keywords.

- ``stats``      paired differences, bootstrap interval, sign-flip test, wins/ties/losses
- ``ranking``    Kendall's tau and rank-biased overlap between two result lists
- ``wording``    the plain sentences and numbers a lead reads
- ``chart``      geometry of the difference-with-interval bars (server-rendered SVG)
- ``selectors``  loads evaluations from the database and runs the comparison
- ``table``      the per-keyword table (sorting, paging) and the CSV export
- ``movement``   how a keyword's result list moved against the baseline's (up, down, new)
- ``side_by_side`` one keyword: its metric values and the result lists side by side
- ``views``      the comparison page, one keyword's page and the CSV downloads

``stats``, ``ranking``, ``movement``, ``wording`` and ``chart`` are pure (no Django).
"""

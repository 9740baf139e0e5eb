"""Comparing evaluations over their common keywords.

- ``stats``      paired differences, bootstrap interval, sign-flip test, wins/ties/losses
- ``ranking``    Kendall's tau and rank-biased overlap between two result lists
- ``wording``    the plain sentences and numbers a lead reads
- ``chart``      geometry of the difference-with-interval bars (server-rendered SVG)
- ``selectors``  loads evaluations from the database and runs the comparison
- ``table``      the per-keyword table (sorting, paging) and the CSV export
- ``views``      the comparison page and its CSV downloads

``stats``, ``ranking``, ``wording`` and ``chart`` are pure (numpy, no Django).
"""

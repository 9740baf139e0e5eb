"""A team's live search system as Relevo sees it: search endpoints and search models.

An endpoint says how to call a search API and how to read its answer (the response
mapper); a model fills in the request for one keyword (parameters, headers, body with
`#query#`). The pure work (building requests, calling safely, mapping) lives in
`apps.search`; this app stores the configuration, checks it, and offers the pages.
"""

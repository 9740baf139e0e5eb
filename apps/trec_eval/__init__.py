"""trec_eval without a database: score a run file against a qrels file and print what
trec_eval prints, straight from the engine (``apps.engine``). Pure Python and numpy, no
Django, so `manage.py trec_eval` answers without starting the app.

- ``files``    read qrels and run files as streams, every limit checked, problems by line
- ``measures`` trec_eval's measure names, its -m specifications, its order and default set
- ``report``   the text trec_eval prints, from values per query (the export uses it too)
- ``scorer``   the options (-q -c -l -J -M -m) and the scoring itself
- ``cli``      the command line
"""

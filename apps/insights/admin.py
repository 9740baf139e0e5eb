"""The insights app registers no admin: its pages read what other apps keep."""

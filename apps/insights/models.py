"""The insights app has no tables of its own: a lead's decision on a disagreement is a
judgement, kept by judging (apps.judging.models.SnapshotDecision)."""

"""Agreement between graders and the lead's disagreement queue.

Pure parts (no Django): ``stats`` (Fleiss' kappa, Krippendorff's alpha), ``consensus``
(each grader against the others), ``disagreement`` (which snapshots a lead should
settle), ``readings`` (conventional bands) and ``report`` (all of it for one evaluation).
Database parts: ``selectors`` (reads) and ``views`` (the agreement page and the
disagreement queue); a lead's decision is written by ``apps.judging.decisions``.
"""

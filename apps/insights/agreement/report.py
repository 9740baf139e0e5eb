"""Everything the agreement page and API show, from the graded slots of one evaluation.
Pure: the caller passes the ratings as parallel arrays of codes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apps.engine import Scale, get_scale
from apps.stats.agreement import (
    Level,
    Statistic,
    category_counts,
    fleiss_kappa,
    krippendorff_alpha,
    observed_agreement,
)

from .consensus import GraderAgreement, grader_agreement


@dataclass(frozen=True)
class Ratings:
    """One entry per graded slot: the item (snapshot) code, the grader code (both
    0 .. n-1, as the caller numbered them) and the grade on the native scale."""

    items: np.ndarray
    graders: np.ndarray
    grades: np.ndarray

    @classmethod
    def of(cls, triples: list[tuple[int, int, int]]) -> Ratings:
        """From plain (item, grader, grade) tuples, any hashable item and grader ids."""
        item_codes: dict[object, int] = {}
        grader_codes: dict[object, int] = {}
        rows = [
            (
                item_codes.setdefault(item, len(item_codes)),
                grader_codes.setdefault(g, len(grader_codes)),
                grade,
            )
            for item, g, grade in triples
        ]
        columns = np.array(rows, dtype=np.int64).reshape(len(rows), 3)
        return cls(columns[:, 0], columns[:, 1], columns[:, 2])

    def __len__(self) -> int:
        return len(self.grades)


def level_of(scale: str | Scale) -> Level:
    """Nominal for binary (two unordered classes), ordinal for graded and detail."""
    return "nominal" if get_scale(scale).name == "binary" else "ordinal"


@dataclass(frozen=True)
class AgreementReport:
    scale: str
    ratings_per_item: int
    items: int  # snapshots with at least one grade
    graders: int
    grades: int
    kappa: Statistic
    alpha: Statistic
    observed: Statistic
    per_grader: list[GraderAgreement]

    @property
    def kappa_left_out(self) -> int:
        """Graded snapshots Fleiss' kappa could not use: fewer grades than slots."""
        return self.items - self.kappa.items


def agreement_report(
    ratings: Ratings, *, scale: str | Scale, ratings_per_item: int
) -> AgreementReport:
    """Fleiss' kappa over the snapshots with all ``ratings_per_item`` grades (the
    evaluation's strategy), Krippendorff's alpha at the scale's level over those with two
    grades or more, the observed agreement, and each grader's agreement with the others.
    """
    scale_def = get_scale(scale)
    counts = category_counts(ratings.items, ratings.grades, scale_def.grades)
    grader_count = len(np.unique(ratings.graders))
    kappa = fleiss_kappa(counts, ratings_per_item)
    alpha = krippendorff_alpha(counts, level_of(scale))
    if grader_count < 2 and len(ratings):
        one = "only one grader has graded, and agreement needs two"
        kappa = Statistic(kappa.name, None, 0, one)
        alpha = Statistic(alpha.name, None, 0, one)
    return AgreementReport(
        scale=scale_def.name,
        ratings_per_item=ratings_per_item,
        items=int((counts.sum(axis=1) > 0).sum()),
        graders=grader_count,
        grades=len(ratings),
        kappa=kappa,
        alpha=alpha,
        observed=observed_agreement(counts),
        per_grader=grader_agreement(
            ratings.items, ratings.graders, ratings.grades, binary=scale_def.name == "binary"
        ),
    )

"""Plain-language readings of agreement values. These are conventions from the
literature, not properties of the data, and the pages say so."""

from __future__ import annotations

# Landis, J. R. & Koch, G. G. (1977), "The measurement of observer agreement for
# categorical data", Biometrics 33(1): upper bound of each band, and its name.
LANDIS_KOCH = [
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
]
LANDIS_KOCH_SOURCE = "Landis & Koch (1977)"

# Krippendorff, K. (2004), "Content Analysis", 2nd ed.: rely on data with
# alpha >= .800, draw only tentative conclusions from .667 <= alpha < .800.
KRIPPENDORFF_SOURCE = "Krippendorff (2004)"


def landis_koch_band(value: float | None) -> str | None:
    """The Landis & Koch band of a kappa (or alpha) value: "poor" below 0, then
    "slight" up to 0.20, "fair" to 0.40, "moderate" to 0.60, "substantial" to 0.80,
    "almost perfect" above."""
    if value is None:
        return None
    if value < 0.0:
        return "poor"
    for upper, band in LANDIS_KOCH:
        if value <= upper:
            return band
    return "almost perfect"


def krippendorff_reading(alpha: float | None) -> str | None:
    """What Krippendorff's own guideline says about relying on data with this alpha."""
    if alpha is None:
        return None
    if alpha >= 0.800:
        return "reliable enough to draw conclusions"
    if alpha >= 0.667:
        return "good enough for tentative conclusions only"
    return "not reliable enough to draw conclusions"

"""How the API writes a measured figure (calibration reports, a chain's audit): plain
JSON numbers, one that is not defined null with `reason` saying why."""

import math
from typing import Any

from rest_framework import serializers


class FiniteFloatField(serializers.FloatField):
    """A float as a plain JSON number; one that is not finite (never expected) as null."""

    def to_representation(self, value: Any) -> float | None:
        number = float(value)
        return number if math.isfinite(number) else None


class FigureOut(serializers.Serializer):
    value = FiniteFloatField(allow_null=True, help_text="null when not defined: see reason")
    low = FiniteFloatField(
        allow_null=True,
        help_text="the 95% bootstrap interval over keywords; null with samples=0, while "
        "the calibration runs, or when fewer than half the resamples define the figure",
    )
    high = FiniteFloatField(allow_null=True)
    n = serializers.IntegerField(help_text="results (keywords, for ranking_tau) it rests on")
    reason = serializers.CharField(help_text="why value is null; empty otherwise")

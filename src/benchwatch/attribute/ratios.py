"""A ratio with its interval as the attribution table holds it, and the arithmetic of ratios:
the product of independent steps, and one ratio over another."""

from __future__ import annotations

import math

from pydantic import BaseModel

from benchwatch.attribute.own_units import worded
from benchwatch.judge.verdict import Row

_Z = 1.959963984540054  # the normal quantile of a 95 % two-sided interval


class Ratio(BaseModel):
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    verdict: str = "no verdict"
    text: str = ""

    @classmethod
    def of(cls, row: Row) -> Ratio:
        # statements, database buffers, retained memory: their text says it in their own unit
        text = worded(row) or row.text
        return cls(ratio=row.ratio, low=row.low, high=row.high, verdict=row.verdict, text=text)

    def shown(self) -> str:
        if self.ratio is None or self.low is None or self.high is None:
            return "—"
        return f"{self.ratio:.3f} [{self.low:.3f}, {self.high:.3f}]"


def _bounds(r: Ratio) -> tuple[float, float, float] | None:
    """(ratio, low, high), or None when any of them is missing."""
    if r.ratio is None or r.low is None or r.high is None:
        return None
    return r.ratio, r.low, r.high


def product(ratios: list[Ratio]) -> Ratio:
    """The product of independent ratios; its interval adds the log half-widths in quadrature
    (each interval read as a normal one in log space: an approximation, said in the output)."""
    known = [bounds for r in ratios if (bounds := _bounds(r)) is not None]
    if not ratios or len(known) < len(ratios):
        return Ratio(text="missing a step")
    log_ratio = sum(math.log(ratio) for ratio, _, _ in known)
    spread = math.sqrt(
        sum(((math.log(high) - math.log(low)) / (2 * _Z)) ** 2 for _, low, high in known)
    )
    return Ratio(
        ratio=math.exp(log_ratio),
        low=math.exp(log_ratio - _Z * spread),
        high=math.exp(log_ratio + _Z * spread),
        verdict="product",
    )


def overlap(a: Ratio, b: Ratio) -> bool | None:
    if a.low is None or a.high is None or b.low is None or b.high is None:
        return None
    return max(a.low, b.low) <= min(a.high, b.high)


def quotient(a: Ratio, b: Ratio) -> Ratio:
    """a / b, its interval from the two log half-widths in quadrature (as `product`)."""
    if b.ratio is None or b.low is None or b.high is None:
        return Ratio(text="missing a ratio")
    inverse = Ratio(ratio=1 / b.ratio, low=1 / b.high, high=1 / b.low)
    return product([a, inverse]).model_copy(update={"verdict": "quotient"})

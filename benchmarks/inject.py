"""Opt-in extra work in the timed calls, for testing the micro-benchmark detectors.

`BENCHWATCH_MICRO_INJECT=<fraction>` (off when unset; never set in published runs. Set to 0, the
wrapper is there and repeats nothing: the base side of a detector test, equal to an injected
head in everything but the injected work). Every `time_` method of the classes given to
`inject_into` repeats its own call whenever the calls so far owe one, i.e. after k calls it has
made floor(fraction * k) extra ones. The extra work is the
measured operation itself, so over N calls it is fraction * N calls' worth, whatever the
operation costs: instruction counts (benchwatch instructions, N = 100) grow by exactly that
fraction when fraction * N is a whole number (0.02 * 100 = 2). Timing means grow by the same
fraction; a median of asv's samples may not see it (most samples hold no extra call).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from typing import Any

ENV_VAR = "BENCHWATCH_MICRO_INJECT"


def injected_fraction() -> float | None:
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{ENV_VAR}={raw!r}: give a fraction, e.g. 0.02 for 2 %") from None
    if not 0 <= value <= 1:
        raise ValueError(f"{ENV_VAR}={raw!r}: give a fraction between 0 and 1")
    return value


def _owing(method: Callable[..., Any], fraction: float) -> Callable[..., Any]:
    @functools.wraps(method)
    def timed(self: Any, *args: Any) -> Any:
        counts = self.__dict__.setdefault("_injected_calls", {})
        made, extra = counts.get(method.__name__, (0, 0))
        result = method(self, *args)
        made += 1
        while extra < math.floor(fraction * made + 1e-9):  # 1e-9: 0.02 * 50 is 1, not 0.99...
            method(self, *args)
            extra += 1
        counts[method.__name__] = (made, extra)
        return result

    return timed


def inject_into(*classes: type) -> None:
    """Wrap the `time_` methods of `classes` when the setting is given (0 too); leave them alone
    when it is not."""
    fraction = injected_fraction()
    if fraction is None:
        return
    for klass in classes:
        for name, value in list(vars(klass).items()):
            if name.startswith("time_") and callable(value):
                setattr(klass, name, _owing(value, fraction))

"""Instruction counts of the asv micro-benchmarks under valgrind's cachegrind: deterministic
figures, immune to how fast the host happens to be."""

from benchwatch.instructions.cachegrind import unavailable_reason
from benchwatch.instructions.count import (
    DEFAULT_CALLS,
    DEFAULT_REPEATS,
    INJECT_ENV_VAR,
    QUICK_REPEATS,
    UNIT,
    count_instructions,
    quick_patterns,
)

__all__ = [
    "DEFAULT_CALLS", "DEFAULT_REPEATS", "INJECT_ENV_VAR", "QUICK_REPEATS", "UNIT",
    "count_instructions", "quick_patterns", "unavailable_reason",
]  # fmt: skip

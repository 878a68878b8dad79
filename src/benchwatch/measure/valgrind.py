"""valgrind as both instruction counters run it: the install hint, and address-space randomization
turned off for the child (micro/cachegrind.py for the micro-benchmarks, counts/callgrind.py for
the server)."""

from __future__ import annotations

import functools
import shutil
import subprocess

INSTALL_HINT = "install it (Debian/Ubuntu: apt-get install valgrind)"


@functools.cache
def no_randomization() -> list[str]:
    """`setarch -R` turns address-space randomization off for the child: Python then lays out
    its objects at the same addresses every time, so id-based hashing and malloc take the same
    paths. Measured here, two identical runs of `runner.py check` on one case (2.5 G
    instructions each) differed by 126 instructions with it and by 1,159 without."""
    setarch = shutil.which("setarch")
    if setarch is None:
        return []
    done = subprocess.run([setarch, "-R", "true"], capture_output=True)
    return [setarch, "-R"] if done.returncode == 0 else []

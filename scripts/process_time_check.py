"""Does CPU time hold where wall time does not? One micro-benchmark, timed both ways, alone
and with a busy-looping neighbour pinned to the same core.

    $(ls -d ~/.cache/benchwatch/envs/latest-*/bin/python | head -1) scripts/process_time_check.py

Runs in a stack's environment (it imports the benchmark inputs from benchmarks/common.py).
Prints the median of each clock per condition and the hog/alone ratios. A measurement, not a
test: it takes a few seconds.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from multiprocessing import Process
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common, compat

CORE = 0
REPEATS = 15
BATCH = 5  # calls per sample: ~40 ms, longer than a scheduler slice, so sharing the core shows


def _spin() -> None:
    os.sched_setaffinity(0, {CORE})
    while True:
        pass


def measure(instance: object) -> tuple[float, float]:
    cpu, wall = [], []
    for _ in range(REPEATS):
        c, w = time.process_time(), time.perf_counter()
        for _ in range(BATCH):
            compat.dump_json(instance)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(cpu), statistics.median(wall)


def main() -> int:
    os.sched_setaffinity(0, {CORE})
    case = "payloads-1MB"
    instance = common.case(case).instance
    measure(instance)  # warm-up
    alone = measure(instance)
    hog = Process(target=_spin, daemon=True)
    hog.start()
    try:
        time.sleep(0.5)
        loaded = measure(instance)
    finally:
        hog.kill()
    print(
        f"{case} dump_json x{BATCH}, median of {REPEATS}, benchmark and hog pinned to core {CORE}"
    )
    print("| clock | alone | with a CPU hog | hog/alone |")
    print("|---|---|---|---|")
    for name, a, b in (
        ("process_time (CPU)", alone[0], loaded[0]),
        ("perf_counter (wall)", alone[1], loaded[1]),
    ):
        print(f"| {name} | {a * 1e3:.3f} ms | {b * 1e3:.3f} ms | {b / a:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

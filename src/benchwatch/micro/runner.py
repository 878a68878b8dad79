"""Runs asv `time_` benchmarks without asv, in a stack's environment (standard library only).

    python runner.py discover BENCHMARK_DIR
        prints every time_ benchmark case as JSON: [{"key", "combo", "name"}, ...]
    python runner.py check BENCHMARK_DIR PLAN_JSON
        builds each case and calls it a few times natively: {"skipped", "failed", "seconds"}
    python runner.py fork BENCHMARK_DIR PLAN_JSON   (run under cachegrind; see fork())
        PLAN_JSON: {"cases": [[key, combo], ...], "calls": [N per case], "repeats", "jobs"}
        prints {"skipped": {id: reason}, "children": [{"case", "pid", "exit"}, ...]}
    python runner.py serve BENCHMARK_DIR PLAN_JSON  (timing on request; see serve())
        prints what check prints, then reads "INDEX CALLS REPEATS" lines and answers each with
        REPEATS times the seconds (the case's own timer) that CALLS calls took, or
        "error <reason>"; "quit" ends
    Cases are built the way asv does: setup_cache once per definition, then setup with the
    parameters. Skipped: a NotImplementedError in setup (asv's skip).

Discovery follows asv's conventions: every module of the benchmark package, every public
class (its methods) and function whose name starts with `time_`; `params`, `param_names`,
`setup`, `setup_cache` are taken from the method, else its class, else its module.
"""

from __future__ import annotations

import gc
import importlib
import inspect
import itertools
import json
import os
import pkgutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any

_HERE = str(Path(__file__).resolve().parent)
if sys.path and sys.path[0] == _HERE:
    sys.path.pop(0)  # never shadow the benchmarks' imports with this package's modules


def _modules(benchmark_dir: Path) -> list[Any]:
    sys.path.insert(0, str(benchmark_dir.parent))
    package = importlib.import_module(benchmark_dir.name)
    found = []
    for info in sorted(
        pkgutil.walk_packages(package.__path__, f"{package.__name__}."), key=lambda i: i.name
    ):
        found.append(importlib.import_module(info.name))
    return found


def _first(sources: list[Any], attribute: str, default: Any = None) -> Any:
    for source in sources:
        if source is not None and hasattr(source, attribute):
            return getattr(source, attribute)
    return default


def _params(sources: list[Any]) -> list[list[Any]]:
    params = _first(sources, "params", [])
    if params and not isinstance(params[0], (list, tuple)):
        params = [params]  # asv: a flat list is the one parameter
    return [list(p) for p in params]


def _benchmarks(modules: list[Any], root: str) -> dict[str, tuple[Any, Any, str]]:
    """key (asv's name: module.Class.method) -> (module, class or None, attribute name)."""
    found: dict[str, tuple[Any, Any, str]] = {}
    for module in modules:
        short = module.__name__.removeprefix(f"{root}.")
        for name, value in sorted(vars(module).items()):
            if name.startswith("_"):
                continue
            if inspect.isclass(value) and value.__module__ == module.__name__:
                for method, _ in inspect.getmembers(value, inspect.isfunction):
                    if method.startswith("time_"):
                        found[f"{short}.{name}.{method}"] = (module, value, method)
            elif inspect.isfunction(value) and name.startswith("time_"):
                found[f"{short}.{name}"] = (module, None, name)
    return found


def discover(benchmark_dir: Path) -> list[dict[str, Any]]:
    cases = []
    for key, (module, klass, name) in _benchmarks(
        _modules(benchmark_dir), benchmark_dir.name
    ).items():
        function = getattr(klass, name) if klass else getattr(module, name)
        params = _params([function, klass, module])
        names = _first([function, klass, module], "param_names", None) or [
            f"param{i + 1}" for i in range(len(params))
        ]
        for index, combo in enumerate(itertools.product(*params)):
            shown = f"{key}({', '.join(repr(v) for v in combo)})" if params else key
            labels = [str(v) for v in combo]
            cases.append(
                {
                    "key": key,
                    "combo": index,
                    "name": shown,
                    "labels": labels,
                    "param_names": list(names),
                }
            )
    return cases


class _Built:
    """One case ready to call: the bound method (or function) and its arguments, set up as asv
    does: setup_cache once per definition (its result becomes the first argument), then setup."""

    def __init__(self, module: Any, klass: Any, name: str, combo: int, cache: dict) -> None:
        instance = klass() if klass else None
        function = getattr(instance if klass else module, name)
        sources = [function, instance, module]
        params = _params(sources)
        args: list[Any] = list(list(itertools.product(*params))[combo]) if params else []
        setup_cache = _first(sources, "setup_cache")
        if setup_cache is not None:
            origin = getattr(setup_cache, "__func__", setup_cache)
            if origin not in cache:
                cache[origin] = setup_cache()
            args = [cache[origin], *args]
        setup = _first(sources, "setup")
        if setup is not None:
            setup(*args)
        self.function = function
        self.args = args
        self.timer = _first(sources, "timer", time.perf_counter)  # asv's default timer


def _build_all(
    benchmark_dir: Path,
    cases: list[list[Any]],
    failed: dict[str, str] | None,
    skipped: dict[str, str],
) -> list[_Built | None]:
    """Every case built, in order; None for a skipped case (asv: NotImplementedError in setup)
    and, when `failed` collects them, for a case whose setup raised."""
    table = _benchmarks(_modules(benchmark_dir), benchmark_dir.name)
    cache: dict = {}
    built: list[_Built | None] = []
    for key, combo in cases:
        module, klass, name = table[key]
        try:
            built.append(_Built(module, klass, name, combo, cache))
        except NotImplementedError as exc:
            built.append(None)
            skipped[f"{key}#{combo}"] = str(exc) or "NotImplementedError in setup"
        except Exception as exc:
            if failed is None:
                raise
            built.append(None)
            failed[f"{key}#{combo}"] = f"setup: {type(exc).__name__}: {exc}"
    return built


def check(benchmark_dir: Path, plan: dict[str, Any]) -> dict[str, Any]:
    """Builds and calls every case natively, each failure reported by case; also the CPU seconds
    per call (the smallest of a few calls), from which the caller picks N."""
    return _checked(plan["cases"], *_built_with_problems(benchmark_dir, plan))[0]


def _built_with_problems(benchmark_dir: Path, plan: dict[str, Any]) -> tuple[list, dict, dict]:
    skipped: dict[str, str] = {}
    failed: dict[str, str] = {}
    return _build_all(benchmark_dir, plan["cases"], failed, skipped), failed, skipped


def _checked(
    cases: list[list[Any]],
    built: list[_Built | None],
    failed: dict[str, str],
    skipped: dict[str, str],
) -> tuple[dict[str, Any], list[_Built | None]]:
    """check's report, and the cases with those that failed a call set to None."""
    seconds: dict[str, float] = {}
    working: list[_Built | None] = []
    for (key, combo), case in zip(cases, built, strict=True):
        working.append(None)
        if case is None:
            continue
        best = float("inf")
        try:
            for _ in range(5):
                started = time.process_time()
                case.function(*case.args)
                best = min(best, time.process_time() - started)
        except Exception as exc:
            failed[f"{key}#{combo}"] = f"{type(exc).__name__}: {exc}"
            continue
        seconds[f"{key}#{combo}"] = best
        working[-1] = case
    return {"skipped": skipped, "failed": failed, "seconds": seconds}, working


def serve(benchmark_dir: Path, plan: dict[str, Any]) -> None:
    """Built once, timed on request: the caller (micro/pairs.py) sends the same request
    to base's and head's runner, one after the other. The garbage collector is collected before and
    off during each timed batch (asv times the same way, through timeit)."""
    report, built = _checked(plan["cases"], *_built_with_problems(benchmark_dir, plan))
    gc.collect()
    gc.freeze()  # the cases' inputs (1 MB payloads) are never scanned again: a batch's collect is cheap
    print(json.dumps(report), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            return
        case, calls, repeats = built[int(words[0])], int(words[1]), int(words[2])
        if case is None:
            print("error not built (see the first report)", flush=True)
            continue
        try:
            print(" ".join(repr(_timed(case, calls)) for _ in range(repeats)), flush=True)
        except Exception as exc:
            print(f"error {type(exc).__name__}: {exc}".replace("\n", " "), flush=True)


def _timed(case: _Built, calls: int) -> float:
    function, args, timer = case.function, case.args, case.timer
    gc.collect()
    gc.disable()
    try:
        started = timer()
        for _ in range(calls):
            function(*args)
        return timer() - started
    finally:
        gc.enable()


def _child(ready: int, report: int, k: int, case: _Built | None, calls: int) -> None:
    """A forked child: waits for its turn, says which child it is, makes its calls (none for a
    base child), exits."""
    os.read(ready, 1)
    os.write(report, f"{k:06d} {os.getpid():09d}\n".encode())  # fixed width: same cost for all
    gc.enable()
    code = 0
    try:
        if case is not None:
            function, args = case.function, case.args
            for _ in range(calls):
                function(*args)
    except BaseException:
        traceback.print_exc()
        code = 1
    os._exit(code)


def fork(benchmark_dir: Path, plan: dict[str, Any]) -> dict[str, Any]:
    """Under cachegrind with --cachegrind-out-file=...%p, every forked child writes its own
    total, which includes everything the parent did before the fork. The parent builds the
    cases and calls each N times; then it forks, per repetition, one child per case that calls
    it N times more, with a base child (no calls) first and last: a child's total minus the
    base's is N more calls, once the parent's cost per fork (from the two bases) is taken off.
    Between forks the parent allocates nothing (pids come back through a pipe) and its garbage
    collector is frozen, so every child starts from the same heap."""
    skipped: dict[str, str] = {}
    built = _build_all(benchmark_dir, plan["cases"], None, skipped)
    calls: list[int] = plan["calls"]
    for case, count in zip(built, calls, strict=True):
        if case is not None:
            for _ in range(count):
                case.function(*case.args)
    counted = [i for i, case in enumerate(built) if case is not None]
    children: list[int | None] = [None]
    for _ in range(plan["repeats"]):
        children += counted
    children.append(None)
    work = [(None, 0) if i is None else (built[i], calls[i]) for i in children]
    gates = [os.pipe() for _ in children]
    report_r, report_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    gc.collect()
    gc.freeze()
    gc.disable()
    for k in range(len(children)):  # the same instructions for every fork: a constant
        if os.fork() == 0:
            _child(gates[k][0], report_w, k, *work[k])
    gc.enable()
    os.close(report_w)
    exits: dict[int, int] = {}
    released = 0
    while len(exits) < len(children):
        while released < len(children) and released - len(exits) < plan["jobs"]:
            os.write(gates[released][1], b"g")
            released += 1
        pid, status = os.wait()
        exits[pid] = os.waitstatus_to_exitcode(status)
    pids = {}
    with os.fdopen(report_r) as lines:
        for line in lines:
            slot, child = line.split()
            pids[int(slot)] = int(child)
    return {
        "skipped": skipped,
        "children": [
            {"case": extra, "pid": pids.get(k), "exit": exits.get(pids.get(k, -1), -1)}
            for k, extra in enumerate(children)
        ],
    }


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "discover":
        print(json.dumps(discover(Path(argv[1]))))
        return 0
    if len(argv) >= 3 and argv[0] == "serve":
        serve(Path(argv[1]), json.loads(argv[2]))
        return 0
    if len(argv) >= 3 and argv[0] in ("check", "fork"):
        command = check if argv[0] == "check" else fork
        print(json.dumps(command(Path(argv[1]), json.loads(argv[2]))))
        return 0
    print("usage: runner.py discover DIR | check|fork|serve DIR PLAN_JSON", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

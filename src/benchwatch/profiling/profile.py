"""`compare --profile`: one extra round, base and head side by side under py-spy (which
launches each server as its child), the same load on both; never part of a verdict.

Output per variant pair: both speedscope files, a differential one (every function's CPU µs
per request on each side) and the functions whose share changed most."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import psutil

from benchwatch.environments.envs import Env
from benchwatch.measure import launch, loadgen, server
from benchwatch.measure.request import prepare
from benchwatch.profiling.speedscope import ProfileReport, VariantProfile, difference, per_request
from benchwatch.project.variants import Variant
from benchwatch.results.files import write_json_atomic

RATE = 200  # samples per second
# py-spy reads the server's memory without pausing it: pausing it 200 times a second moved
# base's and head's request rates apart by 2x in a trial here
EXTRA: list[str] = ["--nonblocking"]
MIN_SECONDS = 5.0  # per endpoint: enough samples for a function worth a few % of a request
CONCURRENCY = 10
WARMUP = 0.3


def py_spy() -> str | None:
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.is_file() else shutil.which("py-spy")


def profile_pairs(
    oha: str,
    pairs: Sequence[tuple[Variant, Variant]],
    environments: dict[str, Env],
    out: Path,
    *,
    quick: bool,
    duration: float,
) -> ProfileReport:
    spy = py_spy()
    if spy is None:
        return ProfileReport(available=False, reason="py-spy not found (pip install py-spy)")
    report = ProfileReport(available=True, duration_s=duration)
    for base, head in pairs:
        try:
            report.variants.append(
                _profile_pair(spy, oha, base, head, environments, out, quick, duration)
            )
        except (server.BootError, OSError, ValueError, KeyError) as exc:
            reason = getattr(exc, "reason", str(exc))
            tail = getattr(exc, "stderr_tail", "").strip().splitlines()
            return ProfileReport(
                available=False,
                reason=f"{base.scenario}: {reason}" + (f" ({tail[-1]})" if tail else ""),
            )
    return report


def _profile_pair(
    spy: str,
    oha: str,
    base: Variant,
    head: Variant,
    environments: dict[str, Env],
    out: Path,
    quick: bool,
    duration: float,
) -> VariantProfile:
    out.mkdir(parents=True, exist_ok=True)
    files = {role: out / f"{base.scenario}-{role}.speedscope.json" for role in ("base", "head")}
    # not pinned: two servers sharing one core are preempted where they wake the load generator
    # (a socket write), and py-spy counts a preempted thread as busy there; unpinned, that
    # artefact shrank and the injected function came out on top in a trial here
    server_cores, oha_cores = None, None
    requests = {"base": 0, "head": 0}
    cpu = {"base": 0.0, "head": 0.0}
    with ExitStack() as stack:
        servers = []
        for role, variant in (("base", base), ("head", head)):
            files[role].unlink(missing_ok=True)
            wrap = [
                spy,
                "record",
                "--output",
                str(files[role]),
                "--format",
                "speedscope",
                "--rate",
                str(RATE),
                *EXTRA,
                "--",
            ]
            servers.append(
                (
                    role,
                    variant,
                    stack.enter_context(
                        launch.running(
                            variant,
                            environments[variant.env_key],
                            launch.ServerOptions(cpu=server_cores, role=role, wrap=wrap),
                        )
                    ),
                )
            )
        for endpoint in base.timed_endpoints(quick):
            for seconds in (WARMUP, max(duration, MIN_SECONDS)):
                sent = {
                    role: prepare(variant.app, endpoint, srv.context)
                    for role, variant, srv in servers
                }
                specs = [
                    (
                        role,
                        loadgen.LoadSpec(
                            url=srv.base_url + sent[role].target,
                            duration=seconds,
                            concurrency=CONCURRENCY,
                            method=sent[role].method,
                            body=sent[role].body,
                            content_type=sent[role].content_type,
                            headers=sent[role].headers,
                        ),
                    )
                    for role, variant, srv in servers
                ]
                before = {role: _served_cpu(srv) for role, _, srv in servers}
                with ThreadPoolExecutor(max_workers=len(specs)) as pool:
                    runs = list(pool.map(lambda rs: loadgen.run_oha(oha, rs[1], oha_cores), specs))
                for (role, _), run, (_, _, srv) in zip(specs, runs, servers, strict=True):
                    requests[role] += run.outcome.successes
                    cpu[role] += _served_cpu(srv) - before[role]
    missing = [role for role, path in files.items() if not path.is_file()]
    if missing:
        raise ValueError(
            f"py-spy wrote no profile for {' and '.join(missing)} (not permitted to trace here?)"
        )
    sides = {role: per_request(files[role], requests[role], cpu[role]) for role in files}
    everything = difference(sides["base"], sides["head"], top=10**6)
    diff = out / f"{base.scenario}-diff.json"
    write_json_atomic(
        diff,
        {
            "unit": "CPU µs per request",
            "base": base.id,
            "head": head.id,
            "requests": requests,
            "functions": [f.model_dump() | {"change_us": f.change_us} for f in everything],
        },
    )
    return VariantProfile(
        scenario=base.scenario,
        requests=requests,
        sampled_seconds={r: round(s.seconds, 3) for r, s in sides.items()},
        functions=everything[:8],
        files={**{r: str(p) for r, p in files.items()}, "diff": str(diff)},
    )


def _served_cpu(srv: server.Server) -> float:
    """User+system seconds of the server under py-spy (its children), not of py-spy itself."""
    total = 0.0
    try:
        children = psutil.Process(srv.pid).children(recursive=True)
    except psutil.Error:
        return 0.0
    for child in children:
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total

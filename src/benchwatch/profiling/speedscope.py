"""py-spy's speedscope files: CPU per request per function, and the difference of two sides.

A sampled profile lists stacks (root first) with weights in seconds. py-spy leaves idle
threads out, but a thread waiting for a busy core still counts, so the samples give each
function's *share*; the CPU per request comes from the server's own CPU clock over the load
window. Start-up (imports, uvicorn loading the app) is left out: it is not per request."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

# uvicorn starting and importing the app; any import (a first request's lazy import too)
BOOT_FRAMES = (
    "Config.load",
    "Config.load_app",
    "Config.configure_logging",
    "Server.startup",
    "import_from_string",
)
BOOT_FILES = ("<frozen importlib",)
TOP = 8


class FunctionTime(BaseModel):
    function: str  # "spin_cpu (apps/_inject.py)"
    base_us: float  # CPU µs per request in the function itself (self time)
    head_us: float
    base_total_us: float = 0.0  # with everything it calls (inclusive)
    head_total_us: float = 0.0

    @property
    def change_us(self) -> float:
        return self.head_us - self.base_us


class ProfileSide(BaseModel):
    seconds: float  # sampled CPU seconds while serving (boot left out)
    requests: int
    self_us: dict[str, float]
    total_us: dict[str, float]


class VariantProfile(BaseModel):
    scenario: str
    requests: dict[str, int]  # base, head: answers served while profiled
    sampled_seconds: dict[str, float]
    functions: list[FunctionTime]
    files: dict[str, str]  # base, head, diff


class ProfileReport(BaseModel):
    available: bool
    reason: str = ""
    duration_s: float = 0.0
    variants: list[VariantProfile] = []


def _short(file: str) -> str:
    parts = Path(file).parts
    if "site-packages" in parts:
        return "/".join(parts[parts.index("site-packages") + 1 :])
    return "/".join(parts[-2:])


def _label(frame: dict) -> str:
    """A function, whichever of its lines was running: "spin_cpu (apps/_inject.py)"."""
    return f"{frame.get('name', '?')} ({_short(str(frame.get('file') or '?'))})"


def per_request(path: Path, requests: int, cpu_seconds: float | None = None) -> ProfileSide:
    """Self and inclusive CPU µs per request of every function in one speedscope file: each
    function's share of the samples times `cpu_seconds` (the samples' own total when None)."""
    data = json.loads(path.read_text())
    frames = data["shared"]["frames"]
    labels = [_label(f) for f in frames]
    boot = {
        i
        for i, f in enumerate(frames)
        if f.get("name") in BOOT_FRAMES or str(f.get("file", "")).startswith(BOOT_FILES)
    }
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    seconds = 0.0
    for profile in data["profiles"]:
        if profile.get("type") != "sampled":
            continue
        scale = {
            "seconds": 1.0,
            "milliseconds": 1e-3,
            "microseconds": 1e-6,
            "nanoseconds": 1e-9,
        }.get(profile.get("unit"), 1.0)
        for stack, weight in zip(profile["samples"], profile["weights"], strict=True):
            if not stack or boot.intersection(stack):
                continue
            spent = weight * scale
            seconds += spent
            own[labels[stack[-1]]] += spent
            for name in {labels[i] for i in stack}:
                total[name] += spent
    scale = (cpu_seconds / seconds) if cpu_seconds is not None and seconds > 0 else 1.0
    per = 1e6 * scale / max(requests, 1)
    return ProfileSide(
        seconds=seconds,
        requests=requests,
        self_us={k: v * per for k, v in own.items()},
        total_us={k: v * per for k, v in total.items()},
    )


def difference(base: ProfileSide, head: ProfileSide, top: int = TOP) -> list[FunctionTime]:
    """The functions whose own CPU per request changed most, largest change first."""
    names = set(base.self_us) | set(head.self_us)
    rows = [
        FunctionTime(
            function=n,
            base_us=base.self_us.get(n, 0.0),
            head_us=head.self_us.get(n, 0.0),
            base_total_us=base.total_us.get(n, 0.0),
            head_total_us=head.total_us.get(n, 0.0),
        )
        for n in names
    ]
    rows.sort(key=lambda r: (-abs(r.change_us), r.function))
    return rows[:top]


def markdown(report: ProfileReport) -> list[str]:
    """The comment's "where the time went" section."""
    out = ["### Where the time went (py-spy, one extra round, not part of any verdict)", ""]
    if not report.available:
        return out + [f"Profiles unavailable: {report.reason}.", ""]
    for variant in report.variants:
        out += [
            f"**{variant.scenario}** — {variant.requests['base']} / {variant.requests['head']} requests profiled "
            "(base / head); CPU µs per request spent in the function itself:",
            "",
            "| function | base µs/req | head µs/req | change |",
            "|---|---|---|---|",
        ]
        for row in variant.functions:
            out.append(
                f"| `{row.function}` | {row.base_us:.1f} | {row.head_us:.1f} | {row.change_us:+.1f} |"
            )
        out.append("")
    out += [
        "Profiles (speedscope JSON, open at https://www.speedscope.app) and the differential table are in the "
        "compare output's `profile/` directory.",
        "",
    ]
    return out

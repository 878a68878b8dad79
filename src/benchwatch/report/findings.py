"""The seeds' published figures as data, and how to compute our comparable figure from a Run.

Their numbers are copied from the write-ups in shared/seeds/ (see `source`); ours are
computed from the run's valid figures only (single measurements, one variant after the
other), and next to them each question's side-by-side ratio with its 95 % interval
(run.extra.side_by_side, see compare/questions.py). When a figure is absent the answer is
None, rendered as "not measured in this run" — never estimated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchwatch.metrics import CPU, P50, P99, RPS, RSS_IDLE, RSS_PEAK, Closed, Metric
from benchwatch.metrics import metric as metric_of
from benchwatch.results import Figure, PairedRatio, Run, SideBySideInfo

NOT_MEASURED = "not measured in this run"
NO_SIDE_BY_SIDE = "not measured side by side in this run (run without the findings rounds)"


@dataclass(frozen=True)
class Answer:
    """Which side-by-side ratios of a question group answer a finding."""

    group: str  # compare/questions.py GROUPS key
    what: Metric = CPU
    heads: tuple[str, ...] = ()  # lane names; () = every lane
    steps: tuple[str, ...] = ()  # () = every step

    def picks(self, ratio: PairedRatio) -> bool:
        return (ratio.group == self.group and ratio.metric == self.what.key
                and (not self.heads or ratio.head in self.heads) and (not self.steps or ratio.step in self.steps))  # fmt: skip


@dataclass(frozen=True)
class Finding:
    seed: str
    scenario: str
    measured: str
    setup: str
    theirs: str
    ours: Callable[[FigureIndex], list[str]]
    note: str = ""
    answers: tuple[Answer, ...] = ()


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    query_has: str = ""

    def matches(self, label: str | None) -> bool:
        if not label:
            return False
        method, _, target = label.partition(" ")
        path, _, query = target.partition("?")
        return method == self.method and path == self.path and self.query_has in query


class FigureIndex:
    """Valid load figures of one run, looked up by what they measure."""

    def __init__(self, run: Run) -> None:
        self.figures = [f for f in run.figures if f.valid and f.kind == "load"]

    def closed(self, scenario: str, stack: str, endpoint: Endpoint, metric: Metric) -> dict[int, Figure]:
        """Closed-loop figures by concurrency."""
        return {
            f.setting.concurrency: f
            for f in self.figures
            if f.scenario == scenario and f.stack == stack and f.metric == metric.key
            and isinstance(f.setting, Closed) and endpoint.matches(f.endpoint)
        }  # fmt: skip

    def memory(self, scenario: str, stack: str, metric: Metric) -> Figure | None:
        return next((f for f in self.figures if f.scenario == scenario and f.stack == stack
                     and f.metric == metric.key), None)  # fmt: skip

    def pair(
        self, a: tuple[str, str], b: tuple[str, str], endpoints: tuple[Endpoint, Endpoint],
        metric: Metric, near: int | None = None,
    ) -> tuple[Figure, Figure] | None:  # fmt: skip
        """The same metric for (scenario, stack) a and b at a concurrency both measured:
        the one nearest `near`, else the highest."""
        left = self.closed(a[0], a[1], endpoints[0], metric)
        right = self.closed(b[0], b[1], endpoints[1], metric)
        common = sorted(set(left) & set(right))
        if not common:
            return None
        chosen = min(common, key=lambda c: abs(c - near)) if near else common[-1]
        return left[chosen], right[chosen]


def times(after: float, before: float) -> str:
    return f"{after / before:.2f}x" if before > 0 else "n/a"


def _lower(before: Figure, after: Figure) -> str:
    factor = before.value / after.value if after.value > 0 else float("nan")
    return f"{factor:.2f}x lower" if factor >= 1 else f"{1 / factor:.2f}x higher"


SERVICES = Endpoint("GET", "/services")


def _services(index: FigureIndex) -> list[str]:
    lines = []
    for after in ("seed-v2", "latest"):
        parts, concurrency = [], None
        for metric in (P50, P99):
            pair = index.pair(("services", "seed-v1"), ("services", after), (SERVICES, SERVICES), metric)
            if pair:
                concurrency = pair[0].setting.concurrency  # type: ignore[union-attr]
                parts.append(f"{metric.short} {pair[0].value:.3g}→{pair[1].value:.3g} ms ({_lower(*pair)})")
        if parts:
            lines.append(f"seed-v1→{after}: " + ", ".join(parts) + f" (oha closed loop c={concurrency})")
    return lines


def _cpu_per_1000(figure: Figure) -> str:
    return f"{figure.value:.4g} µs = {figure.value / 1000:.3g} s CPU per 1000 requests"


GH_PLAIN = Endpoint("GET", "/pydantic_only")
GH_CONFIG = Endpoint("GET", "/pydantic_with_orjson")
GH_THEN_ORJSON = Endpoint("GET", "/pydantic_then_orjson")
V2_STACKS = ("seed-v2", "v2-pre-rust", "latest")


def _github_orjson_response(index: FigureIndex) -> list[str]:
    lines = []
    for stack in V2_STACKS:
        pair = index.pair(("github_user", stack), ("github_user-orjson_response", stack),
                          (GH_PLAIN, GH_PLAIN), CPU)  # fmt: skip
        if pair:
            plain, orjson = pair
            lines.append(f"{stack}: plain {_cpu_per_1000(plain)}; ORJSONResponse "
                         f"{orjson.value:.4g} µs ({times(orjson.value, plain.value)} the CPU)")  # fmt: skip
    return lines


def _github_config(index: FigureIndex) -> list[str]:
    lines = []
    for stack in V2_STACKS:
        pair = index.pair(("github_user", stack), ("github_user", stack), (GH_PLAIN, GH_CONFIG),
                          CPU)  # fmt: skip
        if pair:
            line = (f"{stack}: json_serializer=orjson.dumps {pair[1].value:.4g} µs vs plain "
                    f"{pair[0].value:.4g} µs CPU/request ({times(pair[1].value, pair[0].value)})")  # fmt: skip
            really = index.pair(("github_user", stack), ("github_user", stack),
                                (GH_PLAIN, GH_THEN_ORJSON), CPU)  # fmt: skip
            if really:
                line += f"; really through orjson {really[1].value:.4g} µs ({times(really[1].value, really[0].value)})"
            lines.append(line)
    return lines


def _payload_cpu_ms(index: FigureIndex, path: str, stacks: Sequence[str]) -> dict[str, float]:
    endpoint = Endpoint("GET", path, "file=1mb")
    found = {}
    for stack in stacks:
        figures = index.closed("payloads", stack, endpoint, CPU)
        if figures:
            found[stack] = figures[max(figures)].value / 1000
    return found


def _payloads_model(index: FigureIndex) -> list[str]:
    found = _payload_cpu_ms(index, "/model_model_default", ("seed-v1", "seed-v2", "v1-last", "latest"))
    if "seed-v1" not in found or len(found) < 2:
        return []
    base = found["seed-v1"]
    return [f"{stack} {ms:.3g} ms" + ("" if stack == "seed-v1" else f" ({base / ms:.1f}x less)")
            for stack, ms in found.items()]  # fmt: skip


def _payloads_orjson(index: FigureIndex) -> list[str]:
    lines = []
    for stack in ("seed-v2", "latest"):
        values = []
        for path in ("/dict_none_orjson", "/dict_model_orjson", "/model_model_orjson"):
            values += list(_payload_cpu_ms(index, path, (stack,)).values())
        if values:
            lines.append(f"{stack}: {min(values):.3g}–{max(values):.3g} ms over {len(values)} orjson paths")
    return lines


def _posts_rps(path: str, method: str = "GET") -> Callable[[FigureIndex], list[str]]:
    endpoint = Endpoint(method, path)

    def compute(index: FigureIndex) -> list[str]:
        lines = []
        for after in ("seed-v2", "latest"):
            pair = index.pair(("posts", "seed-v1"), ("posts", after), (endpoint, endpoint), RPS, near=10)
            if pair:
                before, now = pair
                lines.append(f"seed-v1→{after}: {before.value:.4g}→{now.value:.4g} r/s "
                             f"({times(now.value, before.value)}, {before.setting.tag})")  # fmt: skip
        return lines

    return compute


def _posts_memory(index: FigureIndex) -> list[str]:
    lines = []
    for metric, name in ((RSS_IDLE, "idle"), (RSS_PEAK, "peak under load")):
        before = index.memory("posts", "seed-v1", metric)
        after = index.memory("posts", "seed-v2", metric)
        if before and after:
            change = (after.value / before.value - 1) * 100
            lines.append(f"{name}: {before.value:.1f}→{after.value:.1f} MB ({change:+.0f} %)")
    return lines


HELLO = Endpoint("GET", "/")


def _hello(index: FigureIndex) -> list[str]:
    lines = []
    for stack in ("seed-v1", "latest"):
        tops = {}
        for scenario in ("hello", "hello-falcon"):
            figures = index.closed(scenario, stack, HELLO, RPS)
            if figures:
                tops[scenario] = max(f.value for f in figures.values())
        if tops:
            line = f"{stack}: " + ", ".join(f"{s} max {v:,.0f} r/s" for s, v in tops.items())
            if len(tops) == 2:
                line += f" (FastAPI/Falcon {times(tops['hello'], tops['hello-falcon'])})"
            lines.append(line)
    return lines


FINDINGS: tuple[Finding, ...] = (
    Finding("000", "services", "latency percentiles, Pydantic v1 → v2",
            "locust, 1 req/s per user, 1 min per user count; FastAPI 0.98.0 + Pydantic 1.10.9 vs "
            "0.100.0b1 + 2.0b3; Python 3.10.6, laptop; v1 served 19 items, v2 20",
            "v2 2–3x lower latency percentiles (p50…p99) across user counts", _services,
            "ours: both serve 20 items; latency at the same concurrency",
            (Answer("services_v1_v2"),)),
    Finding("001", "github_user", "ORJSONResponse vs default response (Pydantic v2)",
            "TestClient, 1000 sequential requests timed with timeit; Python 3.13, FastAPI 0.115.12, "
            "Pydantic 2.11.2, orjson 3.10.16",
            "Pydantic v2 3.24 s vs ORJSONResponse 3.33 s per 1000 requests (1.03x): orjson not faster",
            _github_orjson_response, "ours: server CPU per request (µs ≙ ms per 1000 requests)",
            (Answer("github_user_orjson", heads=("ORJSONResponse",)),)),
    Finding("001", "github_user", "ConfigDict(json_serializer=orjson.dumps) (the seed's pattern 2)",
            "as above", "no gain from the orjson config",
            _github_config,
            "in Pydantic v2 this config key is accepted and never used: model_dump_json always "
            "serializes in pydantic-core (v1's option was Config.json_dumps), so it measures nothing different",
            (Answer("github_user_orjson", heads=("pydantic_with_orjson", "pydantic_then_orjson")),)),
    Finding("002", "payloads", "1 MB BusinessModel, model → response model → default response",
            "their run_test.py; FastAPI 0.100.0, Pydantic 1.10.12 vs 2.1.1; i7-1185G7",
            "v1 311 ms vs v2 15 ms per request (20.7x)", _payloads_model,
            "ours: server CPU ms per request", (Answer("payloads", heads=("seed-v2", "latest")),)),
    Finding("002", "payloads", "1 MB through the ORJSONResponse paths (v2)",
            "as above", "3–10 ms per request", _payloads_orjson, "ours: server CPU ms per request",
            (Answer("payloads", heads=tuple(f"latest {p}→ORJSONResponse"
                                            for p in ("dict→none", "dict→model", "model→model"))),)),
    Finding("003", "posts", "read 100 posts from the database (GET /posts?per_page=100)",
            "ab -c 10, 1000 requests, mean of 3 runs; FastAPI 0.98.0 vs 0.100.0b1; PostgreSQL in Docker",
            "126.9 → 371.2 r/s (2.92x)", _posts_rps("/posts"),
            "ours: SQLite unless DATABASE_URL was set", (Answer("posts_v1_v2", steps=("read",)),)),
    Finding("003", "posts", "100 posts built in memory (GET /posts_synthetic)", "as above",
            "172.6 → 1203.2 r/s (~7x)", _posts_rps("/posts_synthetic"), "",
            (Answer("posts_v1_v2", steps=("synthetic",)),)),
    Finding("003", "posts", "write one post (POST /posts)", "as above",
            "342.1 → 352.7 r/s (1.03x)", _posts_rps("/posts", "POST"), "",
            (Answer("posts_v1_v2", steps=("write",)),)),
    Finding("003", "posts", "server memory, v1 → v2", "docker stats before/after the test",
            "before 72.4 → 86.0 MiB, after 86.0 → 98.9 MiB: about +15 % with v2", _posts_memory, "",
            (Answer("posts_v1_v2", RSS_IDLE), Answer("posts_v1_v2", RSS_PEAK))),
    Finding("004", "hello", "hello-world saturation: FastAPI vs Falcon",
            "wrk2 -t2, 30 s at fixed rates 100…10000 r/s (10–1000 connections); Docker, author's laptop; "
            "Falcon under WSGI",
            "latency climbs past ~900 r/s (FastAPI) / ~540 r/s (Falcon): FastAPI/Falcon ≈ 1.67x", _hello,
            "ours: highest closed-loop rps; our Falcon is falcon.asgi under uvicorn",
            (Answer("hello_frameworks"),)),
)


@dataclass(frozen=True)
class FindingRow:
    finding: Finding
    ours: list[str]
    side_by_side: list[str]  # "head / base step: cpu/req 0.97x [0.95, 1.01]" or why there is none

    @property
    def measured(self) -> bool:
        return bool(self.ours)


def evaluate(run: Run) -> list[FindingRow]:
    index = FigureIndex(run)
    info = run.extra.side_by_side
    return [FindingRow(f, f.ours(index), side_by_side_lines(f, info)) for f in FINDINGS]


def side_by_side_lines(finding: Finding, info: SideBySideInfo | None) -> list[str]:
    """Each answer's ratios, or why the question was not measured (not selected, failed)."""
    if not finding.answers:
        return []
    if info is None:
        return [NO_SIDE_BY_SIDE]
    lines: list[str] = []
    for answer in finding.answers:
        if answer.group in info.not_run:
            lines.append(f"not run: {info.not_run[answer.group]}")
            continue
        picked = [paired_text(r) for r in info.ratios if answer.picks(r)]
        lines += picked or [f"not run: {answer.group} is not in this run's side-by-side rounds"]
    return list(dict.fromkeys(lines))


def paired_text(ratio: PairedRatio) -> str:
    """'seed-v2 / seed-v1 1mb: cpu/req 0.0531x [0.0498, 0.0560]'; 'no significant difference'
    when the interval holds 1."""
    about = metric_of("load", ratio.metric)
    what = about.short if about else ratio.metric
    where = f"{ratio.head} / {ratio.base}" + (f" {ratio.step}" if ratio.step else "")
    if ratio.ratio is None or ratio.low is None or ratio.high is None:
        return f"{where}: {what} no interval ({ratio.reason or 'not measured'})"
    text = f"{where}: {what} {ratio.ratio:.3g}x [{ratio.low:.3g}, {ratio.high:.3g}]"
    return text + (" no significant difference" if ratio.holds_one() else "")


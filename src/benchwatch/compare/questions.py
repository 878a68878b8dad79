"""The seeds' questions as side-by-side measurements: which servers are loaded at the same moment.

Each `Group` is one `run_rounds` call: its lanes are booted together in every round and loaded
at the same moment, step by step (a step is one endpoint per lane: the same payload size, or
the lanes' own endpoints for a question about endpoints). Its ratios are head lane / base lane
for each of its pairs (by default every lane against the first). No I/O here:
`findings_rounds` measures them, `report.findings` shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchwatch.metrics import CPU, RSS_IDLE, RSS_PEAK, Metric


@dataclass(frozen=True)
class Lane:
    variant: str  # variant id
    endpoints: tuple[str, ...]  # endpoint name per step, in the group's step order
    name: str  # what the report calls it ("seed-v2", "ORJSONResponse")


@dataclass(frozen=True)
class Group:
    key: str
    steps: tuple[str, ...]
    lanes: tuple[Lane, ...]
    metrics: tuple[Metric, ...] = (CPU,)
    pairs: tuple[tuple[int, int], ...] = ()  # (base, head) lane indexes; () = every lane against lanes[0]
    # memory after boot needs a fresh boot per round; otherwise the servers, booted once, are
    # measured in every round (boots are most of the cost)
    boot_every_round: bool = False

    def ratios(self) -> list[tuple[Lane, Lane]]:
        pairs = self.pairs or tuple((0, i) for i in range(1, len(self.lanes)))
        return [(self.lanes[b], self.lanes[h]) for b, h in pairs]


V1_V2 = ("seed-v1", "seed-v2", "latest")  # the seeds' before and after, and today


def _stacks(variant: str, endpoints: Sequence[str], stacks: Sequence[str] = V1_V2) -> tuple[Lane, ...]:
    return tuple(Lane(f"{variant}@{stack}", tuple(endpoints), stack) for stack in stacks)


PAYLOAD_SIZES = ("1kb", "1mb")


def _payload_path(path: str, name: str, stack: str = "latest") -> Lane:
    return Lane(f"payloads@{stack}", tuple(f"{path}_{size}" for size in PAYLOAD_SIZES), name)


# fmt: off
GROUPS: tuple[Group, ...] = (
    Group("services_v1_v2", ("list",), _stacks("services", ["list"])),
    Group("github_user_orjson", ("user",), (
        Lane("github_user@latest", ("pydantic_only",), "pydantic_only"),
        Lane("github_user@latest", ("pydantic_with_orjson",), "pydantic_with_orjson"),
        Lane("github_user@latest", ("pydantic_then_orjson",), "pydantic_then_orjson"),
        Lane("github_user-orjson_response@latest", ("pydantic_only",), "ORJSONResponse"),
    )),
    # one group for both payload questions: the latest model→model→default server serves both
    Group("payloads", PAYLOAD_SIZES, (
        _payload_path("model_model_default", "latest", "latest"),
        _payload_path("model_model_default", "seed-v1", "seed-v1"),
        _payload_path("model_model_default", "seed-v2", "seed-v2"),
        _payload_path("dict_none_orjson", "latest dict→none→ORJSONResponse"),
        _payload_path("dict_model_orjson", "latest dict→model→ORJSONResponse"),
        _payload_path("model_model_orjson", "latest model→model→ORJSONResponse"),
    ), pairs=((1, 2), (1, 0), (0, 3), (0, 4), (0, 5))),
    Group("posts_v1_v2", ("read", "synthetic", "write"), _stacks("posts", ["read", "synthetic", "write"]),
          (CPU, RSS_IDLE, RSS_PEAK), boot_every_round=True),
    Group("hello_frameworks", ("hello",), (
        Lane("hello@latest", ("hello",), "FastAPI"),
        Lane("hello-falcon@latest", ("hello",), "Falcon"),
        Lane("hello-starlette@latest", ("hello",), "Starlette"),
        Lane("hello-asgi@latest", ("hello",), "raw ASGI"),
    )),
)
# fmt: on
BY_KEY = {group.key: group for group in GROUPS}


def chosen_lanes(group: Group, selected: Sequence[str]) -> tuple[Lane, ...] | str:
    """The lanes of the group's pairs whose two variants were both selected, or why the group
    cannot run (no such pair)."""
    present = set(selected)
    runnable = [(b, h) for b, h in group.ratios() if b.variant in present and h.variant in present]
    if not runnable:
        missing = sorted({lane.variant for lane in group.lanes if lane.variant not in present})
        return f"not selected ({', '.join(missing)} not in this run)"
    return tuple(lane for lane in group.lanes if any(lane in pair for pair in runnable))

"""One figure identity: the typed key of every published figure, its one encoder (the name
github-action-benchmark stores, a trend's key for years) and its one decoder (data.js keeps
only names, so the trend pages, the change-point reader and the site read them back here).

The names, which never change:

    <variant> <endpoint> <setting> <metric>[<mark>]   `hello@latest GET / c=10 cpu/req`
    <variant> <metric>[<mark>]                         `posts@seed-v2 rss peak` (per server)
    micro <case words> <operation>[ instructions]@<stack>[<mark>]
                                                       `micro payloads-1MB dump_json@latest`

`<variant>` is `<scenario>@<stack>`, the scenario an app or `app-flavor`; `<setting>` is
`c=N`, `rate=P%` or `seq` (metrics.Closed/Open/Counted); a mark is `" (side by side)"` or a
trend's `" (vs parent)"`. Endpoint labels hold spaces, so a name is read from both ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from benchwatch.figures.metrics import (
    METRICS,
    MICRO_INSTRUCTIONS,
    MICRO_PEAKMEM,
    MICRO_TIME,
    OPEN_TAG_PREFIX,
    Closed,
    Counted,
    Metric,
    Open,
    Setting,
)

MICRO_PREFIX = "micro "
COUNTER_WORD = "instructions"  # the last case word of a micro-benchmark's instruction count
SIDE_BY_SIDE = " (side by side)"  # measured with another server on the same core (compare)
RELATIVE_MARK = "(vs "  # a ratio measured side by side, e.g. "... cpu/req (vs parent)"
PARENT_MARK = "(vs parent)"  # each point: one commit against its parent, side by side
_LOAD_METRICS = sorted(
    (m for m in METRICS if m.short and not m.key.startswith("micro")), key=lambda m: -len(m.short)
)
_CLOSED = re.compile(r"c=(\d+)$")
_OPEN = re.compile(re.escape(OPEN_TAG_PREFIX) + r"(\d+(?:\.\d+)?)%$")


def app_of(scenario: str) -> str:
    """The app of a scenario (`hello-falcon` → `hello`; a micro case `payloads-1MB` → `payloads`).
    The one place this rule lives: app names hold no `-`."""
    return scenario.split("-", 1)[0]


def variant_id(scenario: str, stack: str) -> str:
    return f"{scenario}@{stack}"


def split_variant(variant: str) -> tuple[str, str] | None:
    """`hello-falcon@latest` → ("hello-falcon", "latest"); None when it is no variant id."""
    scenario, at, stack = variant.rpartition("@")
    return (scenario, stack) if at and scenario and stack else None


@dataclass(frozen=True)
class FigureKey:
    kind: Literal["load", "micro"]
    scenario: str  # load: the variant's scenario; micro: the app of the case
    stack: str
    metric: Metric
    endpoint: str | None = None  # load figures per endpoint: its label (`GET /`)
    setting: Setting = None  # load figures per endpoint
    words: tuple[str, ...] = ()  # micro: the case's parameter labels, then its operation
    mark: str = ""  # SIDE_BY_SIDE, or " (vs parent)" on a relative trend

    @property
    def app(self) -> str:
        return app_of(self.scenario)

    @property
    def variant(self) -> str:
        return variant_id(self.scenario, self.stack)

    @property
    def relative(self) -> bool:
        return RELATIVE_MARK in self.mark

    @property
    def figure(self) -> str:
        """What is measured, without the variant or stack (`GET / c=10 cpu/req`, `services validate_json`)."""
        if self.kind == "micro":
            return " ".join(
                self.words + ((COUNTER_WORD,) if self.metric is MICRO_INSTRUCTIONS else ())
            )
        if self.setting is None:
            return self.metric.short
        return f"{self.endpoint} {self.setting.tag} {self.metric.short}"

    @property
    def series(self) -> str:
        """The line a figure is drawn on among its kind: a variant id, or for micro figures a stack."""
        return self.stack if self.kind == "micro" else self.variant

    @property
    def name(self) -> str:
        """The published name (encode)."""
        if self.kind == "micro":
            return f"{MICRO_PREFIX}{self.figure}@{self.stack}{self.mark}"
        return f"{self.variant} {self.figure}{self.mark}"

    def marked(self, mark: str) -> FigureKey:
        return replace(self, mark=mark)


def load_key(
    variant: str, endpoint: str, setting: Closed | Open | Counted, what: Metric, mark: str = ""
) -> FigureKey:
    scenario, _, stack = variant.rpartition("@")  # an A/A copy's label (`hello@latest'`) too
    return FigureKey("load", scenario, stack, what, endpoint, setting, mark=mark)


def server_key(variant: str, what: Metric, mark: str = "") -> FigureKey:
    """A figure per server, not per endpoint (RSS)."""
    scenario, _, stack = variant.rpartition("@")
    return FigureKey("load", scenario, stack, what, mark=mark)


def micro_key(
    labels: tuple[str, ...] | list[str],
    operation: str,
    stack: str,
    *,
    instructions: bool = False,
    scenario: str | None = None,
) -> FigureKey:
    """An asv case's figure: its labels (`payloads-1MB`), its operation (`dump_json`); the
    scenario defaults to the app of its first label."""
    what = (
        MICRO_INSTRUCTIONS
        if instructions
        else (MICRO_PEAKMEM if operation.startswith("peakmem") else MICRO_TIME)
    )
    words = (*labels, operation)
    return FigureKey(
        "micro", scenario or (app_of(labels[0]) if labels else "micro"), stack, what, words=words
    )


def decode(name: str) -> FigureKey | None:
    """The key of a published name; None for a name benchwatch never wrote."""
    body, mark = name, ""
    at = name.find(f" {RELATIVE_MARK}")
    if at >= 0:
        body, mark = name[:at], name[at:]
    elif name.endswith(SIDE_BY_SIDE):
        body, mark = name.removesuffix(SIDE_BY_SIDE), SIDE_BY_SIDE
    if body.startswith(MICRO_PREFIX):
        return _decode_micro(body.removeprefix(MICRO_PREFIX), mark)
    variant, _, rest = body.partition(" ")
    parts = split_variant(variant)
    if parts is None or not rest:
        return None
    scenario, stack = parts
    what = next((m for m in _LOAD_METRICS if rest == m.short or rest.endswith(" " + m.short)), None)
    if what is None:
        return None
    if rest == what.short:
        return FigureKey("load", scenario, stack, what, mark=mark) if what.per_variant else None
    endpoint, _, tag = rest.removesuffix(" " + what.short).rpartition(" ")
    setting = _setting(tag)
    if setting is None or not endpoint:
        return None
    return FigureKey("load", scenario, stack, what, endpoint, setting, mark=mark)


def _decode_micro(body: str, mark: str) -> FigureKey | None:
    words_text, at_sign, stack = body.rpartition("@")
    words = tuple(words_text.split())
    if not at_sign or not stack or not words:
        return None
    instructions = words[-1] == COUNTER_WORD and len(words) > 1
    if instructions:
        words = words[:-1]
    key = micro_key(words[:-1], words[-1], stack, instructions=instructions)
    return key.marked(mark)


def _setting(tag: str) -> Setting:
    if tag == Counted().tag:
        return Counted()
    closed = _CLOSED.fullmatch(tag)
    if closed:
        return Closed(int(closed.group(1)))
    opened = _OPEN.fullmatch(tag)
    if opened:
        return Open(float(opened.group(1)) / 100)
    return None


# A figure's label (results.schema.figure_label): what it measures without the stack or the side,
# `<scenario> <endpoint> <setting> <metric key>` (`hello GET / c=10 cpu_us_per_request`), the key
# compare rows and calibration.json pair on. Endpoint labels hold spaces, so a label is read from
# its end, here only.


def label_metric(label: str) -> str:
    """`hello GET / c=10 cpu_us_per_request` → `cpu_us_per_request`."""
    return label.rsplit(" ", 1)[-1]


def label_without_metric(label: str) -> str:
    """`hello GET / seq instructions_per_request` → `hello GET / seq`: the endpoint key a count's
    three figures (cost, instructions, system calls) share."""
    return label.rsplit(" ", 1)[0]


def setting_apart(endpoint_key: str) -> str:
    """`hello GET / seq` → `hello GET /` (an endpoint key, `label_without_metric`, without its
    setting): what an endpoint's counts and its timings share."""
    return endpoint_key.rsplit(" ", 1)[0]


def label_for_metric(label: str, metric_key: str) -> str:
    """The label of the same endpoint and setting for another metric (a cost's instructions)."""
    return f"{label_without_metric(label)} {metric_key}"


def open_loop_label(label: str) -> bool:
    """Whether a label names an open-loop setting (metrics.Open's tag, `rate=50%`)."""
    return any(isinstance(_setting(word), Open) for word in label.split()[1:])

"""publish/nightly.py: the overview's largest moves since the night before name a count that
appeared from 0 (or a move with no ratio that a change point marks) first, by its values."""

from __future__ import annotations

from benchwatch.publish.nightly import nightly_status
from benchwatch.publish.trend_read import Chart, Line, Point, Publish, Trend


def _line(name: str, before: float, after: float) -> Line:
    return Line(
        "hello",
        name,
        "latest",
        [
            Point(0, before, None, "a" * 40, "2026-11-27"),
            Point(1, after, None, "b" * 40, "2026-11-28"),
        ],
    )


def _trend(*lines: Line) -> Trend:
    chart = Chart("hello", "figures", "per request", False, absolute=list(lines))
    nights = [
        Publish("a" * 40, "2026-11-27", "", "night 1"),
        Publish("b" * 40, "2026-11-28", "", "night 2"),
    ]
    return Trend("nightly", "nightly/data.js", True, nights, {"hello": [chart]})


def _items(html: str) -> list[str]:
    return [part.split(">", 1)[1].split("</li>")[0] for part in html.split("<li ")[1:]]


def test_a_count_from_zero_is_listed_first_by_its_values_and_noise_below_zero_is_left_out() -> None:
    trend = _trend(
        _line("GET / instructions", 100.0, 110.0),
        _line("GET / statements", 0.0, 2.0),
        _line("GET /items retained", -0.1, -0.2),  # no ratio, no change point, not from 0
    )
    items = _items(nightly_status(trend, None, {}))
    assert items == [
        "GET / statements: 0 → 2 since the night before — no change point: within the night-to-night noise",
        "GET / instructions: 1.10x slower than the night before — no change point: within the night-to-night noise",
    ]


def test_a_move_with_no_ratio_that_a_change_point_marks_is_shown_in_its_tone() -> None:
    trend = _trend(_line("GET / retained", -0.1, 1.0), _line("GET / instructions", 100.0, 100.0))
    mark = {"kind": "regression", "index": 1, "after": {"commit": "b" * 40}}
    html = nightly_status(trend, None, {("hello", "GET / retained"): [mark]})
    assert (
        "<li data-judged='1' class='worse'>GET / retained: -0.1 → 1 since the night before — change point (regression)</li>"
        in html
    )
    assert _items(html)[1].startswith("GET / instructions: no move since the night before")

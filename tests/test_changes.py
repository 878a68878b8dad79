"""`benchwatch changes`: reading data.js, change points, acks, output and exit codes."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, benchwatch

from benchwatch.cli import main
from benchwatch.errors import UserError
from benchwatch.results.schema import Figure, Run
from benchwatch.trend import acks, histories, history
from benchwatch.trend.changes import ABSOLUTE, RELATIVE, Point, Series, analyse, params_for

CPU = "svc@latest GET / c=10 cpu/req"
RPS = "svc@latest GET / c=10 rps"
REL = "svc@next GET / c=10 cpu/req (vs baseline)"  # a ratio against a fixed reference: level
PARENT = "svc@latest GET / c=10 cpu/req (vs parent)"  # each commit against its parent: spikes
SMALLER, BIGGER = "customSmallerIsBetter", "customBiggerIsBetter"


def _sha(i: int) -> str:
    return f"{i:07x}" + "ab" * 16 + "c"


def _values(
    n: int,
    step_at: int | None = None,
    factor: float = 1.0,
    noise: float = 0.01,
    seed: int = 0,
    level: float = 100.0,
) -> list[float]:
    rng = np.random.default_rng(seed)
    values = level * np.exp(rng.normal(0.0, noise, n))
    if step_at is not None:
        values[step_at:] *= factor
    return [float(v) for v in values]


def _clean(step_at: int | None = None, factor: float = 1.0, seed: int = 0) -> list[float]:
    """40 points oscillating +-0.5 % (a fast sine: no random wobble), with a step: for tests
    about output and acks, not detection power (random backgrounds are in those tests)."""
    values = [100.0 * (1.0 + seed) * (1.0 + 0.005 * math.sin(1.7 * i)) for i in range(40)]
    return [
        v * (factor if step_at is not None and i >= step_at else 1.0) for i, v in enumerate(values)
    ]


def _series(name: str, values: list[float], bigger: bool = False) -> Series:
    points = tuple(
        Point(_sha(i), f"2026-10-{1 + i % 28:02d}T00:00:00Z", v) for i, v in enumerate(values)
    )
    return Series("data.js", "suite", name, "us", bigger, points)


def _write(path: Path, suites: dict[str, tuple[str, dict[str, list[float]]]]) -> Path:
    """A data.js with one entry per commit per suite: {suite: (tool, {bench: values})}."""
    entries = {}
    for suite, (tool, benches) in suites.items():
        n = len(next(iter(benches.values())))
        entries[suite] = [
            {
                "commit": {
                    "id": _sha(i),
                    "message": "m",
                    "timestamp": f"2026-10-{1 + i % 28:02d}T00:00:00Z",
                    "url": f"https://example.org/commit/{_sha(i)}",
                },
                "date": 1_790_000_000_000 + i,
                "tool": tool,
                "benches": [
                    {"name": name, "unit": "us", "value": values[i]}
                    for name, values in benches.items()
                ],
            }
            for i in range(n)
        ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        history.PREFIX + json.dumps({"lastUpdate": 0, "repoUrl": "", "entries": entries})
    )
    return path


def _history(directory: Path, cpu: list[float], rps: list[float] | None = None) -> Path:
    suites = {"smaller": (SMALLER, {CPU: cpu})}
    if rps is not None:
        suites["bigger"] = (BIGGER, {RPS: rps})
    return _write(directory / "data.js", suites)


def test_reads_the_main_and_nightly_layouts(tmp_path: Path) -> None:
    _write(tmp_path / "dev" / "bench" / "data.js", {"s": (SMALLER, {CPU: [1.0, 2.0]})})
    _write(tmp_path / "nightly" / "data.js", {"n": (BIGGER, {RPS: [3.0, 4.0, 5.0]})})
    files, series = histories.load([tmp_path])
    assert [f.relative_to(tmp_path).as_posix() for f in files] == [
        "dev/bench/data.js",
        "nightly/data.js",
    ]
    by_name = {s.name: s for s in series}
    assert [p.value for p in by_name[CPU].points] == [1.0, 2.0] and not by_name[
        CPU
    ].bigger_is_better
    assert by_name[RPS].bigger_is_better and by_name[RPS].points[-1].commit == _sha(2)
    _, since = histories.load([tmp_path], since=2)
    assert [len(s.points) for s in since] == [2, 2]
    with pytest.raises(UserError, match="no data.js there"):
        histories.load([tmp_path / "dev"])


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda text: text[: len(text) // 2], "corrupt history"),
        (lambda text: text.replace("window.BENCHMARK_DATA = ", ""), "not a data.js history"),
        (
            lambda text: text.replace('"value": 2.0', '"value": "fast"', 1),
            "benches[0].value: 'fast'",
        ),
        (lambda text: text.replace(SMALLER, "pytest", 1), "tool: 'pytest' is not"),
    ],
)
def test_a_damaged_history_is_one_error_line_and_nothing_is_written(
    tmp_path: Path, damage, message, capsys
) -> None:
    path = _history(tmp_path, [1.0, 2.0, 3.0])
    path.write_text(damage(path.read_text()))
    out = tmp_path / "out.json"
    code = main(["changes", "--data", str(tmp_path), "--json-file", str(out)])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1
    assert err.startswith(f"ERROR: {path}: ") and message in err
    assert not out.exists()


def _at(changes, index: int):
    [found] = [c for c in changes if c.index == index]
    return found


def test_a_step_is_found_at_its_commit_with_its_size_and_direction() -> None:
    slower = analyse(_series(CPU, _values(40, step_at=25, factor=1.10)))
    assert slower.verdict == "changes"
    change = _at(slower.changes, 25)
    assert change.kind == "regression"
    assert 1.08 < change.ratio < 1.12 and change.low < 1.10 < change.high and change.low > 1.0
    assert change.p_value < ABSOLUTE.max_pvalue and change.n_after == 15
    # 1 % noise may still show a smaller wobble elsewhere; nothing else near the step's size
    assert all(abs(c.ratio - 1.0) < 0.02 for c in slower.changes if c is not change)
    faster = analyse(
        _series(RPS, _values(40, step_at=12, factor=1.10, seed=4), bigger=True)
    ).changes
    assert _at(faster, 12).kind == "improvement"
    cheaper = analyse(_series(CPU, _values(40, step_at=30, factor=0.9, seed=5))).changes
    assert _at(cheaper, 30).kind == "improvement" and 0.88 < _at(cheaper, 30).ratio < 0.92


def test_a_relative_step_is_seen_two_commits_after_it_lands() -> None:
    values = _values(30, step_at=28, factor=1.05, noise=0.01, seed=3, level=1.0)
    found = analyse(_series(REL, values)).changes
    assert [(c.index, c.kind) for c in found] == [(28, "regression")]
    assert analyse(_series(CPU, values)).verdict == "no change"  # an absolute series waits for more


def test_a_regression_in_a_vs_parent_series_is_the_one_point_of_its_commit() -> None:
    values = _values(30, noise=0.01, seed=6, level=1.0)
    values[20] *= 1.12  # commit 20 is 12 % slower than its parent; 21 compares slow with slow
    result = analyse(_series(PARENT, values))
    assert params_for(PARENT).mode == "spike" and params_for(REL).mode == "level"
    [change] = result.changes
    assert (change.index, change.kind) == (20, "regression") and change.low < 1.12 < change.high
    # the same values read as a level series see no step: one point is not a new level
    assert analyse(_series(REL, values)).changes == []
    values[20] = values[21] / 1.12
    assert [(c.index, c.kind) for c in analyse(_series(PARENT, values)).changes] == [
        (20, "improvement")
    ]


def test_a_vs_parent_spike_whose_own_compare_saw_no_change_is_not_a_change_point(
    tmp_path: Path,
) -> None:
    # measured (tests/test_rehearsal.py, an unchanged commit): two of six open-loop rounds read
    # 1.14, the point 1.061 with its interval [0.987, 1.149]; compare called it unchanged
    values = _values(12, noise=0.005, seed=7, level=1.0)
    values[9] = 1.061
    ranges = ["± 0.006"] * 12
    ranges[9] = "± 0.0887"
    entries = [
        {
            "commit": {
                "id": _sha(i),
                "message": "m",
                "timestamp": f"2026-10-{1 + i:02d}T00:00:00Z",
            },
            "date": 1_790_000_000_000 + i,
            "tool": SMALLER,
            "benches": [{"name": PARENT, "unit": "ratio", "value": v, "range": r}],
        }
        for i, (v, r) in enumerate(zip(values, ranges, strict=True))
    ]
    path = tmp_path / "data.js"
    path.write_text(
        history.PREFIX + json.dumps({"lastUpdate": 0, "repoUrl": "", "entries": {"p": entries}})
    )
    [series] = histories.series_of(path)
    assert series.points[9].half == pytest.approx(0.0887) and analyse(series).changes == []
    # the same point measured tightly (or published without a range) is the commit's change
    tight = [
        p if i != 9 else dataclasses.replace(p, half=0.01) for i, p in enumerate(series.points)
    ]
    assert [c.index for c in analyse(dataclasses.replace(series, points=tuple(tight))).changes] == [
        9
    ]
    assert [c.index for c in analyse(_series(PARENT, values)).changes] == [9]


@pytest.mark.parametrize("seed", range(5))
def test_flat_series_have_no_change_point(seed: int) -> None:
    assert analyse(_series(CPU, _values(120, noise=0.03, seed=seed))).changes == []
    assert analyse(_series(REL, _values(120, noise=0.01, seed=seed, level=1.0))).changes == []
    assert analyse(_series(PARENT, _values(120, noise=0.01, seed=seed, level=1.0))).changes == []


def test_too_few_points_give_no_verdict_and_say_so() -> None:
    result = analyse(_series(CPU, _values(ABSOLUTE.min_points - 1, step_at=5, factor=2.0)))
    assert result.verdict == "too few points" and result.changes == []
    assert result.note == f"{ABSOLUTE.min_points - 1} points; needs {ABSOLUTE.min_points}"
    assert analyse(_series(REL, _values(RELATIVE.min_points))).verdict == "no change"


def test_cli_json_schema_and_exit_codes(tmp_path: Path, capsys) -> None:
    _history(tmp_path, _clean(step_at=25, factor=1.10), _clean(step_at=10, factor=0.8, seed=1))
    assert (
        main(["changes", "--data", str(tmp_path), "--json", "--acks", str(_acks(tmp_path, ""))])
        == 1
    )
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {
        "schema_version",
        "files",
        "since",
        "acks_file",
        "params",
        "summary",
        "series",
        "warnings",
    }
    assert document["summary"] == {
        "series": 2,
        "with_changes": 2,
        "changes": 2,
        "acknowledged": 0,
        "alerts": 1,
        "too_few_points": 0,
        "no_verdict": 0,
    }
    by_name = {s["name"]: s for s in document["series"]}
    cpu = by_name[CPU]
    assert (cpu["gating"], cpu["alert"], cpu["verdict"], cpu["points"]) == (
        True,
        True,
        "changes",
        40,
    )
    change = cpu["changes"][0]
    assert set(change) == {
        "index",
        "before",
        "after",
        "ratio",
        "low",
        "high",
        "confidence",
        "p_value",
        "n_before",
        "n_after",
        "kind",
        "acknowledged",
    }
    assert change["before"]["commit"] == _sha(24) and change["after"]["commit"] == _sha(25)
    assert change["after"]["url"].endswith(_sha(25)) and change["after"]["date"].startswith(
        "2026-10-"
    )
    assert change["kind"] == "regression" and change["acknowledged"] is None
    # rps dropped 20 %: a regression, but not a gating figure, so it does not set the exit code
    rps = by_name[RPS]
    assert rps["changes"][0]["kind"] == "regression" and not rps["gating"] and not rps["alert"]
    _history(tmp_path, _clean(step_at=25, factor=0.9), _clean(seed=1))
    assert main(["changes", "--data", str(tmp_path)]) == 0
    assert "| 1.11x faster | [1.1" in capsys.readouterr().out  # 0.9x the CPU per request


def _acks(directory: Path, body: str) -> Path:
    path = directory / acks.ACKS_FILE
    path.write_text(body)
    return path


def test_an_acknowledged_change_is_reported_and_does_not_alert(tmp_path: Path, capsys) -> None:
    _history(tmp_path, _clean(step_at=25, factor=1.10))
    path = _acks(
        tmp_path,
        f'[[ack]]\nfigure = "svc@latest * cpu/req"\ncommit = "{_sha(26)[:8]}"\n'
        'reason = "accepted: stricter validation"\n'
        '[[ack]]\nfigure = "svc@*"\ncommit = "deadbeef"\nreason = "old"\n',
    )
    args = ["changes", "--data", str(tmp_path), "--acks", str(path)]
    assert main([*args, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    ack = document["series"][0]["changes"][0]["acknowledged"]
    assert ack == {
        "ack": 1,
        "figure": "svc@latest * cpu/req",
        "commit": _sha(26)[:8],
        "reason": "accepted: stricter validation",
    }
    assert document["warnings"] == [
        f"{path}: ack.2.commit: deadbeef is not in the history of its "
        "series (older than --since, or a typo)"
    ]
    assert main(args) == 0
    assert "acknowledged (ack.1: accepted: stricter validation)" in capsys.readouterr().out
    _acks(tmp_path, f'[[ack]]\nfigure = "svc@latest * rps"\ncommit = "{_sha(25)}"\nreason = "x"\n')
    assert main(args) == 1  # an ack for another figure does not cover it
    capsys.readouterr()
    # in a (vs parent) series a change is one commit: an ack covers that commit only
    spiky = _clean()
    spiky[20] *= 1.1
    spiky[22] *= 1.1
    _write(tmp_path / "data.js", {"smaller": (SMALLER, {PARENT: spiky})})
    _acks(tmp_path, f'[[ack]]\nfigure = "*(vs parent)"\ncommit = "{_sha(20)}"\nreason = "x"\n')
    assert main([*args, "--json"]) == 1
    changes = json.loads(capsys.readouterr().out)["series"][0]["changes"]
    assert [(c["index"], c["acknowledged"] is not None) for c in changes] == [
        (20, True),
        (22, False),
    ]


@pytest.mark.parametrize(
    "body, message",
    [
        (
            '[[ack]]\nfigure = "svc[1"\ncommit = "abcdef0"\nreason = "r"\n',
            "ack.1.figure: unclosed '['",
        ),
        (
            '[[ack]]\nfigure = "a"\ncommit = "abcdef0"\nreason = "r"\n[[ack]]\nfigure = ""\ncommit = "abcdef0"\n'
            'reason = "r"\n',
            "ack.2.figure: must be a non-empty glob pattern",
        ),
        (
            '[[ack]]\nfigure = "a"\ncommit = "abc"\nreason = "r"\n',
            "ack.1.commit: 'abc' is not 7 to 40 hex",
        ),
        ('[[ack]]\nfigure = "a"\ncommit = "abcdef0"\n', "ack.1.reason: missing"),
        (
            '[[ack]]\nfigure = "a"\ncommit = "abcdef0"\nreason = "r"\nwhy = 1\n',
            "ack.1.why: unknown key",
        ),
        (
            '[[ack]]\nfigure = 3\ncommit = "abcdef0"\nreason = "r"\n',
            "ack.1.figure: must be a string",
        ),
        ("[[ack]\n", "not valid TOML"),
    ],
)
def test_a_bad_acks_file_is_one_error_naming_path_and_key(
    tmp_path: Path, body: str, message: str, capsys
) -> None:
    _history(tmp_path, _values(40))
    path = _acks(tmp_path, body)
    assert main(["changes", "--data", str(tmp_path), "--acks", str(path)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"ERROR: {path}: ") and message in err


def test_a_missing_acks_file_is_an_error_only_when_named(tmp_path: Path, capsys) -> None:
    _history(tmp_path, _values(40))
    assert main(["changes", "--data", str(tmp_path), "--acks", str(tmp_path / "nope.toml")]) == 3
    assert "nope.toml: no such acknowledgements file" in capsys.readouterr().err
    assert main(["changes", "--data", str(tmp_path), "--since", "0"]) == 3
    assert "--since 0: must be at least 1" in capsys.readouterr().err


def test_since_limits_the_entries_read(tmp_path: Path, capsys) -> None:
    _history(tmp_path, _values(60, step_at=20, factor=1.2))
    assert main(["changes", "--data", str(tmp_path), "--json", "--since", "30"]) == 0
    cpu = json.loads(capsys.readouterr().out)["series"][0]
    assert (cpu["points"], cpu["changes"]) == (30, [])
    assert main(["changes", "--data", str(tmp_path), "--json", "--since", "6"]) == 0
    assert json.loads(capsys.readouterr().out)["series"][0]["verdict"] == "too few points"


def _figure(name: str, value: float, bigger: bool) -> Figure:
    return Figure(
        name=name,
        kind="load",
        variant="svc@latest",
        scenario="svc",
        stack="latest",
        metric="rps" if bigger else "cpu_us_per_request",
        unit="req/s" if bigger else "us",
        bigger_is_better=bigger,
        samples=[value],
        value=value,
    )


def test_end_to_end_on_a_history_written_by_benchwatch_history(tmp_path: Path) -> None:
    cpu, rps = _values(24, step_at=14, factor=1.15), _values(24, seed=2, level=5000.0)
    for i in range(24):
        run = Run(
            started_at="2026-10-01T00:00:00+00:00",
            complete=True,
            environment={"git_commit": _sha(i)},
            figures=[_figure(CPU, cpu[i], False), _figure(RPS, rps[i], True)],
        )
        history.append(tmp_path / "dev" / "bench", run, REPO)
    out = tmp_path / "changes.json"
    done = benchwatch("changes", "--data", str(tmp_path), "--json-file", str(out), root=REPO)
    assert done.returncode == 1, done.stderr
    assert f"`{_sha(13)[:8]}`" in done.stdout and "1.15x slower" in done.stdout
    document = json.loads(out.read_text())
    [cpu_series] = [s for s in document["series"] if s["name"] == CPU]
    assert [c["after"]["commit"] for c in cpu_series["changes"]] == [_sha(14)]


@pytest.mark.parametrize(
    "name, gating",
    [
        ("hello@latest GET / c=10 cpu/req (side by side)", True),
        (PARENT, True),
        (RPS, False),
        ("hello@latest rss peak (side by side)", False),
        ("micro services-1k validate_json@latest", True),
        ("micro services-1k peakmem_validate_json@latest", False),
        ("hello@latest GET / seq instr/req", True),
        ("hello@latest GET / seq syscalls/req", True),
        ("hello@latest GET / c=10 user/req", False),
    ],
)
def test_gating_series_are_the_gating_metrics_of_metrics_py(name: str, gating: bool) -> None:
    assert Series("data.js", "s", name, "us", False, ()).gating is gating


def test_a_count_series_changes_at_the_one_commit_that_moved_it_past_its_floor() -> None:
    """Counts are deterministic: a 1 % step in instructions per request is found at its commit,
    from two points on, while the ±0.2 % of repeated counts is not a change."""
    name = "hello@latest GET / seq instr/req"
    assert params_for(name).mode == "step"
    wobble = [1.0, 1.002, 0.999, 1.001, 0.998, 1.0]
    values = [420_000.0 * w for w in wobble] + [420_000.0 * 1.01 * w for w in wobble]
    result = analyse(_series(name, values))
    assert [(c.index, c.kind) for c in result.changes] == [(6, "regression")]
    assert abs(result.changes[0].ratio - 1.01) < 1e-9  # point 6 (1.01 x 1.0) against point 5 (1.0)
    assert analyse(_series(name, values[:2])).verdict == "no change"
    improved = analyse(_series("hello@latest GET / seq syscalls/req", [8.0, 8.0, 6.0]))
    assert [(c.index, c.kind) for c in improved.changes] == [(2, "improvement")]


def test_statements_buffers_and_retained_series_change_from_zero_and_stay_quiet_at_zero() -> None:
    """Counts whose no-op is 0: a series of zeros is no change, 0 → N is a change at its commit
    (statements and retained memory past half a unit per request, database buffers past a page),
    and database buffers above 0 move by their ratio floor."""
    statements = "backend@own GET /api/v1/items/ seq statements/req"
    buffers = "backend@own GET /api/v1/items/ seq db buffers/req"
    retained = "backend@own GET /api/v1/users/me seq retained/req"
    assert {params_for(n).mode for n in (statements, buffers, retained)} == {"difference"}
    for name in (statements, buffers, retained):
        assert analyse(_series(name, [0.0] * 6)).verdict == "no change"
    found = analyse(_series(statements, [2.0, 2.0, 2.0, 13.0, 13.0]))
    assert [(c.index, c.kind) for c in found.changes] == [(3, "regression")]
    found = analyse(_series(buffers, [0.0, 0.0, 3.0, 3.0]))
    assert [(c.index, c.kind) for c in found.changes] == [(2, "regression")]
    assert math.isnan(found.changes[0].ratio)
    assert analyse(_series(buffers, [0.0, 0.5, 0.0])).verdict == "no change"
    assert analyse(_series(buffers, [30.0, 32.0, 31.0])).verdict == "no change"  # under 10 %
    found = analyse(_series(buffers, [30.0, 30.0, 600.0]))
    assert [(c.index, c.kind) for c in found.changes] == [(2, "regression")]
    found = analyse(_series(retained, [0.0, -0.2, 0.1, 4.0, 0.0]))
    assert [(c.index, c.kind) for c in found.changes] == [(3, "regression"), (4, "improvement")]

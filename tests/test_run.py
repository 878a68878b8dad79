from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, benchwatch, make_project, uvicorn_processes

from benchwatch.errors import UserError
from benchwatch.measure.load_plan import FULL, QUICK, parse_shard, shard
from benchwatch.project.loading import load_project
from benchwatch.results.files import read_run, write_run
from benchwatch.results.load_facts import LoadgenInfo, SkippedRun
from benchwatch.results.schema import Figure, Run, RunExtra
from benchwatch.trend import history

GOOD = REPO / "tests" / "fixtures" / "apps" / "good"
WRONG = REPO / "tests" / "fixtures" / "apps" / "wrong_body"


def _figure(name: str, variant: str, value: float, bigger: bool = False) -> Figure:
    return Figure(
        name=name,
        kind="load",
        variant=variant,
        scenario=variant.split("@")[0],
        stack=variant.split("@")[1],
        metric="rps" if bigger else "cpu_us_per_request",
        unit="req/s" if bigger else "us",
        bigger_is_better=bigger,
        samples=[value],
        value=value,
    )


def _run(*figures: Figure, shard_spec: str = "1/2", loadgen: LoadgenInfo | None = None) -> Run:
    return Run(
        started_at="2026-01-01T00:00:00+00:00",
        complete=True,
        figures=list(figures),
        extra=RunExtra(shard=shard_spec, load_plan=QUICK.info(), loadgen=loadgen),
    )


def _skipped(variant: str) -> SkippedRun:
    return SkippedRun(
        variant=variant,
        endpoint="GET /",
        params={"mode": "open", "rate_fraction": 0.25},
        reason="short",
    )


def test_shards_are_a_stable_partition() -> None:
    variants = load_project(REPO).variants()
    parts = [shard(variants, f"{i}/3") for i in (1, 2, 3)]
    ids = [v.id for part in parts for v in part]
    assert sorted(ids) == sorted(v.id for v in variants) and len(set(ids)) == len(ids)
    assert [v.id for v in shard(list(reversed(variants)), "2/3")] == [
        v.id for v in reversed(parts[1])
    ]
    work = [FULL.estimate(part) for part in parts]  # balanced: no part over 1.5x the mean
    assert max(work) <= 1.5 * sum(work) / len(work)
    for bad in ("0/2", "3/2", "x", "1/0"):
        with pytest.raises(UserError, match="--shard"):
            parse_shard(bad)


def test_merge_combines_shards_and_refuses_overlap(tmp_path: Path, cli) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_run(
        a,
        _run(
            _figure("x@latest GET / c=10 rps", "x@latest", 100.0, bigger=True),
            loadgen=LoadgenInfo(
                skipped=[_skipped("x@latest")], dropped_pairs=[_skipped("x@latest")]
            ),
        ),
    )
    write_run(
        b,
        _run(
            _figure("y@latest GET / c=10 cpu/req", "y@latest", 50.0),
            shard_spec="2/2",
            loadgen=LoadgenInfo(
                bottlenecked_runs=2,
                skipped=[_skipped("y@latest")],
                dropped_pairs=[_skipped("y@latest")],
            ),
        ),
    )
    out = tmp_path / "merged"
    done = cli("merge", str(a), str(b), "--out", str(out), root=REPO)
    assert done.returncode == 0, done.stderr
    merged = read_run(out)
    assert {f.name for f in merged.figures} == {
        "x@latest GET / c=10 rps",
        "y@latest GET / c=10 cpu/req",
    }
    assert [s.shard for s in merged.extra.shards] == ["1/2", "2/2"]
    loadgen = merged.extra.load.loadgen  # every shard's skipped and dropped measurements are kept
    assert loadgen is not None and loadgen.bottlenecked_runs == 2
    assert (
        [s.variant for s in loadgen.skipped]
        == [s.variant for s in loadgen.dropped_pairs]
        == ["x@latest", "y@latest"]
    )
    assert [e["name"] for e in json.loads((out / "gab-bigger.json").read_text())] == [
        "x@latest GET / c=10 rps"
    ]
    assert [e["name"] for e in json.loads((out / "gab-smaller.json").read_text())] == [
        "y@latest GET / c=10 cpu/req"
    ]

    done = cli("merge", str(a), str(a), "--out", str(tmp_path / "again"), root=REPO)
    assert done.returncode == 3
    assert "figure 'x@latest GET / c=10 rps' is in both" in done.stderr

    other = json.loads((b / "run.json").read_text())
    other["schema_version"] = 99
    (b / "run.json").write_text(json.dumps(other))
    done = cli("merge", str(a), str(b), "--out", str(tmp_path / "bad"), root=REPO)
    assert done.returncode == 3 and "schema version 99" in done.stderr


def test_history_appends_in_data_js_format_and_never_overwrites_a_corrupt_file(
    tmp_path: Path,
) -> None:
    run = _run(
        _figure("x@latest GET / c=10 rps", "x@latest", 100.0, bigger=True),
        _figure("x@latest GET / c=10 cpu/req", "x@latest", 40.0),
    )
    path = history.append(tmp_path, run, REPO)
    history.append(tmp_path, run, REPO)
    text = path.read_text()
    assert text.startswith("window.BENCHMARK_DATA = ")
    data = json.loads(text.removeprefix("window.BENCHMARK_DATA = "))
    assert set(data["entries"]) == {history.BIGGER, history.SMALLER}
    entries = data["entries"][history.SMALLER]
    assert len(entries) == 2 and entries[0]["tool"] == "customSmallerIsBetter"
    assert entries[0]["benches"] == [
        {
            "name": "x@latest GET / c=10 cpu/req",
            "unit": "us",
            "value": 40.0,
            "range": "± 0",
            "extra": "1 samples",
        }
    ]
    assert {"id", "message", "timestamp"} <= set(entries[0]["commit"])

    path.write_text("window.BENCHMARK_DATA = {broken")
    with pytest.raises(history.HistoryError, match="corrupt history"):
        history.append(tmp_path, run, REPO)
    assert path.read_text() == "window.BENCHMARK_DATA = {broken"


@pytest.mark.slow
def test_run_quick_writes_results_history_and_aa_noise(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", [GOOD, WRONG])
    hist = tmp_path / "history"
    for attempt in (1, 2):
        out = tmp_path / f"out{attempt}"
        done = benchwatch(
            "run",
            "--quick",
            "--no-micro",
            "-k",
            "good@latest,wrong_body@latest",
            "--out",
            str(out),
            "--history",
            str(hist),
            root=project,
        )
        assert done.returncode == 2, (
            done.stderr
        )  # not measured: wrong_body fails verify; good is still measured
        assert "wrong_body@latest GET /items [verify]" in done.stderr
    run = read_run(out)
    assert run.complete and any(f.valid and f.variant == "good@latest" for f in run.figures)
    assert not any(f.variant.endswith("'") for f in run.figures)  # the A/A copy is not a figure
    assert (
        run.extra.reference_stack is None
    )  # benchwatch.toml names none: no ratios, no stack of ours
    report = (out / "report.md").read_text()
    assert "reference stack" not in report
    # no [[questions]] declared: the run and its report say nothing about questions
    assert run.extra.side_by_side is None
    assert (
        "question" not in done.stderr
        and "question" not in report.lower()
        and "seed" not in report.lower()
    )
    noise = run.extra.load.aa_noise
    assert noise is not None and noise.variant == "good@latest"
    cpu = noise.figures["good@latest GET /items c=10 cpu/req"]
    assert cpu.cv >= 0 and len(cpu.a) == len(cpu.a_prime) == 1
    data = json.loads((hist / "data.js").read_text().removeprefix("window.BENCHMARK_DATA = "))
    assert len(data["entries"][history.SMALLER]) == 2
    assert uvicorn_processes(str(GOOD)) == []

    (hist / "data.js").write_text("garbage")
    done = benchwatch(
        "run",
        "--quick",
        "--no-micro",
        "-k",
        "good@latest",
        "--out",
        str(tmp_path / "o3"),
        "--history",
        str(hist),
        root=project,
    )
    assert done.returncode == 3 and "not a data.js history" in done.stderr
    assert (hist / "data.js").read_text() == "garbage"
    assert not (tmp_path / "o3").exists()  # refused before any work

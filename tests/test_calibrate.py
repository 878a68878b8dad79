import json

import numpy as np
import pytest
from conftest import make_project

from benchwatch.errors import UserError
from benchwatch.judge.calibrate import (
    DEFAULT_FLOORS,
    alert_threshold,
    floor_for,
    floors_from_aa,
    load_calibration,
    write_calibration,
)
from benchwatch.results.files import write_run
from benchwatch.results.schema import Environment, Figure, Run


def figure(metric, samples):
    return Figure(
        name=f"x {metric}",
        kind="load",
        variant="x@latest",
        scenario="x",
        stack="latest",
        metric=metric,
        unit="us",
        bigger_is_better=metric == "rps",
        samples=list(samples),
        value=float(np.median(samples)),
    )


def test_floors_per_metric_follow_the_noise_and_are_written_for_review(tmp_path):
    rng = np.random.default_rng(5)
    pairs = [
        (
            figure("cpu_us_per_request", rng.normal(100, 1, 16)),
            figure("cpu_us_per_request", rng.normal(100, 1, 16)),
        ),
        (figure("rps", rng.normal(1000, 80, 16)), figure("rps", rng.normal(1000, 80, 16))),
    ]
    floors, detail = floors_from_aa(pairs, compare_rounds=8)
    assert floors["cpu_us_per_request"] < floors["rps"]
    write_calibration(
        tmp_path,
        floors,
        detail,
        rounds=16,
        compare_rounds=8,
        variants=["x@latest"],
        environment=Environment(),
    )
    stored = json.loads((tmp_path / "calibration.json").read_text())
    assert stored["floors"] == floors and stored["rounds"] == 16 and "A/A" in stored["method"]
    calibration = load_calibration(tmp_path)
    assert floor_for("rps", calibration) == (floors["rps"], "metric")
    assert floor_for("latency_p99_ms", calibration) == (DEFAULT_FLOORS["latency_p99_ms"], "default")


def test_each_figure_keeps_its_own_floor_and_others_fall_back_to_the_noisiest(tmp_path):
    rng = np.random.default_rng(7)
    quiet = [figure("cpu_us_per_request", rng.normal(100, 1, 16)) for _ in range(2)]
    noisy = [
        figure("cpu_us_per_request", rng.normal(100, 20, 16)).model_copy(
            update={"scenario": "posts"}
        )
        for _ in range(2)
    ]
    floors, detail = floors_from_aa([tuple(quiet), tuple(noisy)], compare_rounds=8)
    calibration = write_calibration(
        tmp_path,
        floors,
        detail,
        rounds=16,
        compare_rounds=8,
        variants=[],
        environment=Environment(),
    )
    quiet_floor, source = floor_for("cpu_us_per_request", calibration, "x cpu_us_per_request")
    noisy_floor, _ = floor_for("cpu_us_per_request", calibration, "posts cpu_us_per_request")
    assert source == "figure" and quiet_floor < noisy_floor / 3
    # a figure never calibrated gets its metric's largest floor
    assert floor_for("cpu_us_per_request", calibration, "other cpu_us_per_request") == (
        noisy_floor,
        "metric",
    )


def test_a_figure_never_calibrated_gets_the_largest_floor_of_its_own_loop(tmp_path):
    detail = {
        "cpu_us_per_request": {
            "services GET / c=10 cpu_us_per_request": 0.011,
            "posts GET /posts c=10 cpu_us_per_request": 0.024,
            "posts GET /posts rate=50% cpu_us_per_request": 0.196,
        }
    }
    calibration = write_calibration(
        tmp_path,
        {"cpu_us_per_request": 0.196},
        detail,
        rounds=16,
        compare_rounds=8,
        variants=[],
        environment=Environment(),
    )
    # the noisy open loop of posts sets the floor of other open loops, not of closed ones
    assert floor_for(
        "cpu_us_per_request", calibration, "payloads GET /x c=10 cpu_us_per_request"
    ) == (0.024, "metric")
    assert floor_for(
        "cpu_us_per_request", calibration, "payloads GET /x rate=50% cpu_us_per_request"
    ) == (0.196, "metric")
    assert floor_for(
        "cpu_us_per_request", calibration, "services GET / c=10 cpu_us_per_request"
    ) == (0.011, "figure")
    assert floor_for("cpu_us_per_request", calibration) == (
        0.196,
        "metric",
    )  # no label: the metric's largest


def test_threshold_derives_from_rps_and_cpu_floors():
    assert alert_threshold(None) == 130  # defaults: rps 10 % x 3
    assert alert_threshold(None) % 5 == 0


def test_a_broken_calibration_file_is_reported(tmp_path):
    (tmp_path / "calibration.json").write_text('{"floors": "many"}')
    with pytest.raises(UserError, match="calibration.json"):
        load_calibration(tmp_path)


def test_print_threshold_and_github_output(tmp_path, cli):
    root = make_project(tmp_path / "p", [])  # no apps needed to read a threshold
    output = tmp_path / "gh_output"
    done = cli("calibrate", "--print-threshold", root=root)
    assert done.returncode == 0 and done.stdout.strip() == "130%"
    done = cli("calibrate", "--github-output", root=root, env={"GITHUB_OUTPUT": str(output)})
    assert done.returncode == 0 and output.read_text() == "alert-threshold=130%\n"


def test_calibrate_from_recomputes_floors_from_earlier_aa_runs(tmp_path, cli):
    from benchwatch.results.files import write_run
    from benchwatch.results.schema import Run

    root = make_project(tmp_path / "project", [])
    rng = np.random.default_rng(3)
    host = rng.normal(100, 10, 12)  # a wandering host, shared by both lanes of each round
    for lane in ("base", "head"):
        cpu = figure("cpu_us_per_request", host * rng.normal(1, 0.01, 12))
        cpu = cpu.model_copy(update={"name": "x@latest GET / c=10 cpu/req"})
        write_run(
            tmp_path / "cal" / "x@latest" / f"{lane}-load",
            Run(started_at="2026-01-01T00:00:00+00:00", figures=[cpu]),
        )
    done = cli("calibrate", "--from", str(tmp_path / "cal"), root=root)
    assert done.returncode == 0, done.stderr
    stored = json.loads((root / "calibration.json").read_text())
    assert stored["rounds"] == 12 and stored["variants"] == ["x@latest"]
    assert (
        0 < stored["detail"]["cpu_us_per_request"]["x cpu_us_per_request"] < 0.03
    )  # pairing cancels the host
    empty = cli("calibrate", "--from", str(tmp_path / "nothing"), root=root)
    assert empty.returncode == 3 and "no <variant>/base-load/run.json there" in empty.stderr


def test_micro_aa_runs_give_timing_and_instruction_floors(tmp_path, cli):
    from benchwatch.results.files import write_run
    from benchwatch.results.schema import Run

    root = make_project(tmp_path / "project", [])
    rng = np.random.default_rng(4)
    start = "2026-01-01T00:00:00+00:00"
    cpu = figure("cpu_us_per_request", rng.normal(100, 1, 12)).model_copy(
        update={"name": "x@latest GET / c=10 cpu/req"}
    )
    for lane in ("base", "head"):
        write_run(
            tmp_path / "cal" / "x@latest" / f"{lane}-load", Run(started_at=start, figures=[cpu])
        )
    host = rng.normal(50, 5, 12)  # asv rounds: base's process right before head's
    for lane in ("base", "head"):
        timed = figure("dump_json", host * rng.normal(1, 0.01, 12)).model_copy(
            update={
                "kind": "micro",
                "name": "micro services dump_json@latest",
                "params": {"case": "services"},
            }
        )
        counted = figure("dump_json", [243_557.0 + rng.integers(0, 5), 243_560.0]).model_copy(
            update={
                "kind": "micro",
                "unit": "instructions",
                "name": "micro services dump_json instructions@latest",
                "params": {"case": "services", "counter": "instructions"},
            }
        )
        write_run(
            tmp_path / "cal" / "micro-latest" / lane,
            Run(started_at=start, figures=[timed, counted]),
        )
    done = cli("calibrate", "--from", str(tmp_path / "cal"), root=root)
    assert done.returncode == 0, done.stderr
    stored = json.loads((root / "calibration.json").read_text())
    assert set(stored["floors"]) == {"cpu_us_per_request", "micro_time", "micro_instructions"}
    assert (
        stored["floors"]["micro_instructions"] == 0.005
    )  # counts repeat far closer than the minimum
    assert (
        0 < stored["detail"]["micro_time"]["micro services dump_json"] < 0.05
    )  # paired rounds cancel the host
    assert stored["floors"]["micro_time"] >= 0.01


def test_load_floors_alone_keep_the_micro_and_count_floors_measured_before(tmp_path, cli):
    # `calibrate --no-micro` (or --from a load-only directory) must not drop the micro floors, nor
    # the count floors `calibrate --counts-from` set (a load A/A measures no counts)
    root = make_project(tmp_path / "project", [])
    before = {
        "floors": {
            "cpu_us_per_request": 0.5,
            "micro_time": 0.021,
            "micro_instructions": 0.005,
            "instructions_per_request": 0.036,
            "syscalls_per_request": 0.02,
        },
        "method": "earlier",
        "rounds": 16,
        "compare_rounds": 8,
        "date": "2026-11-01",
        "detail": {
            "cpu_us_per_request": {"x cpu_us_per_request": 0.5},
            "micro_time": {"micro services dump_json": 0.0148},
            "instructions_per_request": {"posts GET /posts seq instructions_per_request": 0.036},
        },
        "micro": {"method": "A/A micro, 36 rounds", "rounds": 36},
        "counts": {"method": "counts A/A", "from": "A/A compare latest vs latest"},
    }
    (root / "calibration.json").write_text(json.dumps(before))
    rng = np.random.default_rng(5)
    host = rng.normal(100, 10, 12)
    for lane in ("base", "head"):
        cpu = figure("cpu_us_per_request", host * rng.normal(1, 0.01, 12))
        write_run(
            tmp_path / "cal" / "x@latest" / f"{lane}-load",
            Run(
                started_at="2026-01-01T00:00:00+00:00",
                figures=[cpu.model_copy(update={"name": "x@latest GET / c=10 cpu/req"})],
            ),
        )
    done = cli("calibrate", "--from", str(tmp_path / "cal"), root=root)
    assert done.returncode == 0, done.stderr
    stored = json.loads((root / "calibration.json").read_text())
    assert stored["detail"]["cpu_us_per_request"]["x cpu_us_per_request"] < 0.05  # measured anew
    assert (
        stored["floors"]["micro_time"] == 0.021 and stored["floors"]["micro_instructions"] == 0.005
    )
    assert stored["detail"]["micro_time"] == {"micro services dump_json": 0.0148}
    assert stored["micro"]["method"] == "A/A micro, 36 rounds"
    assert (
        stored["floors"]["instructions_per_request"] == 0.036
        and stored["floors"]["syscalls_per_request"] == 0.02
    )
    assert stored["detail"]["instructions_per_request"] == {
        "posts GET /posts seq instructions_per_request": 0.036
    }
    assert stored["counts"]["from"] == "A/A compare latest vs latest"


def _counts_compare(directory, head_a: float, spec: str = "latest", head_spec: str | None = None):
    """An A/A compare.json with one instructions-per-request row: base 1000 twice, head `head_a` twice."""
    from benchwatch.figures.figure_key import load_key
    from benchwatch.figures.metrics import INSTRUCTIONS, Counted
    from benchwatch.judge.verdict import Comparison, SideInfo, compare_figures
    from benchwatch.results.files import write_json_atomic

    def counted(samples):
        return Figure(
            name=load_key("x@latest", "GET /a", Counted(), INSTRUCTIONS).name,
            kind="load",
            variant="x@latest",
            scenario="x",
            stack="latest",
            metric=INSTRUCTIONS.key,
            unit=INSTRUCTIONS.unit,
            bigger_is_better=False,
            samples=samples,
            value=samples[0],
            endpoint="GET /a",
            params=Counted().params(),
        )

    rows, _ = compare_figures([counted([1000.0, 1000.0])], [counted([head_a, head_a])], None)
    comparison = Comparison(
        base=SideInfo(role="base", spec=spec, kind="stack"),
        head=SideInfo(role="head", spec=head_spec or spec, kind="stack"),
        rounds=8,
        quick=True,
        rows=rows,
    )
    write_json_atomic(directory / "compare.json", comparison.model_dump(mode="json"))


def test_count_floors_from_several_aa_compares_take_each_figures_largest(tmp_path, cli):
    root = make_project(tmp_path / "project", [])
    for name, head_a in (("aa1", 1001.0), ("aa2", 996.0), ("aa3", 1002.0)):
        (tmp_path / name).mkdir()
        _counts_compare(tmp_path / name, head_a)
    done = cli(
        "calibrate", "--counts-from", *(str(tmp_path / n) for n in ("aa1", "aa2", "aa3")), root=root
    )
    assert done.returncode == 0, done.stderr
    stored = json.loads((root / "calibration.json").read_text())
    assert stored["detail"]["instructions_per_request"] == {
        "x GET /a seq instructions_per_request": 0.008
    }  # 2 x 0.4 %
    assert stored["floors"]["instructions_per_request"] == 0.008
    assert stored["counts"]["from"].startswith("3 A/A compare(s) of latest")
    (tmp_path / "ab").mkdir()
    _counts_compare(tmp_path / "ab", 1001.0, spec="v1", head_spec="v2")
    refused = cli(
        "calibrate", "--counts-from", str(tmp_path / "aa1"), str(tmp_path / "ab"), root=root
    )
    assert refused.returncode == 3 and "not an A/A compare (v1 vs v2)" in refused.stderr
    assert json.loads((root / "calibration.json").read_text()) == stored  # nothing written

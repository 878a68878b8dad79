"""`compare --shard K/N` and `compare-merge` (fast): the partition of the declared endpoints, the
`--shard` values refused, and the merge of saved shard folders into what one compare writes, or
its refusals (exit 3, one ERROR line naming what differs)."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, variant

from benchwatch.cli import main
from benchwatch.compare.outputs import write_outputs
from benchwatch.compare.shard import Shard, endpoint_keys, parse_shard, partition
from benchwatch.declarations.requests import Endpoint
from benchwatch.errors import EXIT_BAD_INPUT, UserError
from benchwatch.judge.coverage import coverage
from benchwatch.judge.dropped import ShortRounds
from benchwatch.judge.judged import explain_dropped, judged_rows
from benchwatch.judge.verdict import CompareExtra, Comparison, SideInfo, sort_rows
from benchwatch.results.files import write_run
from benchwatch.results.schema import Environment, Figure, Problem, Run, ServerPython

sys.path.insert(0, str(REPO / "scripts"))
import make_wide_app


def _app(stack: str, count: int, quick: int = 2, extra: tuple[str, ...] = ()):
    endpoints = tuple(Endpoint(name=f"e{i:03}", path=f"/e{i:03}") for i in range(count)) + tuple(
        Endpoint(name=name, path=f"/{name}") for name in extra
    )
    return dataclasses.replace(
        variant("wide", stack), endpoints=endpoints, quick_endpoints=endpoints[:quick]
    )


@pytest.mark.parametrize("spec", ["0/4", "5/4", "1/0", "x", "1/", "-1/2", "2/4/1", "1.5/4", ""])
def test_a_bad_shard_is_refused(spec: str) -> None:
    with pytest.raises(UserError) as raised:
        parse_shard(spec)
    assert raised.value.exit_code == EXIT_BAD_INPUT and "--shard" in str(raised.value)


def test_a_bad_shard_on_the_command_line_is_one_error_line_and_exit_3(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchwatch", "compare", "--base", "a", "--head", "b"]
        + ["--shard", "3/2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3
    assert done.stderr.strip() == "ERROR: --shard '3/2': K must be between 1 and N (N at least 1)"


def test_a_shard_without_counts_is_refused() -> None:
    from benchwatch.compare.options import CompareOptions

    with pytest.raises(UserError, match="--shard splits the counts"):
        CompareOptions(shard=Shard(2, 4), counts=False).check()
    CompareOptions(shard=Shard(2, 4)).check()


def test_shards_parse() -> None:
    assert parse_shard("1/4") == Shard(1, 4) and parse_shard("4/4").timed is False
    assert parse_shard(" 1/1 ").timed and str(parse_shard("2/3")) == "2/3"


def test_every_endpoint_is_counted_by_exactly_one_shard_the_same_way_every_time() -> None:
    # head added an endpoint and base has one head dropped: both are dealt once, like the rest
    base = _app("base", 100, extra=("gone",))
    head = _app("head", 100, extra=("new",))
    pairs = [(base.id.split("@")[0], base, head)]
    keys = endpoint_keys(pairs)
    assert len(keys) == 102
    for count in (1, 2, 3, 4, 7):
        owned = [
            {k for k in keys if partition(Shard(i, count), pairs).counts_here(*k)}
            for i in range(1, count + 1)
        ]
        assert sum(len(o) for o in owned) == len(keys) and set().union(*owned) == set(keys)
        sizes = [len(o) for o in owned]
        assert max(sizes) - min(sizes) <= 1, sizes  # balanced
        # the same endpoints whatever order the declarations list them in
        shuffled = dataclasses.replace(
            head, endpoints=tuple(random.Random(count).sample(head.endpoints, len(head.endpoints)))
        )
        again = partition(Shard(1, count), [(pairs[0][0], base, shuffled)])
        assert {k for k in keys if again.counts_here(*k)} == owned[0]


def test_the_generated_app_is_the_same_text_every_time_with_100_endpoints() -> None:
    first, second = make_wide_app.files(), make_wide_app.files()
    assert first == second
    routes = sum(
        text.count("@router.") for name, text in first.items() if name.startswith("app/routers/")
    )
    assert routes == 100
    assert first["requirements.txt"].splitlines()[0].startswith("fastapi==")


# ---- the merge: saved shard folders against the one compare they split ----------------------

ENV = Environment(
    cpu_model="Test CPU @ 2.0GHz",
    cores=2,
    python="3.12.3",
    interpreters={
        "own": ServerPython(python="CPython 3.12.3", build="cp312-a", path="/py", symbols=True)
    },
)
LABELS = [f"GET /e{i:03}" for i in range(6)]  # e000, e001 quick (timed); all counted
BROKEN = "GET /e004"  # its count failed on head
SHORT = "GET /e001"  # timed, too few rounds kept: judged by its count row (in shard 2 of 2 or 3)
SHORTS = [
    ShortRounds(
        variant="wide@base",
        endpoint=SHORT,
        setting="c=10",
        params={"mode": "closed", "concurrency": 10},
        planned=6,
        dropped=5,
        made_up=0,
        dropped_again=0,
        samples=1,
    )
]


def _figure(v, label: str, metric: str, value: float) -> Figure:
    counted = metric != "cpu_us_per_request"
    return Figure(
        name=f"{v.id} {label} {'seq' if counted else 'c=10'} {metric}",
        kind="load",
        variant=v.id,
        scenario=v.scenario,
        stack=v.stack.name,
        metric=metric,
        unit="x",
        bigger_is_better=False,
        # e001's timings lost 5 of their 6 rounds (a busy host): judged by its counts instead
        samples=[value] * (2 if counted else 1 if label == SHORT else 6),
        value=value,
        endpoint=label,
        params={"mode": "count"} if counted else {"mode": "closed", "concurrency": 10},
    )


def _figures(v, role: str) -> list[Figure]:
    found = []
    for i, label in enumerate(LABELS):
        if i < 2:
            found.append(_figure(v, label, "cpu_us_per_request", 100.0 + i))
        if role == "head" and label == BROKEN:
            continue
        grow = 1.5 if role == "head" and label == "GET /e003" else 1.0  # a regression, counted
        found.append(_figure(v, label, "instructions_per_request", 1e6 * (i + 1) * grow))
        found.append(_figure(v, label, "syscalls_per_request", 10.0 + i))
    return found


def _compare(pairs, figures, problems, shard: Shard | None) -> Comparison:
    """What compare() makes of these figures, whole or as one shard."""
    base, head = pairs[0]
    part = partition(shard, [(base.id, base, head)]) if shard else None
    timed = shard is None or shard.timed

    def mine(f: Figure) -> bool:
        counted = f.metric != "cpu_us_per_request"
        return part is None or (part.counts_here(base.id, f.endpoint) if counted else timed)

    kept = {role: [f for f in figures[role] if mine(f)] for role in figures}
    kept_problems = [p for p in problems if part is None or part.counts_here(base.id, p.endpoint)]
    rows, unpaired = judged_rows(kept["base"], kept["head"], None, None)
    shorts = SHORTS if timed else []
    explain_dropped(rows, shorts, kept["base"])
    found = coverage(
        pairs,
        kept,
        kept_problems,
        quick=True,
        load=timed,
        counts=True,
        counts_unavailable=None,
        timed_here=timed,
        counted_here=(lambda b, label: part.counts_here(b.id, label)) if part else None,
    )
    side = {
        role: SideInfo(role=role, spec=role.upper(), kind="ref", commit=c * 40, environment=ENV)
        for role, c in (("base", "a"), ("head", "b"))
    }
    comparison = Comparison(
        base=side["base"],
        head=side["head"],
        rounds=6,
        quick=True,
        rows=sort_rows(rows),
        problems=kept_problems,
        unpaired=unpaired,
        extra=CompareExtra(coverage=found, notes=["a note every shard writes"]),
    )
    comparison.extra.load.short = shorts
    return comparison


def _saved(tmp_path: Path, count: int) -> tuple[Path, list[Path]]:
    """The one compare's folder, and its N shards' folders, written as compare writes them."""
    from benchwatch.compare.shard import coverage_order, write_facts

    pairs = [(_app("base", 6), _app("head", 6))]
    figures = {role: _figures(v, role) for role, v in zip(("base", "head"), pairs[0], strict=True)}
    problems = [
        Problem(
            variant="wide@head",
            phase="load",
            endpoint=BROKEN,
            reason="head: count failed (the server died)",
        )
    ]
    single = tmp_path / "single"
    write_outputs(_compare(pairs, figures, problems, None), _made(single))
    dirs = []
    for k in range(1, count + 1):
        shard = Shard(k, count)
        out = _made(tmp_path / f"shard-{k}")
        base = pairs[0][0]
        write_outputs(_compare(pairs, figures, problems, shard), out)
        write_facts(out, partition(shard, [(base.id, *pairs[0])]).facts(coverage_order(pairs)))
        for role in ("base", "head"):
            mine = [f for f in _compare(pairs, figures, problems, shard).rows]
            names = {getattr(r, f"{role}_figure") for r in mine}
            write_run(
                out / role,
                Run(
                    started_at="2026-11-28T00:00:00Z",
                    environment=ENV,
                    figures=[f for f in figures[role] if f.name in names],
                ),
            )
        dirs.append(out)
    return single, dirs


def _made(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


@pytest.mark.parametrize("count", [2, 3])
def test_merged_shards_write_the_comment_and_compare_json_of_one_compare(
    tmp_path: Path, count: int, capsys: pytest.CaptureFixture[str]
) -> None:
    single, dirs = _saved(tmp_path, count)
    code = main(["compare-merge", *map(str, dirs), "--out", str(tmp_path / "merged")])
    expected = json.loads((single / "compare.json").read_text())
    assert expected["summary"]["exit_code"] == code == 1  # e003's counts regressed
    merged = json.loads((tmp_path / "merged" / "compare.json").read_text())
    assert merged == expected
    assert (tmp_path / "merged" / "comment.md").read_text() == (single / "comment.md").read_text()
    assert f"merged {count} shards" in capsys.readouterr().out
    coverage = merged["extra"]["coverage"]
    assert (coverage["endpoints"], coverage["timed"], coverage["counted"]) == (6, 2, 5)
    (short,) = [r for r in merged["rows"] if r["endpoint"] == SHORT and "c=10" in r["label"]]
    assert short["judged_by"].endswith("instructions_per_request")  # its count row, another shard's


def _refused(dirs: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["compare-merge", *map(str, dirs), "--out", str(out)]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ERROR: compare-merge: "), err
    assert not (out / "compare.json").exists()
    return err[0]


def _edit(directory: Path, change) -> None:
    path = directory / "compare.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_missing_duplicate_and_foreign_shards_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, dirs = _saved(tmp_path, 3)
    out = tmp_path / "merged"
    assert "shard 2/3 missing" in _refused([dirs[0], dirs[2]], out, capsys)
    assert "shard 3/3 given twice" in _refused([*dirs, dirs[2]], out, capsys)
    assert "no shard.json" in _refused([*dirs, tmp_path / "single"], out, capsys)
    _, others = _saved(tmp_path / "four", 4)
    assert "the shard count" in _refused([*dirs[:2], others[2]], out, capsys)


@pytest.mark.parametrize(
    ("what", "change"),
    [
        ("the CPU model", lambda d: d["head"]["environment"].update(cpu_model="Other CPU")),
        (
            "head's server interpreters",
            lambda d: d["head"]["environment"]["interpreters"]["own"].update(build="cp313-b"),
        ),
        ("benchwatch's Python", lambda d: d["base"]["environment"].update(python="3.13.0")),
        ("head's commit", lambda d: d["head"].update(commit="c" * 40)),
        ("base's commit", lambda d: d["base"].update(commit="c" * 40)),
        ("--quick", lambda d: d.update(quick=False)),
    ],
)
def test_shards_of_different_runners_or_commits_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str, change
) -> None:
    _, dirs = _saved(tmp_path, 2)
    _edit(dirs[1], change)
    line = _refused(dirs, tmp_path / "merged", capsys)
    assert f"the shards differ in {what}:" in line and str(dirs[1]) in line


def test_shards_dealt_from_other_endpoints_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, dirs = _saved(tmp_path, 2)
    facts = json.loads((dirs[1] / "shard.json").read_text())
    facts["partition"] = "0" * 16
    (dirs[1] / "shard.json").write_text(json.dumps(facts))
    assert "the endpoints the shards were dealt from" in _refused(dirs, tmp_path / "m", capsys)


# ---- for real: two shards of a small app's PR compare, then merged (slow) ---------------------


def _bw(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "BENCHWATCH_ROOT"}
    return subprocess.run(
        [sys.executable, "-m", "benchwatch", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environ | make_wide_app.credentials(),
        timeout=1200,
    )


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_two_shards_of_a_real_compare_count_apart_and_merge_into_one(tmp_path: Path) -> None:
    """One resource of the generated app (5 endpoints behind a login, its list the quick set),
    a no-op PR compare in two shards: shard 1 times the list and counts three endpoints, shard 2
    counts the other two and times nothing; the merge holds every endpoint's counts once."""
    app = tmp_path / "small"
    app.mkdir()
    make_wide_app.write(app, resources=1)
    make_wide_app.init(app, [sys.executable, "-m", "benchwatch"])
    compare = ["compare", "--base", "HEAD", "--head", "HEAD", "--quick", "--rounds", "2"]
    dirs, codes = [tmp_path / "shard-1", tmp_path / "shard-2"], []
    for k, out in enumerate(dirs, start=1):
        done = _bw(*compare, "--no-micro", "--shard", f"{k}/2", "--out", str(out), cwd=app)
        assert done.returncode in (0, 2), done.stdout + done.stderr
        codes.append(done.returncode)
    shards = [json.loads((d / "compare.json").read_text()) for d in dirs]
    facts = [json.loads((d / "shard.json").read_text()) for d in dirs]
    counted = [{tuple(k)[1] for k in f["counted"]} for f in facts]
    assert [len(c) for c in counted] == [3, 2] and not counted[0] & counted[1]
    for one, mine in zip(shards, counted, strict=True):
        rows = [r for r in one["rows"] if r["metric"] == "instructions_per_request"]
        assert {r["endpoint"] for r in rows} == mine  # counted only its own endpoints
    timed = [
        {r["endpoint"] for r in s["rows"] if r["metric"] == "cpu_us_per_request"} for s in shards
    ]
    assert timed == [{"GET /projects/"}, set()]  # the quick list, by shard 1 alone

    done = _bw("compare-merge", *map(str, dirs), "--out", str(tmp_path / "merged"), cwd=app)
    merged = json.loads((tmp_path / "merged" / "compare.json").read_text())
    assert done.returncode == merged["summary"]["exit_code"] == max(codes), (
        done.stdout + done.stderr
    )
    assert not [r["label"] for r in merged["rows"] if r["verdict"] == "regression"]  # a no-op
    assert sorted(r["label"] for r in merged["rows"]) == sorted(
        r["label"] for s in shards for r in s["rows"]
    )
    coverage = merged["extra"]["coverage"]
    assert (coverage["endpoints"], coverage["timed"], coverage["counted"]) == (5, 1, 5)
    assert {i["why"] for i in coverage["not_measured"]} == {"counts only (not in quick)"}
    assert (tmp_path / "merged" / "head" / "run.json").exists()

"""attribute: step planning, group detection, the product/interaction table (no servers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchwatch.attribute.attribute import AttributeOptions, attribute, with_stacks
from benchwatch.attribute.steps import declared_names, mentioned, plan_steps
from benchwatch.attribute.table import Ratio, StepOutcome, build_lines, markdown, product
from benchwatch.declarations.stacks import Stack
from benchwatch.environments.envs import Env, EnvError
from benchwatch.errors import UserError
from benchwatch.judge.verdict import Comparison, Row, SideInfo
from benchwatch.project.loading import load_project

REPO = Path(__file__).resolve().parents[1]
BASE = Stack(
    name="old",
    exclude_newer="2026-01-01",
    pins={"fastapi": "1.0", "starlette": "1.0", "orjson": "1.0"},
)
HEAD = Stack(
    name="new",
    exclude_newer="2026-06-01",
    pins={"fastapi": "2.0", "starlette": "2.0", "orjson": "2.0"},
)
BASE_ENV = {"fastapi": "1.0", "starlette": "1.0", "orjson": "1.0", "idna": "3.0"}
HEAD_ENV = {"fastapi": "2.0", "starlette": "2.0", "orjson": "2.0", "idna": "3.5"}


def fake_resolver(rules: dict[str, str]):
    """fastapi 2.0 demands starlette 2.0, as an old fastapi caps starlette (a uv-like message)."""
    seen: list[Stack] = []

    def resolve(stack: Stack) -> str | None:
        seen.append(stack)
        pins = stack.pinned_versions()
        for package, needs in rules.items():
            wanted, version = needs.split("==")
            if pins.get(package) == "2.0" and pins.get(wanted) != version:
                return (
                    f"  × No solution found when resolving dependencies:\n  ╰─▶ Because {package}==2.0 depends on "
                    f"{wanted}>={version} and you require {wanted}=={pins.get(wanted)}, ...unsatisfiable."
                )
        return None

    resolve.seen = seen  # type: ignore[attr-defined]
    return resolve


def test_one_step_per_moved_package_plus_the_transitive_step():
    steps = plan_steps(BASE, HEAD, BASE_ENV, HEAD_ENV, fake_resolver({}))
    assert [(s.name, s.kind, s.group) for s in steps] == [
        ("old+fastapi", "package", ("fastapi",)),
        ("old+starlette", "package", ("starlette",)),
        ("old+orjson", "package", ("orjson",)),
        ("old+transitive", "transitive", ("idna",)),
    ]
    fastapi = steps[0].stack
    assert fastapi is not None
    # everything else stays at base's installed versions (unpinned ones too); the date is head's
    assert fastapi.pinned_versions() == {**BASE_ENV, "fastapi": "2.0"}
    assert fastapi.exclude_newer == HEAD.exclude_newer
    transitive = steps[-1].stack
    assert (
        transitive is not None
        and transitive.pins == BASE.pins
        and transitive.exclude_newer == HEAD.exclude_newer
    )


def test_a_package_the_resolver_ties_to_another_moves_with_it_and_the_group_is_said():
    steps = plan_steps(BASE, HEAD, BASE_ENV, HEAD_ENV, fake_resolver({"fastapi": "starlette==2.0"}))
    first = steps[0]
    assert (first.name, first.kind, first.group) == (
        "old+fastapi+starlette",
        "group",
        ("fastapi", "starlette"),
    )
    assert "demands starlette with fastapi" in first.note
    assert [s.requested for s in steps] == [
        "fastapi",
        "orjson",
        "transitive",
    ]  # starlette is in fastapi's group


def test_a_package_whose_group_is_everything_is_said():
    rules = {"fastapi": "starlette==2.0", "starlette": "orjson==2.0"}
    steps = plan_steps(BASE, HEAD, BASE_ENV, HEAD_ENV, fake_resolver(rules))
    assert steps[0].group == ("fastapi", "starlette", "orjson")
    assert "cannot be moved alone: its group is everything" in steps[0].note


def test_a_step_the_resolver_refuses_without_naming_a_package_is_reported_and_the_rest_go_on():
    def resolve(stack: Stack) -> str | None:
        return (
            "error: Python 3.99 is not available"
            if stack.pinned_versions().get("orjson") == "2.0"
            else None
        )

    steps = plan_steps(BASE, HEAD, BASE_ENV, HEAD_ENV, resolve)
    orjson = next(s for s in steps if s.requested == "orjson")
    assert orjson.stack is None and "Python 3.99" in (orjson.error or "")
    assert all(s.error is None for s in steps if s is not orjson)


def test_mentioned_matches_whole_package_names_only():
    text = "Because pydantic==2.14.3 depends on pydantic-core==2.50.4 and you require typing_extensions."
    assert (
        mentioned("pydantic", text)
        and mentioned("pydantic-core", text)
        and mentioned("typing-extensions", text)
    )
    assert not mentioned("core", text) and not mentioned("pydantic-settings", text)


def test_declared_names_cover_pins_and_run_time_requirements():
    nxt = Stack(
        name="next",
        resolved_at_run_time=True,
        requires=["fastapi", "psycopg[binary]", "Typing_Extensions>=4"],
    )
    assert declared_names(BASE, nxt) == [
        "fastapi",
        "starlette",
        "orjson",
        "psycopg",
        "typing-extensions",
    ]


def ratio(r: float, low: float, high: float, verdict: str = "unchanged") -> Ratio:
    return Ratio(ratio=r, low=low, high=high, verdict=verdict)


def test_product_multiplies_ratios_and_widens_the_interval():
    total = product([ratio(1.10, 1.08, 1.12), ratio(0.90, 0.89, 0.91)])
    assert total.ratio == pytest.approx(0.99)
    assert total.low < 0.99 < total.high
    assert total.high - total.low > 0.04  # wider than either step's own interval
    assert product([ratio(1.1, 1.0, 1.2), Ratio()]).ratio is None  # a missing step: no product


def _outcome(name: str, label_ratio: Ratio | None, error: str | None = None) -> StepOutcome:
    return StepOutcome(
        step=name,
        kind="package",
        requested=name,
        group=[name],
        error=error,
        ratios={"hello GET / c=10 cpu_us_per_request": label_ratio} if label_ratio else {},
    )


def test_lines_say_whether_the_product_agrees_with_the_direct_ratio():
    steps = [
        _outcome("old+fastapi", ratio(1.20, 1.18, 1.22, "regression")),
        _outcome("old+orjson", ratio(1.0, 0.99, 1.01)),
        _outcome("old+broken", None, error="pins did not hold"),
    ]
    agreeing = build_lines(steps, _outcome("direct", ratio(1.21, 1.19, 1.23)), {})
    assert agreeing[0].agrees is True and agreeing[0].product.ratio == pytest.approx(1.2)
    interacting = build_lines(steps, _outcome("direct", ratio(0.80, 0.79, 0.81)), {})
    assert interacting[0].agrees is False
    text = markdown_of(steps, interacting)
    assert "the steps interact" in text and "not measured: pins did not hold" in text
    assert "**Responsible:** old+fastapi (old+fastapi)" in text
    open_loop = [
        line.model_copy(update={"label": "hello GET / rate=50% cpu_us_per_request"})
        for line in interacting
    ]
    assert "open-loop ratios need not multiply" in markdown_of(steps, open_loop)


def markdown_of(steps, lines) -> str:
    from benchwatch.attribute.table import Attribution

    return markdown(
        Attribution(
            base="old",
            head="new",
            scenarios=["hello"],
            quick=True,
            rounds=6,
            steps=steps,
            direct=_outcome("direct", None),
            lines=lines,
        )
    )


# --- the whole command with a fake compare: which sides it asks for, what it writes ---


def _comparison(r: float, width: float = 0.01) -> Comparison:
    row = Row(
        label="hello GET / c=10 cpu_us_per_request",
        kind="load",
        scenario="hello",
        endpoint="GET /",
        metric="cpu_us_per_request",
        floor_key="x",
        unit="us",
        bigger_is_better=False,
        base_figure="a",
        head_figure="b",
        ratio=r,
        low=r - width,
        high=r + width,
        verdict="regression" if r > 1.05 else "unchanged",
        text=f"{r:.2f}x",
        floor=0.02,
        floor_source="test",
        gating=True,
    )
    side = lambda role: SideInfo(role=role, spec="x", kind="stack")  # noqa: E731
    return Comparison(base=side("base"), head=side("head"), rounds=6, quick=True, rows=[row])


def _old_and_new(tmp_path: Path, new_date: str = "2026-06-01"):
    """A project with one app and two stacks: old (fastapi and orjson 1.0) and new (both 2.0)."""
    app = tmp_path / "apps" / "hello"
    app.mkdir(parents=True)
    (app / "benchwatch-app.toml").write_text(
        'name = "hello"\napp = "app:app"\n[[endpoints]]\nname = "hi"\npath = "/"\n'
    )
    root = tmp_path / "p"
    root.mkdir()
    (root / "stacks.toml").write_text(
        '[stacks.old]\nexclude_newer = "2026-01-01"\npins = { fastapi = "1.0", orjson = "1.0" }\n'
        f'[stacks.new]\nexclude_newer = "{new_date}"\npins = {{ fastapi = "2.0", orjson = "2.0" }}\n'
    )
    (root / "benchwatch.toml").write_text(f'[benchwatch]\napps = ["{app}"]\n')
    return load_project(root)


def test_attribute_with_timings_compares_every_step_with_base_and_writes_both_files(tmp_path):
    project = _old_and_new(tmp_path)
    asked: list[tuple[str, str, str]] = []

    def compare_fn(proj, base, head, options):
        patterns, out = options.patterns, options.out
        assert head in proj.stacks and any(
            v.stack.name == head for v in proj.select(patterns, [head])
        )
        assert (options.counts, options.load, options.confirm) == (
            True,
            True,
            False,
        )  # counts and rounds, ratios not verdicts
        asked.append((base, head, patterns))
        return _comparison({"new": 1.21, "old+fastapi": 1.2}.get(head, 1.0)), out

    def ensure(stack: Stack) -> Env:
        if stack.name == "old+orjson":
            raise EnvError("stack old+orjson: pins did not hold: orjson==2.0 (installed: 1.0)")
        versions = {
            "old": {"fastapi": "1.0", "orjson": "1.0"},
            "new": {"fastapi": "2.0", "orjson": "2.0"},
        }
        return Env(stack.name, tmp_path, versions.get(stack.name, stack.pinned_versions()))

    result, out = attribute(
        project,
        "old",
        "new",
        AttributeOptions(
            patterns="hello@*",
            quick=True,
            rounds=6,
            out=tmp_path / "out",
            quiet=True,
            compare_fn=compare_fn,
            resolve=lambda s: None,
            ensure=ensure,
            timings=True,
        ),
    )
    assert asked == [
        ("old", "new", "hello@*"),
        ("old", "old+fastapi", "hello@*"),
        ("old", "old+transitive", "hello@*"),
    ]
    orjson = next(s for s in result.steps if s.requested == "orjson")
    assert orjson.error and "pins did not hold" in orjson.error  # reported; the others went on
    data = json.loads((out / "attribution.json").read_text())
    assert data["lines"][0]["agrees"] is True
    assert "old+fastapi" in (out / "attribution.md").read_text()


def _counted(head: str) -> Comparison:
    """A counts-only compare of hello GET / as compare writes it: the estimated cost, instructions
    (with where they went by shared object) and system calls by name per request. The head moving
    fastapi changes nothing; "new" and "old+orjson" swap one writev for two writes."""
    from benchwatch.counts.breakdown import ByObject, ObjectCount

    swap = head in ("new", "old+orjson")
    values = {
        "cost_us_per_request": (102.6, 106.4 if swap else 102.6),
        "syscalls_per_request": (2.0, 3.0 if swap else 2.0),
        "instructions_per_request": (417_023.0, 414_100.0 if swap else 417_023.0),
    }
    rows = []
    for metric, (base, head_value) in values.items():
        r = head_value / base
        rows.append(
            Row(
                label=f"hello GET / seq {metric}",
                kind="load",
                scenario="hello",
                endpoint="GET /",
                metric=metric,
                floor_key=metric,
                unit="x",
                bigger_is_better=False,
                base_figure="a",
                head_figure="b",
                base_value=base,
                head_value=head_value,
                ratio=r,
                low=r * 0.999,
                high=r * 1.001,
                verdict="unchanged" if r == 1 else ("regression" if r > 1 else "improvement"),
                text="",
                floor=0.005,
                floor_source="test",
                gating=metric == "cost_us_per_request",
            )
        )
    rows[1].detail = {
        "read": [1.0, 1.0],
        "write": [None, 2.0] if swap else [None, None],
        "writev": [1.0, None] if swap else [1.0, 1.0],
        "epoll_pwait": [2.0, 2.004],
    }
    side = lambda role: SideInfo(role=role, spec="x", kind="stack")  # noqa: E731
    comparison = Comparison(base=side("base"), head=side("head"), rounds=1, quick=True, rows=rows)
    if swap:
        comparison.extra.counts.by_object["hello GET / seq instructions_per_request"] = ByObject(
            base=417_023.0,
            head=414_100.0,
            objects=[
                ObjectCount(name="libpython", base=301_400.0, head=299_650.0),
                ObjectCount(name="uvloop/libuv", base=52_310.0, head=51_140.0),
            ],
        )
    return comparison


def test_attribute_keeps_each_steps_cost_and_its_mechanism(tmp_path):
    """attribution.json keeps, per step and changed endpoint, the estimated cost of both sides, where
    the instructions went by shared object and the calls by name that changed; an endpoint that did
    not change has none, and an attribution written before it loads with none."""
    project = _old_and_new(tmp_path)

    def ensure(stack: Stack) -> Env:
        versions = {
            "old": {"fastapi": "1.0", "orjson": "1.0"},
            "new": {"fastapi": "2.0", "orjson": "2.0"},
        }
        return Env(stack.name, tmp_path, versions.get(stack.name, stack.pinned_versions()))

    result, out = attribute(
        project,
        "old",
        "new",
        AttributeOptions(
            patterns="hello@*",
            quick=True,
            out=tmp_path / "out",
            quiet=True,
            compare_fn=lambda proj, base, head, options: (_counted(head), options.out),
            resolve=lambda s: None,
            ensure=ensure,
            timings=True,
        ),
    )
    data = json.loads((out / "attribution.json").read_text())
    assert data["mechanisms"] is True
    assert {line["label"] for line in data["lines"]} == {
        f"hello GET / seq {m}"
        for m in ("cost_us_per_request", "instructions_per_request", "syscalls_per_request")
    }
    steps = {s["step"]: s for s in data["steps"]}
    assert steps["old+fastapi"]["mechanism"] == {}  # nothing changed
    found = steps["old+orjson"]["mechanism"]["hello GET / seq"]
    assert found["cost_us"] == [102.6, 106.4]
    assert found["calls"] == {
        "write": [None, 2.0],
        "writev": [1.0, None],
    }  # epoll_pwait moved by less than 0.01
    assert [o["name"] for o in found["instructions"]["objects"]] == ["libpython", "uvloop/libuv"]
    assert data["direct"]["mechanism"]["hello GET / seq"]["calls"] == found["calls"]
    old = json.loads((REPO / "tests" / "fixtures" / "site" / "attribution-hello.json").read_text())
    assert "mechanisms" not in old and "mechanism" not in old["steps"][0]
    loaded = type(result).model_validate(old)
    assert loaded.mechanisms is False and all(s.mechanism == {} for s in loaded.steps)


def test_attribute_refuses_the_same_stack_twice_and_scenarios_on_one_side_only():
    project = load_project(REPO)
    with pytest.raises(UserError, match="same stack"):
        attribute(project, "latest", "latest", AttributeOptions(compare_fn=lambda *a, **k: None))
    with pytest.raises(UserError, match="no scenario runs on both"):
        attribute(
            project,
            "v2-pre-rust",
            "latest",
            AttributeOptions(patterns="hello-falcon@*", compare_fn=lambda *a, **k: None),
        )


def test_with_stacks_serves_a_new_stack_wherever_base_is_served():
    project = load_project(REPO)
    extra = Stack(name="v2-pre-rust+fastapi", pins={"fastapi": "0.165.0"})
    both = with_stacks(project, [extra], like="v2-pre-rust")
    ids = {v.id for v in both.variants(["v2-pre-rust+fastapi"])}
    base_ids = {
        v.id.replace("@v2-pre-rust", "@v2-pre-rust+fastapi")
        for v in project.variants(["v2-pre-rust"])
    }
    assert ids == base_ids and ids
    assert "v2-pre-rust+fastapi" not in project.stacks  # the project itself is untouched


def test_changed_in_picks_the_scenarios_whose_gating_figures_changed(tmp_path):
    from benchwatch.attribute.attribute import changed_scenarios

    changed = _comparison(1.2)
    still = _comparison(1.0)
    still.rows[0].scenario = "services"
    changed.rows.append(still.rows[0])
    (tmp_path / "compare.json").write_text(changed.model_dump_json())
    assert changed_scenarios(tmp_path) == ["hello"]
    with pytest.raises(UserError, match="cannot read"):
        changed_scenarios(tmp_path / "missing")


@pytest.mark.slow
@pytest.mark.load_independent
def test_real_attribute_of_one_moved_package(tmp_path):
    """base = latest; head = latest with an older uvloop: one step (uvloop) and the direct compare."""
    import tomllib

    from conftest import benchwatch

    latest = tomllib.loads((REPO / "stacks.toml").read_text())["stacks"]["latest"]
    pins = {**latest["pins"], "uvloop": "0.22.1"}
    root = tmp_path / "p"
    app = root / "apps" / "tiny"
    app.mkdir(parents=True)
    (app / "app.py").write_text(
        'from fastapi import FastAPI\napp = FastAPI()\n\n@app.get("/")\ndef hi():\n    return {"hi": 1}\n'
    )
    (app / "benchwatch-app.toml").write_text(
        'name = "tiny"\napp = "app:app"\n[[endpoints]]\nname = "hi"\npath = "/"\n'
    )
    inline = lambda d: "{ " + ", ".join(f'{k} = "{v}"' for k, v in d.items()) + " }"  # noqa: E731
    (root / "stacks.toml").write_text(
        f'[stacks.latest]\nexclude_newer = "{latest["exclude_newer"]}"\npins = {inline(latest["pins"])}\n'
        f'[stacks.older-uvloop]\nexclude_newer = "{latest["exclude_newer"]}"\npins = {inline(pins)}\n'
    )
    (root / "benchwatch.toml").write_text('[benchwatch]\napps = ["apps/tiny"]\n')
    out = tmp_path / "out"
    done = benchwatch(
        "attribute",
        "--base",
        "latest",
        "--head",
        "older-uvloop",
        "--quick",
        "--rounds",
        "6",
        "--out",
        str(out),
        "-q",
        root=root,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "attribution.json").read_text())
    assert [(s["step"], s["moved"]) for s in data["steps"]] == [
        ("latest+uvloop", {"uvloop": ["0.23.0", "0.22.1"]})
    ]
    # counts first: each step counted (no timing rounds), so no CPU line, an instructions line
    assert not [line for line in data["lines"] if line["label"].endswith("cpu_us_per_request")]
    counted = [line for line in data["lines"] if line["label"].endswith("instructions_per_request")]
    assert counted and all(
        line["direct"]["low"] <= line["direct"]["ratio"] <= line["direct"]["high"]
        for line in counted
    )
    assert all(
        line["product"]["ratio"] == line["steps"]["latest+uvloop"]["ratio"] for line in counted
    )
    assert all(line["agrees"] is not None for line in counted)
    assert "latest+uvloop" in (out / "attribution.md").read_text()
    # one batch: base counted once, in its own folder; each step's `out` is its counts' folder
    assert not (out / "direct" / "compare.json").exists()
    assert data["direct"]["out"] == str(out / "direct") and data["steps"][0]["out"] == str(
        out / "steps" / "latest+uvloop"
    )
    for folder in (
        out / "base" / "tiny@latest",
        out / "direct" / "tiny@older-uvloop",
        out / "steps" / "latest+uvloop" / "tiny@latest_uvloop",
    ):
        assert list(folder.glob("callgrind.out*")) and (folder / "strace.trace").is_file(), folder


# --- why the product and the direct ratio disagree: the sides, then the largest movers in pairs ---


def test_the_direct_side_is_checked_against_the_union_of_the_steps():
    from benchwatch.attribute.interactions import consistency

    steps = [
        StepOutcome(
            step="old+pydantic",
            kind="group",
            requested="pydantic",
            group=["pydantic", "typing-extensions"],
            moved={"pydantic": ("1", "2"), "typing-extensions": ("4.15", "4.16")},
        ),
        StepOutcome(
            step="old+transitive",
            kind="transitive",
            requested="transitive",
            group=["typing-extensions"],
            moved={"typing-extensions": ("4.15", "4.16")},
        ),
    ]
    direct = StepOutcome(
        step="direct",
        kind="direct",
        requested="new",
        group=[],
        moved={
            "pydantic": ("1", "2"),
            "typing-extensions": ("4.15", "4.16"),
            "uvloop": ("0.22", "0.23"),
        },
    )
    found = consistency(
        steps, direct, {"old": "CPython 3.11.7 (aaa)", "new": "CPython 3.11.7 (aaa)"}
    )
    assert found.unmoved == {"uvloop": ("0.22", "0.23")}
    assert found.moved_twice == {"typing-extensions": ["old+pydantic", "old+transitive"]}
    assert found.interpreters == {}  # one interpreter: nothing to say
    text = " ".join(found.lines())
    assert "uvloop 0.22→0.23" in text and "typing-extensions (old+pydantic, old+transitive)" in text
    two = consistency(steps, direct, {"old": "CPython 3.11.2 (bbb)", "new": "CPython 3.11.7 (aaa)"})
    assert two.interpreters == {"old": "CPython 3.11.2 (bbb)", "new": "CPython 3.11.7 (aaa)"}


def test_a_pair_interacts_when_together_differs_from_apart_beyond_the_floor():
    from benchwatch.attribute.interactions import judge

    label = "hello GET / seq instructions_per_request"  # a count: its floor is 0.5 %
    alone = [ratio(1.117, 1.116, 1.118), ratio(0.933, 0.932, 0.934)]  # apart: 1.042
    together = judge(label, ("a", "b"), "old+a+b", ratio(1.066, 1.065, 1.067), alone)
    assert together.apart.ratio == pytest.approx(1.117 * 0.933)
    assert together.interaction.ratio == pytest.approx(1.066 / (1.117 * 0.933))
    assert together.interacts is True
    # 0.7 % is beyond one floor but not beyond three compares' (√3 × 0.5 %): not an interaction
    assert (
        judge(label, ("a", "b"), "old+a+b", ratio(1.0349, 1.0339, 1.0359), alone).interacts is False
    )
    wide = judge(
        "hello GET / c=10 cpu_us_per_request", ("a", "b"), "s", ratio(1.07, 0.95, 1.2), alone
    )
    assert wide.interacts is False  # its interval holds 1


def test_the_largest_movers_are_paired_and_the_transitive_step_never_is():
    from benchwatch.attribute.interactions import pairs_to_try
    from benchwatch.attribute.steps import Step
    from benchwatch.attribute.table import Line

    stack = Stack(name="s", pins={"x": "1"})
    steps = [
        Step(name, kind, name, (name,), stack)
        for name, kind in (
            ("a", "package"),
            ("b", "package"),
            ("c", "group"),
            ("d", "package"),
            ("t", "transitive"),
        )
    ]
    line = Line(
        scenario="hello",
        label="x instructions_per_request",
        product=Ratio(),
        direct=Ratio(),
        agrees=False,
        steps={
            "a": ratio(1.12, 1.1, 1.13),
            "b": ratio(0.93, 0.92, 0.94),
            "c": ratio(1.001, 1.0, 1.002),
            "d": ratio(0.99, 0.98, 1.0),
            "t": ratio(1.5, 1.4, 1.6),
        },
    )
    assert [(p.name, q.name) for p, q in pairs_to_try(line, steps)] == [
        ("a", "b"),
        ("a", "d"),
        ("b", "d"),
    ]


def test_with_timings_a_disagreement_measures_the_pairs_and_names_the_one_that_interacts(tmp_path):
    """fastapi alone 1.30, orjson alone 0.90, directly 1.00: moved together they give 1.00, so the
    two interact (the product 1.17 was not the direct ratio), and the table says so."""
    project = _old_and_new(tmp_path, new_date="2026-01-01")
    ratios = {"new": 1.0, "old+fastapi": 1.3, "old+orjson": 0.9, "old+fastapi+orjson": 1.0}
    asked: list[str] = []

    def compare_fn(proj, base, head, options):
        assert head in proj.stacks
        asked.append(head)
        return _comparison(ratios[head], width=0.002), options.out

    def ensure(stack: Stack) -> Env:
        versions = {
            "old": {"fastapi": "1.0", "orjson": "1.0"},
            "new": {"fastapi": "2.0", "orjson": "2.0"},
        }
        return Env(stack.name, tmp_path, versions.get(stack.name, stack.pinned_versions()))

    result, out = attribute(
        project,
        "old",
        "new",
        AttributeOptions(
            patterns="hello@*",
            quick=True,
            out=tmp_path / "out",
            quiet=True,
            compare_fn=compare_fn,
            resolve=lambda s: None,
            ensure=ensure,
            timings=True,
        ),
    )
    assert asked == [
        "new",
        "old+fastapi",
        "old+orjson",
        "old+fastapi+orjson",
    ]  # one pair: the two movers
    assert result.lines[0].agrees is False
    (pair,) = result.interactions
    assert pair.pair == ("old+fastapi", "old+orjson") and pair.interacts is True
    assert pair.interaction.ratio == pytest.approx(1.0 / (1.3 * 0.9))
    assert (
        result.consistency is not None and result.consistency.lines() == []
    )  # the sides were not the cause
    text = (out / "attribution.md").read_text()
    assert "old+fastapi × old+orjson: together 1.000" in text and "**they interact**" in text
    assert (
        json.loads((out / "attribution.json").read_text())["interactions"][0]["interacts"] is True
    )


# --- counts only (the default): every stack counted in one batch, each paired with base's counts ---

BASE_INSTRUCTIONS = 800_000.0


def fake_counts(
    factors: dict[str, float], failing: frozenset[str] = frozenset(), trace: str | None = None
):
    """count_requests without servers: every target's instructions per request are base's times its
    stack's factor (a 0.2 % spread between the three phases), its system calls 10 per request; the
    targets of a `failing` stack fail as a server that exits would; `trace`: every target's strace
    file. `.calls`: the targets of each call."""
    from benchwatch.counts.all_targets import _figure
    from benchwatch.figures.metrics import INSTRUCTIONS, SYSCALLS
    from benchwatch.results.schema import Problem

    calls: list[list[str]] = []

    def count_fn(
        targets, *, out_dir, jobs, log, dirs, repeats, requests, quiet_idle_s, strace_times
    ):
        assert jobs == 3 and len(dirs) == len(targets)
        assert (repeats, requests, quiet_idle_s, strace_times) == (
            2,
            100,
            0.5,
            1,
        )  # shorter than compare's
        # every environment through a symlink of one length (counts/same_paths.py)
        assert (
            all(t.env.path.is_symlink() for t in targets)
            and len({len(str(t.env.path)) for t in targets}) == 1
        )
        calls.append([t.variant.id for t in targets])
        figures, problems = [], []
        for target, directory in zip(targets, dirs, strict=True):
            directory.mkdir(parents=True)
            if trace is not None:
                (directory / "strace.trace").write_text(trace)
            stack = target.variant.stack.name
            if stack in failing:
                problems.append(
                    Problem(
                        variant=target.variant.id,
                        phase="load",
                        reason="count failed: the server exited",
                    )
                )
                continue
            value = BASE_INSTRUCTIONS * factors.get(stack, 1.0)
            for endpoint in target.endpoints:
                figures += [
                    _figure(
                        target,
                        endpoint,
                        INSTRUCTIONS,
                        [value * 0.999, value, value * 1.001],
                        "",
                        "fake",
                    ),
                    _figure(
                        target, endpoint, SYSCALLS, [10.0, 10.0, 10.0], "", "fake", {"read": 10.0}
                    ),
                ]
        return figures, problems

    count_fn.calls = calls  # type: ignore[attr-defined]
    return count_fn


def _ensure(tmp_path: Path, failing: str | None = None):
    def ensure(stack: Stack) -> Env:
        if stack.name == failing:
            raise EnvError(f"stack {failing}: pins did not hold")
        versions = {
            "old": {"fastapi": "1.0", "orjson": "1.0"},
            "new": {"fastapi": "2.0", "orjson": "2.0"},
        }
        return Env(stack.name, tmp_path, versions.get(stack.name, stack.pinned_versions()))

    return ensure


def _counted_options(tmp_path: Path, count_fn: Any, **overrides: Any) -> AttributeOptions:
    """An attribution of hello's counts with fake counts and weights, offline (no resolver, fake
    environments): what the counted tests share."""
    settings: dict[str, Any] = {
        "patterns": "hello@*",
        "quick": True,
        "out": tmp_path / "out",
        "quiet": True,
        "count_fn": count_fn,
        "weigh": fake_weights,
        "resolve": lambda s: None,
        "ensure": _ensure(tmp_path),
    }
    return AttributeOptions(**{**settings, **overrides})


INSTRUCTIONS_LABEL = "hello GET / seq instructions_per_request"
COST_LABEL = "hello GET / seq cost_us_per_request"


def fake_weights():
    """What counts/weights.py measures, made up: 0.0002 µs per instruction, 5 µs per call."""
    from benchwatch.counts.weights import Weights

    return Weights(
        user_us_per_instruction=0.0002,
        system_us_per_call={"read": 5.0},
        other_call_us=5.0,
        instructions_per_iteration=100.0,
        seconds=0.0,
    )


def test_counts_only_counts_base_once_and_every_stack_in_one_batch(tmp_path, capsys):
    project = _old_and_new(tmp_path)
    count_fn = fake_counts({"new": 1.25, "old+fastapi": 1.25})

    def compare_fn(*args, **kw):
        raise AssertionError("a counts-only attribution runs no compare")

    result, out = attribute(
        project,
        "old",
        "new",
        _counted_options(tmp_path, count_fn, quiet=False, compare_fn=compare_fn),
    )
    said = [
        line.split(" (")[0] for line in capsys.readouterr().err.splitlines() if line.startswith("[")
    ]
    # a progress line per step (the transitive step moves nothing here)
    assert said == [
        "[1/4] old → new — direct",
        "[2/4] old+fastapi — fastapi",
        "[3/4] old+orjson — orjson",
        "[4/4] old+transitive — ",
    ]
    # base and head first, then every step (no trace says what the servers import: each is counted)
    first, steps = count_fn.calls
    assert first == ["hello@old", "hello@new"]
    assert steps == ["hello@old+fastapi", "hello@old+orjson", "hello@old+transitive"]
    assert [s.step for s in result.steps] == ["old+fastapi", "old+orjson", "old+transitive"]
    (line,) = [x for x in result.lines if x.label.endswith("instructions_per_request")]
    assert line.label == INSTRUCTIONS_LABEL and line.scenario == "hello"
    # each step's ratio is its counts over base's; the direct ratio head's over base's
    assert line.steps["old+fastapi"].ratio == pytest.approx(1.25)
    assert line.steps["old+orjson"].ratio == pytest.approx(1.0) and line.steps[
        "old+transitive"
    ].ratio == pytest.approx(1.0)
    assert line.direct.ratio == pytest.approx(1.25) and line.direct.verdict == "regression"
    assert line.agrees is True and result.interactions == [] and result.consistency is None
    # the estimated cost, made with the weights measured once, gates as in a compare
    cost = next(x for x in result.lines if x.label == COST_LABEL)
    assert cost.direct.ratio == pytest.approx(
        (800_000 * 1.25 * 0.0002 + 50) / (800_000 * 0.0002 + 50)
    )
    assert result.steps[0].mechanism["hello GET / seq"].cost_us == pytest.approx(
        (160 + 50, 200 + 50)
    )
    assert result.steps[1].mechanism == {}  # nothing moved
    # each step's folder holds its counts (one folder per target) and its run
    assert result.direct.out == str(out / "direct") and (out / "direct" / "hello@new").is_dir()
    assert (out / "base" / "hello@old").is_dir() and (out / "base" / "run.json").is_file()
    for step in result.steps:
        assert step.out == str(out / "steps" / step.step)
        assert [p.name for p in Path(step.out).glob("hello@*")] == [
            f"hello@{step.step}".replace("+", "_")
        ]
    data = json.loads((out / "attribution.json").read_text())
    assert data["steps"][0]["ratios"][INSTRUCTIONS_LABEL]["ratio"] == pytest.approx(1.25)
    assert "old+fastapi" in (out / "attribution.md").read_text()


def test_counts_only_a_failed_target_is_its_steps_error_and_the_others_go_on(tmp_path):
    project = _old_and_new(tmp_path)
    count_fn = fake_counts({"new": 1.25, "old+fastapi": 1.25}, failing=frozenset({"old+fastapi"}))
    result, out = attribute(
        project,
        "old",
        "new",
        _counted_options(tmp_path, count_fn, ensure=_ensure(tmp_path, failing="old+orjson")),
    )
    assert count_fn.calls[1] == [
        "hello@old+fastapi",
        "hello@old+transitive",
    ]  # old+orjson did not build
    by_name = {s.step: s for s in result.steps}
    assert "hello@old+fastapi [load]: count failed: the server exited" in (
        by_name["old+fastapi"].error or ""
    )
    assert "pins did not hold" in (by_name["old+orjson"].error or "")
    assert by_name["old+transitive"].error is None and by_name["old+transitive"].ratios[
        INSTRUCTIONS_LABEL
    ].ratio == pytest.approx(1.0)
    assert result.direct.error is None
    text = (out / "attribution.md").read_text()
    assert "not measured: hello@old+fastapi [load]: count failed" in text


def test_counts_only_a_failed_base_is_every_steps_error(tmp_path):
    project = _old_and_new(tmp_path)
    count_fn = fake_counts({}, failing=frozenset({"old"}))
    result, _ = attribute(
        project,
        "old",
        "new",
        _counted_options(tmp_path, count_fn),
    )
    assert all(
        "hello@old [load]: count failed" in (s.error or "") for s in [*result.steps, result.direct]
    )
    assert result.lines == []


def test_counts_only_a_disagreement_counts_the_pairs_in_one_more_batch_without_base(tmp_path):
    """fastapi alone 1.30, orjson alone 0.90, directly 1.00 and together 1.00: they interact."""
    project = _old_and_new(tmp_path, new_date="2026-01-01")
    count_fn = fake_counts(
        {"new": 1.0, "old+fastapi": 1.3, "old+orjson": 0.9, "old+fastapi+orjson": 1.0}
    )
    result, out = attribute(
        project,
        "old",
        "new",
        _counted_options(tmp_path, count_fn),
    )
    first, steps, pairs = count_fn.calls
    assert first == ["hello@old", "hello@new"] and steps == [
        "hello@old+fastapi",
        "hello@old+orjson",
    ]
    assert pairs == ["hello@old+fastapi+orjson"]  # base's counts of the first batch serve the pairs
    line = next(x for x in result.lines if x.label == INSTRUCTIONS_LABEL)
    assert line.agrees is False
    (pair,) = [i for i in result.interactions if i.label == INSTRUCTIONS_LABEL]
    assert pair.pair == ("old+fastapi", "old+orjson") and pair.interacts is True
    assert pair.together.ratio == pytest.approx(1.0) and pair.interaction.ratio == pytest.approx(
        1.0 / (1.3 * 0.9)
    )
    assert result.consistency is not None and result.consistency.lines() == []
    assert (out / "pairs" / "old+fastapi+orjson" / "hello@old_fastapi_orjson").is_dir()
    assert "**they interact**" in (out / "attribution.md").read_text()


def test_counts_only_a_step_moving_only_what_the_servers_never_import_is_not_counted(tmp_path):
    """Base's and head's traces show fastapi's modules opened, never orjson's: the orjson step
    cannot move a count, so it is said and left out of the second batch and of the product."""
    from test_imported import site_packages

    site = site_packages(tmp_path / "env")
    trace = f'7 1.0 openat(AT_FDCWD, "{site}/fastapi/__pycache__/routing.cpython-311.pyc", O_RDONLY|O_CLOEXEC) = 3\n'
    project = _old_and_new(tmp_path, new_date="2026-01-01")  # no transitive step
    count_fn = fake_counts({"new": 1.25, "old+fastapi": 1.25}, trace=trace)
    result, out = attribute(
        project,
        "old",
        "new",
        _counted_options(tmp_path, count_fn),
    )
    assert count_fn.calls == [["hello@old", "hello@new"], ["hello@old+fastapi"]]
    by_name = {s.step: s for s in result.steps}
    assert by_name["old+orjson"].skipped == "the servers import none of orjson on old or new"
    assert by_name["old+orjson"].error is None and by_name["old+orjson"].ratios == {}
    line = next(x for x in result.lines if x.label == INSTRUCTIONS_LABEL)
    assert (
        list(line.steps) == ["old+fastapi"]
        and line.product.ratio == pytest.approx(1.25)
        and line.agrees is True
    )
    text = (out / "attribution.md").read_text()
    assert (
        "| old+orjson | orjson 1.0→2.0 | — | not counted: the servers import none of orjson on old or new |"
        in text
    )
    assert "_2 steps (1 measured) + the direct ratio in" in text

"""`benchwatch attribute`: split a change between two stacks into steps, each measured against
base, and put the product of the steps next to the direct ratio. By counts (the default): base and
head counted, then every step that moves a package the servers import, each against base's counts
(attribute/by_counts.py); `--timings`: each step a side-by-side `compare` (attribute/by_compare.py)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path

from benchwatch import counts as counts_module
from benchwatch.attribute import by_compare, by_counts, interactions
from benchwatch.attribute.by_compare import CompareFn
from benchwatch.attribute.counted import Counter, CountFn, Ensure, Weigh, weigh_here
from benchwatch.attribute.resolver import try_resolve
from benchwatch.attribute.steps import Resolve, Step, plan_steps, step_stack
from benchwatch.attribute.table import (
    ATTRIBUTION_JSON,
    ATTRIBUTION_MD,
    Attribution,
    Line,
    build_lines,
    markdown,
)
from benchwatch.counts.same_paths import Links
from benchwatch.declarations.stacks import Stack
from benchwatch.environments import envs
from benchwatch.environments.versions import differing
from benchwatch.errors import UserError
from benchwatch.figures.figure_key import label_metric, label_without_metric, open_loop_label
from benchwatch.figures.metrics import COST
from benchwatch.judge.calibrate import load_calibration
from benchwatch.judge.verdict import Comparison
from benchwatch.measure.session import open_session
from benchwatch.progress import Progress
from benchwatch.project.variants import Project
from benchwatch.results.files import write_json_atomic, write_text_atomic


def with_stacks(project: Project, extra: Sequence[Stack], like: str) -> Project:
    """A copy of the project that also knows `extra`, each served by every app and flavor
    that serves the stack `like`, so compare can take an intermediate stack as a side."""
    names = [s.name for s in extra]

    def widen(listed: list[str] | None) -> list[str] | None:
        return listed + names if listed is not None and like in listed else listed

    apps = []
    for app in project.apps:
        decl = app.declaration
        flavors = {
            k: f.model_copy(update={"stacks": widen(f.stacks)}) for k, f in decl.flavors.items()
        }
        decl = decl.model_copy(update={"stacks": widen(decl.stacks), "flavors": flavors})
        apps.append(dataclasses.replace(app, declaration=decl))
    stacks = {**project.stacks, **{s.name: s for s in extra}}
    return dataclasses.replace(project, stacks=stacks, apps=tuple(apps))


def _compare() -> CompareFn:
    from benchwatch.compare.compare import compare

    return compare


@dataclasses.dataclass(frozen=True)
class AttributeOptions:
    """Every choice of an attribution beyond its two stacks (the defaults are `benchwatch
    attribute`'s). `compare_fn`, `count_fn`, `weigh`, `resolve` and `ensure`: for tests."""

    patterns: str | None = None  # -k: which scenarios (those on both stacks)
    quick: bool = False
    rounds: int | None = None  # each compare's load rounds (--timings)
    out: Path | None = None  # the attribution's folder (None: attribute-<time>)
    quiet: bool = False
    # each step a side-by-side compare (attribute/by_compare.py), adding the load rounds (CPU per
    # request, split user/system); else counted (attribute/by_counts.py)
    timings: bool = False
    compare_fn: CompareFn | None = None
    resolve: Resolve = try_resolve
    ensure: Ensure = envs.ensure
    count_fn: CountFn | None = None
    weigh: Weigh | None = None


def attribute(
    project: Project, base: str, head: str, options: AttributeOptions
) -> tuple[Attribution, Path]:
    """Counts first: base and head counted, then every step that moves a package the servers
    import, each against base's counts (attribute/by_counts.py); `options.timings` makes each step
    a side-by-side compare instead (attribute/by_compare.py)."""
    patterns, quick, rounds, quiet = options.patterns, options.quick, options.rounds, options.quiet
    timings, ensure = options.timings, options.ensure
    started = time.monotonic()
    base_stack, head_stack = project.stack(base), project.stack(head)
    if base == head:
        raise UserError("--base and --head name the same stack: nothing moves")
    chosen = project.select(patterns, [base, head])
    on = {name: {v.scenario for v in chosen if v.stack.name == name} for name in (base, head)}
    scenarios = sorted(on[base] & on[head])
    if not scenarios:
        raise UserError(
            f"-k {patterns!r}: no scenario runs on both {base} and {head} (see `benchwatch list`)"
        )
    session = open_session(project.root, options.out, name="attribute", load_tests=timings)
    out = session.out
    try:
        base_env, head_env = ensure(base_stack), ensure(head_stack)
    except envs.EnvError as exc:
        raise UserError(f"cannot build a side: {exc}") from None
    steps = plan_steps(
        base_stack, head_stack, base_env.versions, head_env.versions, options.resolve
    )
    if not steps:
        raise UserError(f"{base} and {head} install the same versions: nothing to attribute")
    pythons = {base: _python(base_env), head: _python(head_env)}
    built = {base: base_env, head: head_env}
    for step in steps:
        if step.stack is not None:
            env = _build(step, base_env.versions, ensure)
            pythons[step.name] = _python(env)
            if env is not None:
                built[step.name] = env
    measured = [s.stack for s in steps if s.stack is not None and s.error is None]
    both = with_stacks(project, measured, like=base)
    selection = ",".join(f"{s}@*" for s in scenarios)
    scenario_of: dict[str, str] = {}
    moved = differing(base_env.versions, head_env.versions)
    with Links() as links:  # the counted environments through paths of one length, removed after
        progress = Progress(len(steps) + 1, quiet=quiet)
        counter: Counter | None = None  # the way the steps are measured: one of the two
        comparer: by_compare.Comparer | None = None
        if not timings:
            counter = Counter(
                base,
                selection,
                quick,
                load_calibration(project.root),
                ensure,
                built,
                session,
                count_fn=options.count_fn or counts_module.count_requests,
                weigh=options.weigh or weigh_here,
                quiet=quiet,
                links=links,
            )
            direct, outcomes = by_counts.count_steps(
                counter, both, steps, head, moved, out, scenario_of, progress
            )
        else:
            comparer = by_compare.Comparer(
                options.compare_fn or _compare(),
                base,
                selection,
                quick,
                rounds,
                session,
                scenario_of,
            )
            direct, outcomes = by_compare.compare_steps(
                comparer, both, head, steps, moved, out, progress
            )
        lines = build_lines(outcomes, direct, scenario_of)
        result = Attribution(
            base=base,
            head=head,
            scenarios=scenarios,
            quick=quick,
            rounds=rounds,
            steps=outcomes,
            direct=direct,
            lines=lines,
            mechanisms=True,
            method="compare" if timings else "counts",
            repeats=counter.repeats if counter is not None else None,
        )
        disagreeing = [
            line for line in lines if line.agrees is False and not open_loop_label(line.label)
        ]
        if disagreeing:
            result.consistency = interactions.consistency(
                outcomes, direct, {k: v for k, v in pythons.items() if v}
            )
            pairs = _pairs(disagreeing, steps)
            progress.total += len(pairs)
            pair_stacks = {}
            for a, b in pairs:
                name = f"{a.name}+{'+'.join(b.group)}"
                pair_stacks[(a.name, b.name)] = step_stack(
                    base_stack, head_stack, base_env.versions, moved, [*a.group, *b.group], name
                )
            both = with_stacks(both, list(pair_stacks.values()), like=base)
            if counter is not None:
                result.interactions += by_counts.count_pairs(
                    counter, both, pair_stacks, disagreeing, ensure, out / "pairs", progress
                )
            if comparer is not None:
                result.interactions += by_compare.compare_pairs(
                    comparer, both, pair_stacks, disagreeing, ensure, out / "pairs", progress
                )
    result.seconds = round(time.monotonic() - started, 1)
    write_json_atomic(out / ATTRIBUTION_JSON, result.model_dump(mode="json"))
    write_text_atomic(out / ATTRIBUTION_MD, markdown(result))
    return result, out


def _build(step: Step, base_versions: dict[str, str], ensure: Ensure) -> envs.Env | None:
    """The step's environment, verified like any other (pins read back); what really moved."""
    assert step.stack is not None
    try:
        env = ensure(step.stack)
    except envs.EnvError as exc:
        step.error = str(exc)
        return None
    step.moved = differing(base_versions, env.versions)
    return env


def _python(env: envs.Env | None) -> str:
    """The interpreter an environment was built on, as the fingerprint names it ("" unknown)."""
    interpreter = getattr(env, "interpreter", None)
    return f"{interpreter.label} ({interpreter.build})" if interpreter is not None else ""


def _pairs(disagreeing: list[Line], steps: list[Step]) -> list[tuple[Step, Step]]:
    """The second-order steps of every disagreeing figure that gates, each pair once: an endpoint's
    estimated cost when it disagrees (its counts are its parts, and a pair stack measures them all),
    else each of its disagreeing figures."""
    costs = {
        label_without_metric(line.label)
        for line in disagreeing
        if label_metric(line.label) == COST.key
    }
    gating = [
        line
        for line in disagreeing
        if label_metric(line.label) == COST.key or label_without_metric(line.label) not in costs
    ]
    seen: dict[tuple[str, str], tuple[Step, Step]] = {}
    for line in gating:
        for a, b in interactions.pairs_to_try(line, steps):
            seen.setdefault((a.name, b.name), (a, b))
    return list(seen.values())


def changed_scenarios(compare_dir: Path) -> list[str]:
    """The scenarios whose gating figures changed significantly in a compare's output."""
    from benchwatch.judge.verdict import COMPARE_FILE

    path = compare_dir / COMPARE_FILE
    try:
        comparison = Comparison.model_validate_json(path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"--changed-in: cannot read {path}: {str(exc).splitlines()[0]}") from None
    return sorted({r.scenario for r in comparison.rows if r.gating and r.significant})

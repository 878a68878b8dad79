"""`benchwatch attribute`: split a change between two stacks into steps, each measured side by
side against base with `compare`, and put the product of the steps next to the direct ratio."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchwatch import envs
from benchwatch.attribute import interactions
from benchwatch.attribute.mechanism import Mechanism, mechanisms
from benchwatch.attribute.resolver import try_resolve
from benchwatch.attribute.steps import Resolve, Step, differing, plan_steps, step_stack
from benchwatch.attribute.table import (
    ATTRIBUTION_JSON,
    ATTRIBUTION_MD,
    Attribution,
    Line,
    StepOutcome,
    build_lines,
    gating_ratios,
    markdown,
    open_loop,
)
from benchwatch.compare.verdict import Comparison
from benchwatch.config import Project
from benchwatch.declarations import Stack
from benchwatch.errors import UserError
from benchwatch.progress import Progress
from benchwatch.results import write_json_atomic, write_text_atomic
from benchwatch.session import open_session

CompareFn = Callable[..., tuple[Comparison, Path]]
Ensure = Callable[[Stack], envs.Env]


def with_stacks(project: Project, extra: Sequence[Stack], like: str) -> Project:
    """A copy of the project that also knows `extra`, each served by every app and flavor
    that serves the stack `like`, so compare can take an intermediate stack as a side."""
    names = [s.name for s in extra]

    def widen(listed: list[str] | None) -> list[str] | None:
        return listed + names if listed is not None and like in listed else listed

    apps = []
    for app in project.apps:
        decl = app.declaration
        flavors = {k: f.model_copy(update={"stacks": widen(f.stacks)}) for k, f in decl.flavors.items()}
        decl = decl.model_copy(update={"stacks": widen(decl.stacks), "flavors": flavors})
        apps.append(dataclasses.replace(app, declaration=decl))
    stacks = {**project.stacks, **{s.name: s for s in extra}}
    return dataclasses.replace(project, stacks=stacks, apps=tuple(apps))


def _compare() -> CompareFn:
    from benchwatch.compare.run import compare

    return compare


def attribute(
    project: Project, base: str, head: str, *, patterns: str | None = None, quick: bool = False,
    rounds: int | None = None, out: Path | None = None, quiet: bool = False,
    compare_fn: CompareFn | None = None, resolve: Resolve = try_resolve, ensure: Ensure = envs.ensure,
    timings: bool = False,
) -> tuple[Attribution, Path]:  # fmt: skip
    """Counts first: each step is counted (instructions and system calls per request, once per
    side); `timings` adds the side-by-side load rounds (CPU per request, split user/system)."""
    started = time.monotonic()
    compare_fn = compare_fn or _compare()
    base_stack, head_stack = project.stack(base), project.stack(head)
    if base == head:
        raise UserError("--base and --head name the same stack: nothing moves")
    chosen = project.select(patterns, [base, head])
    on = {name: {v.scenario for v in chosen if v.stack.name == name} for name in (base, head)}
    scenarios = sorted(on[base] & on[head])
    if not scenarios:
        raise UserError(f"-k {patterns!r}: no scenario runs on both {base} and {head} (see `benchwatch list`)")
    session = open_session(project.root, out, name="attribute", load_tests=timings)
    out = session.out
    try:
        base_env, head_env = ensure(base_stack), ensure(head_stack)
    except envs.EnvError as exc:
        raise UserError(f"cannot build a side: {exc}") from None
    steps = plan_steps(base_stack, head_stack, base_env.versions, head_env.versions, resolve)
    if not steps:
        raise UserError(f"{base} and {head} install the same versions: nothing to attribute")
    progress = Progress(len(steps) + 1, quiet=quiet)
    pythons = {base: _python(base_env), head: _python(head_env)}
    for step in steps:
        if step.stack is not None:
            pythons[step.name] = _python(_build(step, base_env.versions, ensure))
    measured = [s.stack for s in steps if s.stack is not None and s.error is None]
    both = with_stacks(project, measured, like=base)
    selection = ",".join(f"{s}@*" for s in scenarios)
    scenario_of: dict[str, str] = {}

    def measure(side: str, directory: Path) -> tuple[dict, str | None, dict[str, Mechanism]]:
        comparison, _ = compare_fn(both, base, side, patterns=selection, quick=quick, rounds=rounds, out=directory,
                                   micro=False, quiet=True, load=timings, counts=True, confirm=False,
                                   session=session)  # fmt: skip
        found = gating_ratios(comparison)
        scenario_of.update({label: scenario for label, (scenario, _) in found.items()})
        trouble = "; ".join(p.line() for p in comparison.problems) or None
        return {label: ratio for label, (_, ratio) in found.items()}, trouble, mechanisms(comparison)

    progress.step(f"{base} → {head}", "direct")
    ratios, trouble, mechanism = measure(head, out / "direct")
    direct = StepOutcome(step="direct", kind="direct", requested=head, group=sorted(differing(base_env.versions, head_env.versions)),
                         moved=differing(base_env.versions, head_env.versions), ratios=ratios, error=None,
                         note=trouble or "", out=str(out / "direct"), mechanism=mechanism)  # fmt: skip
    progress.advance()
    outcomes = []
    for step in steps:
        progress.step(step.name, f"{', '.join(step.group)}")
        outcome = StepOutcome(step=step.name, kind=step.kind, requested=step.requested, group=list(step.group),
                              moved=step.moved, note=step.note, error=step.error)  # fmt: skip
        if step.error is None and step.stack is not None:
            directory = out / "steps" / step.name
            outcome.ratios, trouble, outcome.mechanism = measure(step.name, directory)
            outcome.out = str(directory)
            if trouble:
                outcome.note = "; ".join(filter(None, [outcome.note, trouble]))
        outcomes.append(outcome)
        progress.advance()
    lines = build_lines(outcomes, direct, scenario_of)
    result = Attribution(base=base, head=head, scenarios=scenarios, quick=quick, rounds=rounds, steps=outcomes,
                         direct=direct, lines=lines, mechanisms=True)  # fmt: skip
    disagreeing = [line for line in lines if line.agrees is False and not open_loop(line.label)]
    if disagreeing:
        result.consistency = interactions.consistency(outcomes, direct, {k: v for k, v in pythons.items() if v})
        pairs = _pairs(disagreeing, steps)
        progress.total += len(pairs)
        pair_stacks = {}
        for a, b in pairs:
            name = f"{a.name}+{'+'.join(b.group)}"
            pair_stacks[(a.name, b.name)] = step_stack(base_stack, head_stack, base_env.versions,
                                                       differing(base_env.versions, head_env.versions),
                                                       [*a.group, *b.group], name)  # fmt: skip
        both = with_stacks(both, list(pair_stacks.values()), like=base)
        for (a, b), stack in pair_stacks.items():
            progress.step(stack.name, f"second order: {a} × {b}")
            result.interactions += _second_order(stack, (a, b), disagreeing, measure, ensure, out / "pairs")
            progress.advance()
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
    """The second-order steps of every disagreeing figure, each pair once."""
    seen: dict[tuple[str, str], tuple[Step, Step]] = {}
    for line in disagreeing:
        for a, b in interactions.pairs_to_try(line, steps):
            seen.setdefault((a.name, b.name), (a, b))
    return list(seen.values())


def _second_order(
    stack: Stack, pair: tuple[str, str], disagreeing: list[Line], measure: Callable, ensure: Ensure, out: Path
) -> list[interactions.Interaction]:  # fmt: skip
    """One pair moved together, measured against base; judged on every disagreeing figure
    whose largest movers it joins."""
    mine = [line for line in disagreeing if all(name in line.steps for name in pair)]
    try:
        ensure(stack)
    except envs.EnvError as exc:
        return [interactions.Interaction(label=line.label, pair=pair, stack=stack.name, error=str(exc)) for line in mine]
    ratios, trouble, _ = measure(stack.name, out / stack.name)
    found = []
    for line in mine:
        together = ratios.get(line.label)
        if together is None:
            found.append(interactions.Interaction(label=line.label, pair=pair, stack=stack.name,
                                                  error=trouble or "the figure was not measured"))  # fmt: skip
            continue
        found.append(interactions.judge(line.label, pair, stack.name, together, [line.steps[n] for n in pair]))
    return found


def changed_scenarios(compare_dir: Path) -> list[str]:
    """The scenarios whose gating figures changed significantly in a compare's output."""
    from benchwatch.compare.verdict import COMPARE_FILE

    path = compare_dir / COMPARE_FILE
    try:
        comparison = Comparison.model_validate_json(path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"--changed-in: cannot read {path}: {str(exc).splitlines()[0]}") from None
    return sorted({r.scenario for r in comparison.rows if r.gating and r.significant})

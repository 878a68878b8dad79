"""`benchwatch attribute`: split a change between two stacks into steps, each measured against
base, and put the product of the steps next to the direct ratio. Counts only (the default): every
stack counted in one batch and paired with base's counts (attribute/counted.py); `--timings`: each
step a side-by-side `compare` against base."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchwatch import counts as counts_module
from benchwatch import envs
from benchwatch.attribute import interactions
from benchwatch.attribute.counted import Counter, CountFn
from benchwatch.attribute.ratios import Ratio
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
from benchwatch.compare.calibrate import load_calibration
from benchwatch.compare.verdict import Comparison
from benchwatch.config import Project
from benchwatch.declarations import Stack
from benchwatch.errors import UserError
from benchwatch.progress import Progress
from benchwatch.results import write_json_atomic, write_text_atomic
from benchwatch.session import Session, open_session

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
    timings: bool = False, count_fn: CountFn | None = None,
) -> tuple[Attribution, Path]:  # fmt: skip
    """Counts first: every stack is counted (instructions and system calls per request), base once,
    all in one batch; `timings` makes each step a compare instead, adding the side-by-side load rounds
    (CPU per request, split user/system). `compare_fn` and `count_fn`: for tests."""
    started = time.monotonic()
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
    if not timings:
        counter = Counter(base, selection, quick, load_calibration(project.root), ensure, built, session,
                          count_fn=count_fn or counts_module.count_requests, quiet=quiet)  # fmt: skip
        direct, outcomes, progress = _all_counted(counter, both, steps, head, moved, out, scenario_of, quiet)
    else:
        progress = Progress(len(steps) + 1, quiet=quiet)
        direct, outcomes, measure = _each_compared(compare_fn or _compare(), both, base, head, steps, moved, out,
                                                   selection, quick, rounds, session, progress, scenario_of)  # fmt: skip
    lines = build_lines(outcomes, direct, scenario_of)
    result = Attribution(base=base, head=head, scenarios=scenarios, quick=quick, rounds=rounds, steps=outcomes,
                         direct=direct, lines=lines)  # fmt: skip
    disagreeing = [line for line in lines if line.agrees is False and not open_loop(line.label)]
    if disagreeing:
        result.consistency = interactions.consistency(outcomes, direct, {k: v for k, v in pythons.items() if v})
        pairs = _pairs(disagreeing, steps)
        progress.total += len(pairs)
        pair_stacks = {}
        for a, b in pairs:
            name = f"{a.name}+{'+'.join(b.group)}"
            pair_stacks[(a.name, b.name)] = step_stack(base_stack, head_stack, base_env.versions, moved,
                                                       [*a.group, *b.group], name)  # fmt: skip
        both = with_stacks(both, list(pair_stacks.values()), like=base)
        if not timings:
            result.interactions += _pairs_counted(counter, both, pair_stacks, disagreeing, ensure, out / "pairs", progress)
        else:
            for (a, b), stack in pair_stacks.items():
                progress.step(stack.name, f"second order: {a} × {b}")
                measure_pair = functools.partial(measure, both)  # the project that knows the pairs' stacks
                result.interactions += _second_order(stack, (a, b), disagreeing, measure_pair, ensure, out / "pairs")
                progress.advance()
    result.seconds = round(time.monotonic() - started, 1)
    write_json_atomic(out / ATTRIBUTION_JSON, result.model_dump(mode="json"))
    write_text_atomic(out / ATTRIBUTION_MD, markdown(result))
    return result, out


def _all_counted(
    counter: Counter, project: Project, steps: list[Step], head: str, moved: dict, out: Path,
    scenario_of: dict[str, str], quiet: bool,
) -> tuple[StepOutcome, list[StepOutcome], Progress]:  # fmt: skip
    """Base, head and every step that built, counted in one batch; each against base's counts.
    The progress lines follow, one per step as its ratios are taken (the batch says its own)."""
    folders = {counter.base: out / "base", head: out / "direct"}
    folders.update({s.name: out / "steps" / s.name for s in steps if s.error is None and s.stack is not None})
    counted = counter.count(project, folders)
    for found in counted.values():
        scenario_of.update(found.scenarios)
    progress = Progress(len(steps) + 1, quiet=quiet)
    progress.step(f"{counter.base} → {head}", "direct")
    found = counted[head]
    direct = StepOutcome(step="direct", kind="direct", requested=head, group=sorted(moved), moved=moved,
                         ratios=found.ratios, error=found.error, out=str(folders[head]))  # fmt: skip
    progress.advance()
    outcomes = []
    for step in steps:
        progress.step(step.name, f"{', '.join(step.group)}")
        outcome = StepOutcome(step=step.name, kind=step.kind, requested=step.requested, group=list(step.group),
                              moved=step.moved, note=step.note, error=step.error)  # fmt: skip
        if step.name in counted:
            outcome.ratios, outcome.error, outcome.out = counted[step.name].ratios, counted[step.name].error, str(folders[step.name])
        outcomes.append(outcome)
        progress.advance()
    return direct, outcomes, progress


def _pairs_counted(
    counter: Counter, project: Project, pair_stacks: dict[tuple[str, str], Stack], disagreeing: list[Line],
    ensure: Ensure, out: Path, progress: Progress,
) -> list[interactions.Interaction]:  # fmt: skip
    """The second-order stacks that build, counted in one more batch; each judged like `_second_order`."""
    failed: dict[tuple[str, str], str] = {}
    for pair, stack in pair_stacks.items():
        try:
            counter.built[stack.name] = ensure(stack)
        except envs.EnvError as exc:
            failed[pair] = str(exc)
    ready = {stack.name: out / stack.name for pair, stack in pair_stacks.items() if pair not in failed}
    counted = counter.count(project, ready) if ready else {}
    found = []
    for (a, b), stack in pair_stacks.items():
        progress.step(stack.name, f"second order: {a} × {b}")
        mine = _joined(disagreeing, (a, b))
        if (a, b) in failed:
            found += [interactions.Interaction(label=line.label, pair=(a, b), stack=stack.name, error=failed[(a, b)])
                      for line in mine]  # fmt: skip
        else:
            found += _judged(stack.name, (a, b), mine, counted[stack.name].ratios, counted[stack.name].error)
        progress.advance()
    return found


def _each_compared(
    compare_fn: CompareFn, both: Project, base: str, head: str, steps: list[Step], moved: dict, out: Path,
    selection: str, quick: bool, rounds: int | None, session: Session, progress: Progress, scenario_of: dict[str, str],
) -> tuple[StepOutcome, list[StepOutcome], Callable]:  # fmt: skip
    """--timings: the direct compare, then every step a compare of base against the step's stack."""

    def measure(project: Project, side: str, directory: Path) -> tuple[dict, str | None]:
        comparison, _ = compare_fn(project, base, side, patterns=selection, quick=quick, rounds=rounds, out=directory,
                                   micro=False, quiet=True, load=True, counts=True, confirm=False,
                                   session=session)  # fmt: skip
        found = gating_ratios(comparison)
        scenario_of.update({label: scenario for label, (scenario, _) in found.items()})
        trouble = "; ".join(p.line() for p in comparison.problems) or None
        return {label: ratio for label, (_, ratio) in found.items()}, trouble

    progress.step(f"{base} → {head}", "direct")
    ratios, trouble = measure(both, head, out / "direct")
    direct = StepOutcome(step="direct", kind="direct", requested=head, group=sorted(moved), moved=moved, ratios=ratios,
                         error=None, note=trouble or "", out=str(out / "direct"))  # fmt: skip
    progress.advance()
    outcomes = []
    for step in steps:
        progress.step(step.name, f"{', '.join(step.group)}")
        outcome = StepOutcome(step=step.name, kind=step.kind, requested=step.requested, group=list(step.group),
                              moved=step.moved, note=step.note, error=step.error)  # fmt: skip
        if step.error is None and step.stack is not None:
            directory = out / "steps" / step.name
            outcome.ratios, trouble = measure(both, step.name, directory)
            outcome.out = str(directory)
            if trouble:
                outcome.note = "; ".join(filter(None, [outcome.note, trouble]))
        outcomes.append(outcome)
        progress.advance()
    return direct, outcomes, measure


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
    mine = _joined(disagreeing, pair)
    try:
        ensure(stack)
    except envs.EnvError as exc:
        return [interactions.Interaction(label=line.label, pair=pair, stack=stack.name, error=str(exc)) for line in mine]
    ratios, trouble = measure(stack.name, out / stack.name)
    return _judged(stack.name, pair, mine, ratios, trouble)


def _joined(disagreeing: list[Line], pair: tuple[str, str]) -> list[Line]:
    """The disagreeing figures whose largest movers the pair joins."""
    return [line for line in disagreeing if all(name in line.steps for name in pair)]


def _judged(
    stack: str, pair: tuple[str, str], mine: list[Line], ratios: dict[str, Ratio], trouble: str | None
) -> list[interactions.Interaction]:  # fmt: skip
    found = []
    for line in mine:
        together = ratios.get(line.label)
        if together is None:
            found.append(interactions.Interaction(label=line.label, pair=pair, stack=stack,
                                                  error=trouble or "the figure was not measured"))  # fmt: skip
            continue
        found.append(interactions.judge(line.label, pair, stack, together, [line.steps[n] for n in pair]))
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

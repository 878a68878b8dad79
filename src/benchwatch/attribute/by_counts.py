"""attribute by counts (the default): base and head counted first, then every step that moves a
package the servers import, then (when the product and the direct ratio disagree) the pairs.

The first batch counts base and head side by side (two servers at a time); their strace traces say
which distributions the servers ran code from (attribute/imported.py), and a step moving none of
those is not counted: it cannot move a count. The steps left are counted in a second batch, each
against base's counts of the first (attribute/counted.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchwatch import counts
from benchwatch.attribute import imported, interactions
from benchwatch.attribute.counted import Counted, Counter, Ensure
from benchwatch.attribute.outcomes import Line, StepOutcome, outcome_of
from benchwatch.attribute.steps import Step
from benchwatch.declarations.stacks import Stack
from benchwatch.environments import envs
from benchwatch.progress import Progress
from benchwatch.project.variants import Project


def count_steps(
    counter: Counter,
    project: Project,
    steps: list[Step],
    head: str,
    moved: dict,
    out: Path,
    scenario_of: dict[str, str],
    progress: Progress,
) -> tuple[StepOutcome, list[StepOutcome]]:
    """The direct outcome and every step's, each against base's counts."""
    progress.step(f"{counter.base} → {head}", "direct (base and head counted)")
    first = counter.count(project, {counter.base: out / "base", head: out / "direct"})
    found = first[head]
    scenario_of.update(found.scenarios)
    direct = StepOutcome(
        step="direct",
        kind="direct",
        requested=head,
        group=sorted(moved),
        moved=moved,
        ratios=found.ratios,
        error=found.error,
        out=str(out / "direct"),
        mechanism=found.mechanism,
    )
    progress.advance()
    ran = _ran(first[counter.base], found)
    outcomes = [outcome_of(s) for s in steps]
    ready = {}
    for step, outcome in zip(steps, outcomes, strict=True):
        if step.error is not None or step.stack is None:
            continue
        moving = list(step.moved or step.group)
        idle = imported.unimported(moving, ran) if ran is not None else []
        if idle and len(idle) == len(moving):
            outcome.skipped = (
                f"the servers import none of {', '.join(idle)} on {counter.base} or {head}"
            )
        else:
            ready[step.name] = out / "steps" / step.name
    counted = counter.count(project, ready) if ready else {}
    for step, outcome in zip(steps, outcomes, strict=True):
        progress.step(
            step.name, ", ".join(step.group) + (" (not counted)" if outcome.skipped else "")
        )
        if step.name in counted:
            mine = counted[step.name]
            scenario_of.update(mine.scenarios)
            outcome.ratios, outcome.error, outcome.mechanism = (
                mine.ratios,
                mine.error,
                mine.mechanism,
            )
            outcome.out = str(ready[step.name])
        progress.advance()
    return direct, outcomes


def _ran(*sides: Counted) -> set[str] | None:
    """The distributions either side's servers ran code from; None when a trace cannot be read or
    names none (then every step is counted)."""
    traces = [directory / counts.TRACE for side in sides for directory in side.dirs.values()]
    if not traces:
        return None
    try:
        ran = imported.imported(traces)
    except imported.TraceUnreadable:
        return None
    return ran or None  # no module file under a site-packages folder: nothing to go by


def count_pairs(
    counter: Counter,
    project: Project,
    pair_stacks: dict[tuple[str, str], Stack],
    disagreeing: Sequence[Line],
    ensure: Ensure,
    out: Path,
    progress: Progress,
) -> list[interactions.Interaction]:
    """The second-order stacks that build, counted in one more batch without base; each judged on
    the disagreeing figures whose largest movers it joins."""
    failed: dict[tuple[str, str], str] = {}
    for pair, stack in pair_stacks.items():
        try:
            counter.built[stack.name] = ensure(stack)
        except envs.EnvError as exc:
            failed[pair] = str(exc)
    ready = {
        stack.name: out / stack.name for pair, stack in pair_stacks.items() if pair not in failed
    }
    counted = counter.count(project, ready) if ready else {}
    found = []
    for (a, b), stack in pair_stacks.items():
        progress.step(stack.name, f"second order: {a} × {b}")
        mine = interactions.joined(disagreeing, (a, b))
        if (a, b) in failed:
            found += [
                interactions.Interaction(
                    label=line.label, pair=(a, b), stack=stack.name, error=failed[(a, b)]
                )
                for line in mine
            ]
        else:
            found += interactions.judged(
                stack.name, (a, b), mine, counted[stack.name].ratios, counted[stack.name].error
            )
        progress.advance()
    return found

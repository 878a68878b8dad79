"""attribute --timings: the direct compare, then every step a side-by-side `compare` of base
against the step's stack (load rounds and counts), then the pairs, each a compare too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from benchwatch.attribute import interactions
from benchwatch.attribute.mechanism import Mechanism, mechanisms
from benchwatch.attribute.outcomes import Line, StepOutcome, outcome_of
from benchwatch.attribute.ratios import Ratio
from benchwatch.attribute.steps import Step
from benchwatch.attribute.table import gating_ratios
from benchwatch.compare.options import CompareOptions
from benchwatch.declarations.stacks import Stack
from benchwatch.environments import envs
from benchwatch.judge.verdict import Comparison
from benchwatch.measure.session import Session
from benchwatch.progress import Progress
from benchwatch.project.variants import Project

CompareFn = Callable[[Project, str, str, CompareOptions], tuple[Comparison, Path]]
Ensure = Callable[[Stack], envs.Env]
Measured = tuple[dict[str, Ratio], str | None, dict[str, Mechanism]]  # ratios, trouble, mechanism


class Comparer:
    """Each stack a compare against base, its ratios, problems and mechanism kept."""

    def __init__(
        self,
        compare_fn: CompareFn,
        base: str,
        selection: str,
        quick: bool,
        rounds: int | None,
        session: Session,
        scenario_of: dict[str, str],
    ) -> None:
        self.compare_fn, self.base, self.selection, self.quick, self.rounds = (
            compare_fn,
            base,
            selection,
            quick,
            rounds,
        )
        self.session, self.scenario_of = session, scenario_of

    def measure(self, project: Project, side: str, directory: Path) -> Measured:
        options = CompareOptions(
            patterns=self.selection,
            quick=self.quick,
            rounds=self.rounds,
            out=directory,
            micro=False,
            quiet=True,
            load=True,
            counts=True,
            confirm=False,
            session=self.session,
        )
        comparison, _ = self.compare_fn(project, self.base, side, options)
        found = gating_ratios(comparison)
        self.scenario_of.update({label: scenario for label, (scenario, _) in found.items()})
        trouble = "; ".join(p.line() for p in comparison.problems) or None
        return (
            {label: ratio for label, (_, ratio) in found.items()},
            trouble,
            mechanisms(comparison),
        )


def compare_steps(
    comparer: Comparer,
    project: Project,
    head: str,
    steps: list[Step],
    moved: dict,
    out: Path,
    progress: Progress,
) -> tuple[StepOutcome, list[StepOutcome]]:
    """The direct compare, then every step that built a compare of base against its stack."""
    progress.step(f"{comparer.base} → {head}", "direct")
    ratios, trouble, mechanism = comparer.measure(project, head, out / "direct")
    direct = StepOutcome(
        step="direct",
        kind="direct",
        requested=head,
        group=sorted(moved),
        moved=moved,
        ratios=ratios,
        error=None,
        note=trouble or "",
        out=str(out / "direct"),
        mechanism=mechanism,
    )
    progress.advance()
    outcomes = []
    for step in steps:
        progress.step(step.name, f"{', '.join(step.group)}")
        outcome = outcome_of(step)
        if step.error is None and step.stack is not None:
            directory = out / "steps" / step.name
            outcome.ratios, trouble, outcome.mechanism = comparer.measure(
                project, step.name, directory
            )
            outcome.out = str(directory)
            if trouble:
                outcome.note = "; ".join(filter(None, [outcome.note, trouble]))
        outcomes.append(outcome)
        progress.advance()
    return direct, outcomes


def compare_pairs(
    comparer: Comparer,
    project: Project,
    pair_stacks: dict[tuple[str, str], Stack],
    disagreeing: Sequence[Line],
    ensure: Ensure,
    out: Path,
    progress: Progress,
) -> list[interactions.Interaction]:
    """Each pair moved together, a compare against base; judged on every disagreeing figure whose
    largest movers it joins."""
    found = []
    for pair, stack in pair_stacks.items():
        progress.step(stack.name, f"second order: {pair[0]} × {pair[1]}")
        mine = interactions.joined(disagreeing, pair)
        try:
            ensure(stack)
        except envs.EnvError as exc:
            found += [
                interactions.Interaction(
                    label=line.label, pair=pair, stack=stack.name, error=str(exc)
                )
                for line in mine
            ]
        else:
            ratios, trouble, _ = comparer.measure(project, stack.name, out / stack.name)
            found += interactions.judged(stack.name, pair, mine, ratios, trouble)
        progress.advance()
    return found

"""attribute without --timings: the targets of every stack (base, head, each step) counted in one
batch (`counts.count_requests`), then each stack's counts paired with base's
(`compare.verdict.compare_figures`, with the project's calibrated floors, as `compare` pairs them).

Base is counted once, not once per step, and the batch has one set-up; a count does not depend on
what else the machine runs, so the stacks need not be counted side by side. Each stack's files
(callgrind, strace, run.json) stay in its own folder. The estimated cost is not weighed: it is not
among the attributed figures (table.ATTRIBUTED), so no weights are measured."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchwatch import counts, envs
from benchwatch.attribute.ratios import Ratio
from benchwatch.attribute.table import attributed_ratios
from benchwatch.compare.calibrate import Calibration
from benchwatch.compare.verdict import compare_figures
from benchwatch.config import Project, Variant
from benchwatch.declarations import Stack
from benchwatch.results import Figure, Problem, write_run
from benchwatch.session import Session, now

CountFn = Callable[..., tuple[list[Figure], list[Problem]]]
Ensure = Callable[[Stack], envs.Env]
JOBS = 2  # two servers counted at a time


@dataclass
class Counted:
    """One stack's counts against base's."""

    ratios: dict[str, Ratio] = field(default_factory=dict)  # by figure label
    scenarios: dict[str, str] = field(default_factory=dict)  # figure label -> scenario
    problems: list[str] = field(default_factory=list)  # base's and this stack's failures, a line each

    @property
    def error(self) -> str | None:
        return "; ".join(self.problems) or None


@dataclass
class Counter:
    """Counts stacks in batches; base's figures, counted in the first batch, serve every later one."""

    base: str
    selection: str  # -k: the chosen scenarios on any stack
    quick: bool  # the quick endpoints only
    calibration: Calibration | None
    ensure: Ensure
    built: dict[str, envs.Env]  # by stack name: the environments attribute built already
    session: Session
    count_fn: CountFn = counts.count_requests
    quiet: bool = False
    base_figures: list[Figure] = field(default_factory=list)
    base_problems: list[str] = field(default_factory=list)

    def count(self, project: Project, folders: Mapping[str, Path]) -> dict[str, Counted]:
        """Every target of every stack in `folders` (stack name -> its folder; base's too in the first
        batch) in one count_requests call, each stack paired with base: {stack: Counted}, base left out."""
        from benchwatch.measure import preflight

        chosen = {name: self._variants(project, name) for name in folders}
        preflight.check([v for variants in chosen.values() for v in variants])
        targets: list[counts.CountTarget] = []
        dirs: list[Path] = []
        stack_of: dict[str, str] = {}  # variant id -> stack
        trouble: dict[str, list[str]] = {name: [] for name in folders}
        for name, variants in chosen.items():
            if not variants:
                trouble[name].append(f"no variant of {self.selection} on {name}")
            found, failed = self._targets(name, variants)
            trouble[name] += failed
            targets += found
            dirs += counts.target_dirs(folders[name], found)
            stack_of.update({t.variant.id: name for t in found})
        silent = (lambda line: None) if self.quiet else None
        figures, problems = (self.count_fn(targets, out_dir=self.session.out, jobs=JOBS, log=silent, dirs=dirs)
                             if targets else ([], []))  # fmt: skip
        figures_of: dict[str, list[Figure]] = {name: [] for name in folders}
        problems_of: dict[str, list[Problem]] = {name: [] for name in folders}
        for figure in figures:
            figures_of[stack_of[figure.variant]].append(figure)
        for problem in problems:
            problems_of[stack_of[problem.variant]].append(problem)
        for name, folder in folders.items():
            self._write(folder, figures_of[name], problems_of[name])
            trouble[name] += [p.line() for p in problems_of[name]]
        if self.base in folders:
            self.base_figures, self.base_problems = figures_of[self.base], trouble[self.base]
        return {name: self._against_base(figures_of[name], trouble[name]) for name in folders if name != self.base}

    def _variants(self, project: Project, name: str) -> list[Variant]:
        return [v for v in project.select(self.selection, [name]) if v.stack.name == name]

    def _targets(self, name: str, variants: list[Variant]) -> tuple[list[counts.CountTarget], list[str]]:
        """A target per variant whose environment is there: the stack's own (built by attribute), or
        the variant's when it differs (an app that asks for another Python)."""
        environments: dict[str, envs.Env] = {}
        failed: list[str] = []
        for variant in variants:
            key = variant.env_key
            if key in environments:
                continue
            env = self.built.get(name) if key == name else None
            if env is None:
                try:
                    env = self.ensure(variant.stack)
                except envs.EnvError as exc:
                    failed.append(f"{variant.id}: environment failed: {exc}")
                    continue
            environments[key] = env
        return counts.targets_for(variants, environments, self.quick), failed

    def _write(self, folder: Path, figures: list[Figure], problems: list[Problem]) -> None:
        """The stack's figures as a run (run.json), next to its counts' files."""
        run = self.session.start_run()
        run.figures, run.problems, run.complete, run.finished_at = figures, problems, True, now()
        write_run(folder, run)

    def _against_base(self, figures: list[Figure], trouble: list[str]) -> Counted:
        rows, _ = compare_figures(self.base_figures, figures, self.calibration)
        found = attributed_ratios(rows)
        return Counted(ratios={label: ratio for label, (_, ratio) in found.items()},
                       scenarios={label: scenario for label, (scenario, _) in found.items()},
                       problems=[*self.base_problems, *trouble])  # fmt: skip

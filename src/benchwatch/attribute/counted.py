"""attribute without --timings: stacks counted in batches (`counts.count_requests`), base once, each
stack's counts then paired with base's and judged as `compare` judges them (judge/judged.py: the
estimated cost with one set of weights measured once, the calibrated, threads' and cost floors).

Base is counted once, not once per step, and the weights are measured once: a count does not depend
on what else the machine runs, so the stacks need not be counted side by side. Every stack is
counted in a shorter sequence than compare's (fewer phases of fewer requests, a shorter idle pause:
below). Each stack's files (callgrind, strace, run.json) stay in its own folder, so where a step's
instructions went is read from them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchwatch import counts
from benchwatch.attribute.mechanism import Mechanism, mechanisms_of
from benchwatch.attribute.ratios import Ratio
from benchwatch.attribute.table import attributed_ratios
from benchwatch.compare.rounds import where_instructions_went
from benchwatch.counts.breakdown import by_object
from benchwatch.counts.same_paths import Links
from benchwatch.counts.weights import Weights, WeightsFailed
from benchwatch.declarations.stacks import Stack
from benchwatch.environments import envs
from benchwatch.judge.calibrate import Calibration
from benchwatch.judge.judged import judged_rows
from benchwatch.measure.session import Session, now
from benchwatch.project.variants import Project, Variant
from benchwatch.results.files import write_run
from benchwatch.results.schema import Figure, Problem

CountFn = Callable[..., tuple[list[Figure], list[Problem]]]
Weigh = Callable[[], Weights]
Ensure = Callable[[Stack], envs.Env]
# servers counted at a time: a count sleeps for a third of its time (think times between requests,
# the idle pause), so a third server keeps two cores busy; counts do not depend on the machine's load
JOBS = 3
# A step's count is shorter than a compare's: its ratio is not a verdict on a pull request, and the
# phases of one boot agree within 0.1 % (docs/counts.md). Measured on hello@latest: 34 s a target
# with compare's sequence, 25 s with this one, the same instructions per request within 0.06 %.
ATTRIBUTE_REPEATS = 2  # counted phases per endpoint (compare's: counts.DEFAULT_REPEATS, 3)
ATTRIBUTE_REQUESTS = (
    100  # at most this many requests per phase (compare's: counts.DEFAULT_REQUESTS, 1000)
)
QUIET_IDLE_S = (
    0.5  # the idle pause of a server whose timer is held: its count does not depend on its length
)
STRACE_TIMES = 1  # strace's requests per phase, in callgrind's: calls per request are whole numbers


@dataclass
class Counted:
    """One stack's counts against base's."""

    ratios: dict[str, Ratio] = field(default_factory=dict)  # by figure label
    scenarios: dict[str, str] = field(default_factory=dict)  # figure label -> scenario
    problems: list[str] = field(
        default_factory=list
    )  # base's and this stack's failures, a line each
    mechanism: dict[str, Mechanism] = field(
        default_factory=dict
    )  # by endpoint: what moved inside its counts
    dirs: dict[str, Path] = field(default_factory=dict)  # variant id -> its counts' folder

    @property
    def error(self) -> str | None:
        return "; ".join(self.problems) or None


def weigh_here() -> Weights:
    from benchwatch.counts import weights

    return weights.measure()


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
    weigh: Weigh = weigh_here
    quiet: bool = False
    repeats: int = ATTRIBUTE_REPEATS
    weights: Weights | None = None
    cost_unavailable: str | None = None  # why no cost was made (the weights failed)
    base_counted: Counted = field(default_factory=Counted)
    links: Links | None = (
        None  # every environment counted through a path of one length (counts/same_paths.py)
    )
    base_figures: list[Figure] = field(default_factory=list)

    def count(self, project: Project, folders: Mapping[str, Path]) -> dict[str, Counted]:
        """Every target of every stack in `folders` (stack name -> its folder; base's too in the first
        batch) in one count_requests call, each stack paired with base: {stack: Counted}, base's too."""
        from benchwatch.measure import preflight

        chosen = {name: self._variants(project, name) for name in folders}
        preflight.check([v for variants in chosen.values() for v in variants])
        targets: list[counts.CountTarget] = []
        dirs: list[Path] = []
        found = {name: Counted() for name in folders}
        stack_of: dict[str, str] = {}  # variant id -> stack
        for name, variants in chosen.items():
            if not variants:
                found[name].problems.append(f"no variant of {self.selection} on {name}")
            made, failed = self._targets(name, variants)
            found[name].problems += failed
            where = counts.target_dirs(folders[name], made)
            found[name].dirs = {t.variant.id: d for t, d in zip(made, where, strict=True)}
            targets += made
            dirs += where
            stack_of.update({t.variant.id: name for t in made})
        silent = (lambda line: None) if self.quiet else None
        figures, problems = (
            self.count_fn(
                targets,
                out_dir=self.session.out,
                jobs=JOBS,
                log=silent,
                dirs=dirs,
                repeats=self.repeats,
                requests=ATTRIBUTE_REQUESTS,
                quiet_idle_s=QUIET_IDLE_S,
                strace_times=STRACE_TIMES,
            )
            if targets
            else ([], [])
        )
        figures_of: dict[str, list[Figure]] = {name: [] for name in folders}
        problems_of: dict[str, list[Problem]] = {name: [] for name in folders}
        for figure in figures:
            figures_of[stack_of[figure.variant]].append(figure)
        for problem in problems:
            problems_of[stack_of[problem.variant]].append(problem)
        for name, folder in folders.items():
            self._write(folder, figures_of[name], problems_of[name])
            found[name].problems += [p.line() for p in problems_of[name]]
        if self.base in folders:
            self.base_counted, self.base_figures = found[self.base], figures_of[self.base]
        if any(figures_of.values()) and self.weights is None and self.cost_unavailable is None:
            self._measure_weights()
        for name in folders:
            if name != self.base:
                self._against_base(found[name], figures_of[name])
        return found

    def _measure_weights(self) -> None:
        try:
            self.weights = self.weigh()
        except WeightsFailed as exc:
            self.cost_unavailable = str(exc)

    def _variants(self, project: Project, name: str) -> list[Variant]:
        return [v for v in project.select(self.selection, [name]) if v.stack.name == name]

    def _targets(
        self, name: str, variants: list[Variant]
    ) -> tuple[list[counts.CountTarget], list[str]]:
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
            environments[key] = self.links.of(env) if self.links is not None else env
        return counts.targets_for(variants, environments, self.quick), failed

    def _write(self, folder: Path, figures: list[Figure], problems: list[Problem]) -> None:
        """The stack's figures as a run (run.json), next to its counts' files."""
        run = self.session.start_run()
        run.figures, run.problems, run.complete, run.finished_at = figures, problems, True, now()
        write_run(folder, run)

    def _against_base(self, counted: Counted, figures: list[Figure]) -> None:
        rows, _ = judged_rows(self.base_figures, figures, self.calibration, self.weights)
        found = attributed_ratios(rows)
        counted.ratios = {label: ratio for label, (_, ratio) in found.items()}
        counted.scenarios = {label: scenario for label, (scenario, _) in found.items()}
        counted.problems[:0] = self.base_counted.problems
        went = where_instructions_went(
            rows,
            {"base": self.base_figures, "head": figures},
            {"base": self.base_counted.dirs, "head": counted.dirs},
        )
        counted.mechanism = mechanisms_of(rows, {label: by_object(b) for label, b in went.items()})

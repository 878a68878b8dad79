"""releases.html: each FastAPI / Pydantic / Starlette / uvicorn release the nightly measured, with
its attributed effect per scenario (ratio [interval], from `benchwatch attribute`'s
attribution.json). First the releases that moved a figure, one row per release and endpoint: the
estimated cost per request and its mechanism (the shared objects whose instructions moved, the
system calls by name that changed); then every figure of every step, so it can be cited line by line."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from pydantic import ValidationError

from benchwatch.attribute.mechanism import Mechanism
from benchwatch.attribute.outcomes import StepOutcome
from benchwatch.attribute.ratios import Ratio
from benchwatch.attribute.table import Attribution
from benchwatch.compare.rounds import COMPARE_QUICK_ROUNDS
from benchwatch.counts.strace import SCHEDULING
from benchwatch.environments.releases import PACKAGES
from benchwatch.errors import UserError
from benchwatch.figures.figure_key import label_metric, label_without_metric, setting_apart
from benchwatch.figures.metrics import COST, COUNT_KEYS, INSTRUCTIONS, SYSCALLS, metric
from benchwatch.report.tables import Cell, Table, Tone


def read_attribution(path: Path) -> Attribution:
    try:
        return Attribution.model_validate_json(path.read_text())
    except OSError as exc:
        raise UserError(f"--attribution {path}: cannot read it ({exc.strerror or exc})") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "document"
        raise UserError(
            f"--attribution {path}: not a benchwatch attribution.json ({where}: {error['msg']})"
        ) from None
    except ValueError as exc:
        raise UserError(f"--attribution {path}: not JSON ({str(exc).splitlines()[0]})") from None


def read_published_attributions(folder: Path) -> list[tuple[str, Attribution]]:
    """(file name, attribution) of every *.json in a published folder, by name. Anyone who could
    write to it once must not break every later build: a file that is not a benchwatch attribution
    is skipped with a warning line on stderr."""
    import sys

    if not folder.is_dir():
        raise UserError(f"--attributions {folder}: not a directory")
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            found.append((path.name, read_attribution(path)))
        except UserError as exc:
            print(f"warning: skipped: {exc}", file=sys.stderr)
    return found


def figure_label(label: str, scenario: str) -> str:
    """`hello GET / c=10 cpu_us_per_request` -> `GET / c=10 cpu/req` (the scenario has its column)."""
    text = (
        label.removeprefix(scenario).strip() if scenario and label.startswith(scenario) else label
    )
    head = label_without_metric(text) if " " in text else ""
    found = metric("load", label_metric(text))
    return f"{head} {found.short}" if head and found is not None else text


# what a change is called, by the figure's kind: (a regression, an improvement); every attributed
# figure is smaller-is-better (attribute/table.ATTRIBUTED)
_WORDS = {
    COST.key: ("higher", "lower"),
    INSTRUCTIONS.key: ("more", "fewer"),
    SYSCALLS.key: ("more", "fewer"),
}


def effect(ratio: Ratio, label: str = "") -> Cell:
    """The step's ratio with its interval; coloured only when compare called it a change
    (interval excludes 1 and the change exceeds the noise floor)."""
    if ratio.ratio is None:
        return Cell(f"not measured{': ' + ratio.text if ratio.text else ''}")
    tone: Tone = {"regression": "worse", "improvement": "better"}.get(ratio.verdict, "")  # type: ignore[assignment]
    more, less = _WORDS.get(label_metric(label), ("slower", "faster"))
    words = {"regression": more, "improvement": less}.get(ratio.verdict, "no significant change")
    return Cell(f"{ratio.shown()} {words}", tone)


def _moved(step: StepOutcome, package: str) -> str:
    old, new = step.moved.get(package, (None, None))
    return f"{package} {old or '—'} → {new or '?'}"


def _ordered(step: StepOutcome) -> list[str]:
    """The packages a step moved: the four watched ones first, then the rest of its group, then
    what the resolver brought along (a package new in the head, e.g.)."""

    def rank(p: str) -> tuple:
        return (
            p not in PACKAGES,
            PACKAGES.index(p) if p in PACKAGES else 0,
            p not in step.group,
            p,
        )

    return sorted(dict.fromkeys([*step.group, *step.moved]) if step.moved else step.group, key=rank)


def release_name(step: StepOutcome) -> str:
    if step.kind == "transitive":
        return "unpinned dependencies (transitive)"
    packages = _ordered(step)
    return _moved(step, packages[0]) if packages else step.requested


def how_measured(result: Attribution) -> str:
    rounds = result.rounds or COMPARE_QUICK_ROUNDS
    kinds = {label_metric(line.label) in COUNT_KEYS for line in result.lines}
    how = []
    if True in kinds:
        how.append(
            "counted once per side (instructions under callgrind, system calls by name under strace, per "
            "request; the estimated cost weighs them by what each costs on the measuring machine)"
        )
    if False in kinds or not kinds:
        how.append(
            f"loaded side by side with {result.base}: {rounds} paired rounds{' (quick)' if result.quick else ''}"
            " (server CPU per request)"
        )
    return (
        f"Each step is {result.base} with one package (or the group the resolver demands) moved to "
        f"{result.head}'s version, {' and '.join(how)}. Effect = step / {result.base}, with its 95 % interval; "
        "below 1 is less (cheaper, fewer, faster). Coloured only when the interval excludes 1 and the change "
        "exceeds the measured noise floor (compare's verdict)."
    )


def release_table(base: str, head: str, results: Sequence[Attribution]) -> Table:
    """One row per (release, scenario, figure): the four watched packages first."""
    table = Table(
        f"{base} → {head}: releases and their attributed effect",
        ["release", "moved with it", "scenario", "figure", "effect [95 % interval]"],
    )
    rows: list[tuple[tuple, list[Cell]]] = []
    for result in results:
        for step in result.steps:
            packages = _ordered(step)
            lead = packages[0] if packages and step.kind != "transitive" else ""
            others = ", ".join(_moved(step, p) for p in packages if p != lead) or "—"
            for line in result.lines:
                ratio = (
                    Ratio(text=step.error)
                    if step.error is not None
                    else Ratio(text=step.skipped)
                    if step.skipped is not None
                    else line.steps.get(step.step)
                )
                if ratio is None:
                    continue
                key = (
                    lead not in PACKAGES,
                    PACKAGES.index(lead) if lead in PACKAGES else 0,
                    lead == "",
                    lead,
                    line.scenario,
                    line.label,
                )
                rows.append(
                    (
                        key,
                        [
                            Cell(release_name(step)),
                            Cell(others),
                            Cell(line.scenario),
                            Cell(figure_label(line.label, line.scenario)),
                            effect(ratio, line.label),
                        ],
                    )
                )
    table.rows = [cells for _, cells in sorted(rows, key=lambda r: r[0])]
    return table


SHOWN_OBJECTS = 3  # the shared objects whose instructions moved most
OBJECT_MOVE = 0.0005  # an object moved when its change is 0.05 % of the request's instructions
_MOVED = ("regression", "improvement")


def _mechanism_of(step: StepOutcome, key: str) -> Mechanism | None:
    """The mechanism of the endpoint: its counts' (a timing's row shows its endpoint's counts)."""
    if key in step.mechanism:
        return step.mechanism[key]
    return next(
        (m for k, m in step.mechanism.items() if setting_apart(k) == setting_apart(key)), None
    )


def _counted_ratio(step: StepOutcome, key: str, metric_key: str) -> Ratio | None:
    """The step's ratio of one count (instructions, system calls) of the endpoint."""
    return next(
        (
            r
            for label, r in step.ratios.items()
            if label_metric(label) == metric_key
            and setting_apart(label_without_metric(label)) == setting_apart(key)
        ),
        None,
    )


def _short(label: str) -> str:
    found = metric("load", label_metric(label))
    return found.short if found is not None else label_metric(label)


def cost_cell(figures: dict[str, Ratio], mechanism: Mechanism | None) -> Cell:
    """The estimated cost per request, step / base, and both sides in µs; without a cost (not
    weighed, or an attribution from before it), the counts' ratios; without counts, the timings'."""
    by_metric = {label_metric(label): (label, r) for label, r in figures.items()}
    if COST.key in by_metric:
        cell = effect(by_metric[COST.key][1], by_metric[COST.key][0])
        if (
            mechanism is not None
            and mechanism.cost_us is not None
            and None not in mechanism.cost_us
        ):
            base, head = mechanism.cost_us
            cell = Cell(f"{cell.text}: {base:.1f} → {head:.1f} µs", cell.tone)
        return cell
    counted = [by_metric[k] for k in (INSTRUCTIONS.key, SYSCALLS.key) if k in by_metric]
    shown = counted or sorted(figures.items())
    cells = [(_short(label), effect(r, label)) for label, r in shown]
    tones = {c.tone for _, c in cells}
    tone: Tone = "worse" if "worse" in tones else "better" if "better" in tones else ""
    said = "; ".join(f"{name} {c.text}" for name, c in cells)
    return Cell(f"{'not weighed' if counted else 'not counted'}: {said}", tone)


def _without_mechanism(
    result: Attribution,
    step: StepOutcome,
    key: str,
    metric: str,
    recorded: bool,
    moved: str,
    unmoved: str,
) -> Cell | None:
    """The cell when there is no mechanism to show (none recorded in this file, or none for this
    figure: then what its count did), or None when there is."""
    if not result.mechanisms:
        return Cell("not recorded")
    if recorded:
        return None
    ratio = _counted_ratio(step, key, metric)
    if ratio is None:
        return Cell("not counted")
    return Cell(moved if ratio.verdict in _MOVED else unmoved)


def objects_cell(
    result: Attribution, step: StepOutcome, key: str, mechanism: Mechanism | None
) -> Cell:
    """The shared objects whose instructions per request moved most, and all of them base → head."""
    missing = _without_mechanism(
        result,
        step,
        key,
        INSTRUCTIONS.key,
        mechanism is not None and mechanism.instructions is not None,
        "not recorded (no callgrind breakdown)",
        "instructions unchanged",
    )
    if missing is not None:
        return missing
    assert mechanism is not None and mechanism.instructions is not None
    found = mechanism.instructions
    moved = sorted(
        (o for o in found.objects if abs(o.head - o.base) >= OBJECT_MOVE * found.base),
        key=lambda o: (-abs(o.head - o.base), o.name),
    )
    share = lambda o: f" ({(o.head - o.base) / found.base:+.2%})" if found.base else ""  # noqa: E731
    parts = [f"{o.name} {o.head - o.base:+,.0f}{share(o)}" for o in moved[:SHOWN_OBJECTS]]
    return Cell(
        f"{'; '.join(parts) or 'no shared object moved'} (all: {found.base:,.0f} → {found.head:,.0f} instr/req)"
    )


def calls_cell(
    result: Attribution, step: StepOutcome, key: str, mechanism: Mechanism | None
) -> Cell:
    """The system calls per request by name that changed: the request's own first (they are in the
    cost), then the scheduling ones (counts/strace.SCHEDULING: not in the cost)."""
    missing = _without_mechanism(
        result,
        step,
        key,
        SYSCALLS.key,
        mechanism is not None and mechanism.calls is not None,
        "not recorded",
        "no call changed",
    )
    if missing is not None:
        return missing
    assert mechanism is not None and mechanism.calls is not None
    moves = sorted(
        ((name, base or 0.0, head or 0.0) for name, (base, head) in mechanism.calls.items()),
        key=lambda m: (-abs(m[2] - m[1]), m[0]),
    )
    said = lambda found: ", ".join(f"{name} {base:.2f} → {head:.2f}" for name, base, head in found)  # noqa: E731
    if not moves:
        return Cell("no call changed")
    own = said([m for m in moves if m[0] not in SCHEDULING]) or "none of its own"
    scheduling = said([m for m in moves if m[0] in SCHEDULING])
    return Cell(own + (f"; scheduling, not in the cost: {scheduling}" if scheduling else ""))


def mechanism_table(base: str, head: str, results: Sequence[Attribution]) -> Table:
    """One row per (release, scenario, endpoint) where the release moved a figure significantly:
    its estimated cost per request and how (shared objects, system calls by name)."""
    table = Table(
        f"{base} → {head}: releases that moved a figure, and how",
        [
            "release",
            "moved with it",
            "scenario",
            "endpoint",
            "estimated cost per request, step / base [95 % interval]",
            "where the instructions went (per request, by shared object)",
            "system calls per request that changed (base → step)",
        ],
    )
    rows: list[tuple[tuple, list[Cell]]] = []
    for result in results:
        scenario_of = {line.label: line.scenario for line in result.lines}
        for step in result.steps:
            if step.error is not None:
                continue
            packages = _ordered(step)
            lead = packages[0] if packages and step.kind != "transitive" else ""
            others = ", ".join(_moved(step, p) for p in packages if p != lead) or "—"
            groups: dict[str, dict[str, Ratio]] = {}
            for label, ratio in step.ratios.items():
                groups.setdefault(label_without_metric(label), {})[label] = ratio
            for key, figures in groups.items():
                if not any(r.verdict in _MOVED for r in figures.values()):
                    continue
                scenario = scenario_of.get(next(iter(figures)), "")
                mechanism = _mechanism_of(step, key)
                order = (
                    lead not in PACKAGES,
                    PACKAGES.index(lead) if lead in PACKAGES else 0,
                    lead == "",
                    lead,
                    scenario,
                    key,
                )
                endpoint = (
                    figure_label(key, scenario).removesuffix(" seq")
                    if all(label_metric(label) in COUNT_KEYS for label in figures)
                    else figure_label(key, scenario)
                )
                rows.append(
                    (
                        order,
                        [
                            Cell(release_name(step)),
                            Cell(others),
                            Cell(scenario),
                            Cell(endpoint),
                            cost_cell(figures, mechanism),
                            objects_cell(result, step, key, mechanism),
                            calls_cell(result, step, key, mechanism),
                        ],
                    )
                )
    table.rows = [cells for _, cells in sorted(rows, key=lambda r: r[0])]
    table.note = (
        "a row per release and endpoint where a figure changed (compare's verdict); the instructions and "
        "system calls are counted per request (deterministic), the cost weighs them by what they cost on "
        "the measuring machine. Python code runs inside libpython: py-spy (compare --profile) names its "
        "functions"
    )
    return table


def check_table(result: Attribution) -> Table:
    """Product of the steps next to the ratio measured directly, per figure."""
    table = Table(
        f"{result.base} → {result.head}: do the steps add up?",
        ["scenario", "figure", "product of the steps", "measured directly", "agree"],
    )
    for line in result.lines:
        agree = {True: "yes (intervals overlap)", False: "no: the steps interact", None: "—"}[
            line.agrees
        ]
        table.rows.append(
            [
                Cell(line.scenario),
                Cell(figure_label(line.label, line.scenario)),
                Cell(line.product.shown()),
                effect(line.direct, line.label),
                Cell(agree),
            ]
        )
    table.note = (
        "the product's interval adds the steps' log half-widths in quadrature (an approximation), "
        "so many steps make it wide"
    )
    return table


def render_releases(results: Sequence[tuple[str, Attribution]], table_html) -> str:
    if not results:
        return (
            "<div class='message'>no attribution results given (benchwatch site --attribution "
            "attribution.json): the nightly writes one when a release moved the numbers</div>"
        )
    pairs: dict[tuple[str, str], list[tuple[str, Attribution]]] = {}
    for source, result in results:
        pairs.setdefault((result.base, result.head), []).append((source, result))
    parts = []
    for (base, head), found in pairs.items():
        attributions = [result for _, result in found]
        scenarios = sorted({s for result in attributions for s in result.scenarios})
        parts.append(f"<h2>{escape(base)} → {escape(head)}</h2>")
        parts.append(
            f"<p class='note how'>{escape(how_measured(attributions[0]))} Scenarios: "
            f"{escape(', '.join(scenarios))}; from {escape(', '.join(source for source, _ in found))}.</p>"
        )
        moved = mechanism_table(base, head, attributions)
        if moved.rows:
            parts.append(table_html(moved, numeric_from=len(moved.columns)))
        else:
            parts.append(
                "<div class='message'>no release moved a figure beyond its noise floor</div>"
            )
        parts.append(f"<h3>Every figure of every step: {escape(base)} → {escape(head)}</h3>")
        parts.append(table_html(release_table(base, head, attributions), numeric_from=4))
        for result in attributions:
            parts.append(
                f"<h3>Do the steps add up? {escape(', '.join(result.scenarios))}</h3>"
                f"{table_html(check_table(result), numeric_from=2)}"
            )
    return "".join(parts)

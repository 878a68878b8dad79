"""releases.html: each FastAPI / Pydantic / Starlette / uvicorn release the nightly measured, with
its attributed effect per scenario (ratio [interval], from `benchwatch attribute`'s
attribution.json) — one row per release and figure, so it can be cited line by line."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from pydantic import ValidationError

from benchwatch.attribute.table import Attribution, Ratio, StepOutcome
from benchwatch.compare.rounds import COMPARE_QUICK_ROUNDS
from benchwatch.errors import UserError
from benchwatch.releases import PACKAGES
from benchwatch.report.tables import Cell, Table, Tone


def read_attribution(path: Path) -> Attribution:
    try:
        return Attribution.model_validate_json(path.read_text())
    except OSError as exc:
        raise UserError(f"--attribution {path}: cannot read it ({exc.strerror or exc})") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "document"
        raise UserError(f"--attribution {path}: not a benchwatch attribution.json ({where}: {error['msg']})") from None
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
    text = label.removeprefix(scenario).strip() if scenario and label.startswith(scenario) else label
    return text.replace("cpu_us_per_request", "cpu/req")


def effect(ratio: Ratio) -> Cell:
    """The step's ratio with its interval; coloured only when compare called it a change
    (interval excludes 1 and the change exceeds the noise floor)."""
    if ratio.ratio is None:
        return Cell(f"not measured{': ' + ratio.text if ratio.text else ''}")
    tone: Tone = {"regression": "worse", "improvement": "better"}.get(ratio.verdict, "")  # type: ignore[assignment]
    words = {"regression": "slower", "improvement": "faster"}.get(ratio.verdict, "no significant change")
    return Cell(f"{ratio.shown()} {words}", tone)


def _moved(step: StepOutcome, package: str) -> str:
    old, new = step.moved.get(package, (None, None))
    return f"{package} {old or '—'} → {new or '?'}"


def _ordered(step: StepOutcome) -> list[str]:
    """The packages a step moved: the four watched ones first, then the rest of its group, then
    what the resolver brought along (a package new in the head, e.g.)."""
    def rank(p: str) -> tuple:
        return (p not in PACKAGES, PACKAGES.index(p) if p in PACKAGES else 0, p not in step.group, p)

    return sorted(dict.fromkeys([*step.group, *step.moved]) if step.moved else step.group, key=rank)


def release_name(step: StepOutcome) -> str:
    if step.kind == "transitive":
        return "unpinned dependencies (transitive)"
    packages = _ordered(step)
    return _moved(step, packages[0]) if packages else step.requested


def how_measured(result: Attribution) -> str:
    rounds = result.rounds or COMPARE_QUICK_ROUNDS
    return (f"Each step is {result.base} with one package (or the group the resolver demands) moved to "
            f"{result.head}'s version, loaded side by side with {result.base}: {rounds} paired rounds"
            f"{' (quick)' if result.quick else ''}. Effect = server CPU per request, step / {result.base}, with its "
            "95 % interval; below 1 is less CPU (faster). Coloured only when the interval excludes 1 and the change "
            "exceeds the measured noise floor (compare's verdict).")  # fmt: skip


def release_table(base: str, head: str, results: Sequence[Attribution]) -> Table:
    """One row per (release, scenario, figure): the four watched packages first."""
    table = Table(f"{base} → {head}: releases and their attributed effect",
                  ["release", "moved with it", "scenario", "figure", "effect [95 % interval]"])  # fmt: skip
    rows: list[tuple[tuple, list[Cell]]] = []
    for result in results:
        for step in result.steps:
            packages = _ordered(step)
            lead = packages[0] if packages and step.kind != "transitive" else ""
            others = ", ".join(_moved(step, p) for p in packages if p != lead) or "—"
            for line in result.lines:
                ratio = line.steps.get(step.step) if step.error is None else Ratio(text=step.error)
                if ratio is None:
                    continue
                key = (lead not in PACKAGES, PACKAGES.index(lead) if lead in PACKAGES else 0, lead == "", lead,
                       line.scenario, line.label)  # fmt: skip
                rows.append((key, [Cell(release_name(step)), Cell(others), Cell(line.scenario),
                                   Cell(figure_label(line.label, line.scenario)), effect(ratio)]))  # fmt: skip
    table.rows = [cells for _, cells in sorted(rows, key=lambda r: r[0])]
    return table


def check_table(result: Attribution) -> Table:
    """Product of the steps next to the ratio measured directly, per figure."""
    table = Table(f"{result.base} → {result.head}: do the steps add up?",
                  ["scenario", "figure", "product of the steps", "measured directly", "agree"])  # fmt: skip
    for line in result.lines:
        agree = {True: "yes (intervals overlap)", False: "no: the steps interact", None: "—"}[line.agrees]
        table.rows.append([Cell(line.scenario), Cell(figure_label(line.label, line.scenario)),
                           Cell(line.product.shown()), effect(line.direct), Cell(agree)])  # fmt: skip
    table.note = ("the product's interval adds the steps' log half-widths in quadrature (an approximation), "
                  "so many steps make it wide")
    return table


def render_releases(results: Sequence[tuple[str, Attribution]], table_html) -> str:
    if not results:
        return ("<div class='message'>no attribution results given (benchwatch site --attribution "
                "attribution.json): the nightly writes one when a release moved the numbers</div>")
    pairs: dict[tuple[str, str], list[tuple[str, Attribution]]] = {}
    for source, result in results:
        pairs.setdefault((result.base, result.head), []).append((source, result))
    parts = []
    for (base, head), found in pairs.items():
        attributions = [result for _, result in found]
        scenarios = sorted({s for result in attributions for s in result.scenarios})
        parts.append(f"<h2>{escape(base)} → {escape(head)}</h2>")
        parts.append(f"<p class='note how'>{escape(how_measured(attributions[0]))} Scenarios: "
                     f"{escape(', '.join(scenarios))}; from {escape(', '.join(source for source, _ in found))}.</p>")  # fmt: skip
        parts.append(table_html(release_table(base, head, attributions), numeric_from=4))
        for result in attributions:
            parts.append(f"<h3>Do the steps add up? {escape(', '.join(result.scenarios))}</h3>"
                         f"{table_html(check_table(result), numeric_from=2)}")  # fmt: skip
    return "".join(parts)

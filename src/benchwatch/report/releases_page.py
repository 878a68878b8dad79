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
    return f"{package} {new or '?'}" + (f" (from {old})" if old else " (new)")


def _watched_first(step: StepOutcome) -> list[str]:
    moved = [p for p in step.group if p in step.moved] or list(step.moved) or list(step.group)
    return sorted(moved, key=lambda p: (p not in PACKAGES, PACKAGES.index(p) if p in PACKAGES else 0, p))


def how_measured(result: Attribution) -> str:
    rounds = result.rounds or COMPARE_QUICK_ROUNDS
    return (f"{result.base} → {result.head}: each step is {result.base} with one package (or the group the resolver "
            f"demands) moved to {result.head}'s version, loaded side by side with {result.base} ({rounds} paired rounds"
            f"{', quick' if result.quick else ''}); ratio = server CPU per request step/{result.base}, 95 % interval; "
            "below 1 is less CPU (faster). A ratio is coloured only when its interval excludes 1 and the change "
            "exceeds the measured noise floor.")  # fmt: skip


def release_table(results: Sequence[tuple[str, Attribution]]) -> Table:
    """One row per (release, figure): the four watched packages first, then what moved with them."""
    table = Table("releases and their attributed effect",
                  ["release", "moved with it", "scenario", "figure", "effect [95 % interval]", "attribution"])  # fmt: skip
    rows: list[tuple[tuple, list[Cell]]] = []
    for source, result in results:
        for step in result.steps:
            packages = _watched_first(step)
            lead = packages[0] if packages else step.requested
            others = ", ".join(_moved(step, p) for p in packages[1:]) or "—"
            for line in result.lines:
                ratio = line.steps.get(step.step) if step.error is None else Ratio(text=step.error)
                if ratio is None:
                    continue
                key = (lead not in PACKAGES, PACKAGES.index(lead) if lead in PACKAGES else 0, lead, line.scenario, line.label)
                rows.append((key, [Cell(_moved(step, lead)), Cell(others), Cell(line.scenario),
                                   Cell(figure_label(line.label, line.scenario)), effect(ratio),
                                   Cell(f"{result.base} → {result.head} ({source})")]))  # fmt: skip
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
    parts = [f"<p class='note how'>{escape(how_measured(result))}</p>" for _, result in results]
    parts.append(table_html(release_table(results), numeric_from=4))
    for _, result in results:
        parts.append(f"<h3>{escape(result.base)} → {escape(result.head)}: "
                     f"{escape(', '.join(result.scenarios))}</h3>{table_html(check_table(result), numeric_from=2)}")  # fmt: skip
    return "".join(parts)

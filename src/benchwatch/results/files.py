"""A run's files written whole or not at all, every remembered secret replaced by its name: the one
door results, comparisons, attributions, calibrations, reports and site pages leave by; and a run
directory (run.json plus the github-action-benchmark files) written and read."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchwatch.declarations.redaction import redact_tree, redact_written
from benchwatch.errors import UserError
from benchwatch.results.schema import (
    GAB_BIGGER,
    GAB_COUNTS,
    GAB_SMALLER,
    RUN_FILE,
    Run,
    gab_entries,
)
from benchwatch.whole_files import write_whole


def write_json_atomic(path: Path, data: Any) -> None:
    """`data` as JSON at `path`, whole or not at all; every remembered secret in its strings is
    replaced by its name (redaction.redact_tree): the one door results, comparisons,
    attributions and calibrations leave by."""
    write_whole({path: json_text(data)})


def json_text(data: Any) -> str:
    """`data` as the JSON benchwatch writes, every remembered secret in its strings replaced by its
    name (redaction.redact_tree)."""
    return json.dumps(redact_tree(data), indent=1, allow_nan=False) + "\n"


def write_text_atomic(path: Path, text: str) -> None:
    """`text` at `path`, whole or not at all, with every remembered secret replaced by its name
    (redaction.redact_written): reports, the comment, site pages, trend files."""
    write_whole({path: redact_written(text)})


def ensure_writable(directory: Path, chosen: bool = True) -> None:
    """The folder exists and takes a file, or one `--out` error line (exit 3). `chosen`: the user
    named it (else it is the command's default, and the way out is to name another)."""
    try:
        if directory.exists() and not directory.is_dir():
            raise NotADirectoryError(0, "a file, not a folder")
        directory.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=directory, prefix=".probe-", delete=True)
        probe.close()
    except OSError as exc:
        hint = "" if chosen else " (the default; give --out DIR)"
        raise UserError(f"--out {directory}: not writable ({exc.strerror or exc}){hint}") from None


def write_run(directory: Path, run: Run) -> None:
    """run.json plus the gab files, all or none (a full disk changes none of them); the gab files are
    validated before anything is written."""
    bigger = gab_entries(run.figures, bigger_is_better=True)
    smaller = gab_entries(run.figures, bigger_is_better=False)
    counts = gab_entries(run.figures, bigger_is_better=False, counts=True)
    files = {
        GAB_BIGGER: bigger,
        GAB_SMALLER: smaller,
        GAB_COUNTS: counts,
        RUN_FILE: run.model_dump(mode="json"),
    }
    write_whole({directory / name: json_text(data) for name, data in files.items()})


def read_run(directory: Path) -> Run:
    path = directory / RUN_FILE if directory.is_dir() else directory
    try:
        return Run.model_validate_json(path.read_text())
    except FileNotFoundError:
        raise UserError(
            f"{path}: no run.json there (run `benchwatch run --out DIR` first)"
        ) from None
    except ValidationError as exc:
        raise UserError(f"{path}: not a valid run.json ({exc.errors()[0]['msg']})") from None

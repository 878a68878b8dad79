"""attribution.json files read for the site: one given on the command line (bad input when it is
not one), or every one in a published folder (a file that is not one skipped with a warning)."""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import ValidationError

from benchwatch.attribute.table import Attribution
from benchwatch.errors import UserError


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
    if not folder.is_dir():
        raise UserError(f"--attributions {folder}: not a directory")
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            found.append((path.name, read_attribution(path)))
        except UserError as exc:
            print(f"warning: skipped: {exc}", file=sys.stderr)
    return found

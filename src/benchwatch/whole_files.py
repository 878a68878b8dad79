"""Files written whole or not at all, the one way benchwatch replaces a file: each text goes to a
temporary name beside its file first, is flushed to the disk, then all are renamed into place (a
rename takes no space), so a full disk or a kill changes none of them, not some. The texts are
written as given: results.files redacts remembered secrets before it calls this; caches, the
release state and an app's own files (its declaration, golden bodies, .gitignore) are written
exactly. Below every package (environments write here too)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from benchwatch.errors import UserError


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# a file gets the mode a plain open() would give it (mkstemp's own is 0600): an app's declaration
# and golden bodies are the user's files, results are read by the workflows' other steps
FILE_MODE = 0o666 & ~_umask()


class NotWritten(UserError, OSError):
    """A file that could not be written (a full disk, a folder gone): nothing of it was written, and
    the file there before, if any, is untouched. An OSError still, for callers that catch those."""


def write_whole(files: Mapping[Path, str]) -> None:
    """Every file of `files` written (its folder made), or none changed: one `NotWritten` error."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            staged.append((tmp, path))
            os.chmod(tmp, FILE_MODE)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException as exc:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, UserError):
            where = staged[-1][1] if staged else next(iter(files))
            raise NotWritten(
                f"{where}: could not be written ({exc.strerror or exc}); nothing was written and the "
                "files there are untouched: free some space, or write to another folder"
            ) from None
        raise


def write_text_whole(path: Path, text: str) -> None:
    """`text` at `path` exactly (nothing redacted), whole or not at all."""
    write_whole({path: text})

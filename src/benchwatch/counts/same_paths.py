"""Every counted server's environment under a path of one length.

A count moves with the length of the server's environment path: it is on `PATH`, in `VIRTUAL_ENV`,
in the interpreter's path and in every module's file name, and each stack's folder has a name of
its own length (`v2-pre-rust-216107b16a8e`, `v2-pre-rust+sqlalchemy-d8c1581730d6`). Measured on
hello GET / (docs/evidence.md): the same packages counted from those two folders came out 0.15 %
and 0.27 % apart; through two symlinks of one length, 0.01 %. attribute compares many stacks
against one base, and its product would add that offset up once per step, so it counts each
environment through a symlink `<folder>/<12 hex digits>` of one length (`Links`)."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import tempfile
from pathlib import Path

from benchwatch.environments.envs import Env


class Links:
    """Symlinks of one length to environments, in a temporary folder (made with the first link)
    removed by `close`."""

    def __init__(self) -> None:
        self.folder: Path | None = None

    def of(self, env: Env) -> Env:
        """The environment as seen through its link (made on first use)."""
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="bw-envs-"))
        link = self.folder / hashlib.sha256(str(env.path).encode()).hexdigest()[:12]
        if not link.is_symlink():
            link.symlink_to(env.path.resolve(), target_is_directory=True)
        return dataclasses.replace(env, path=link)

    def close(self) -> None:
        if self.folder is not None:  # the links only: rmtree does not follow them
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Links:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

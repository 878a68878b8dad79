"""The SQL statements a server sends, tallied for the counting harness (sitecustomize.py imports
this module only for the boot under strace: the instructions counted under callgrind never run it).

What is seen, every statement text as the app hands it to its database driver:

- SQLAlchemy: a `before_cursor_execute` listener on the Engine class (every engine, sync or
  the one under an AsyncEngine), added the moment the app's own `import sqlalchemy` finishes;
  an app that never imports it never has it imported here;
- sqlite3 used directly: a connection the app opens itself (not SQLAlchemy's, nor aiosqlite's,
  which SQLAlchemy's async engine uses) gets a trace callback (`set_trace_callback`), which sees
  every statement SQLite runs on it, the `BEGIN` and `COMMIT` the sqlite3 module issues included;
- psycopg (3) used directly: `Cursor.execute`/`executemany` (and the async cursor's) counted
  when not called from SQLAlchemy (which its listener has seen already).

Recording a statement is a dictionary increment in this process: no system call. The texts are
kept raw (bind markers, or literals for the trace callback); the client normalizes them
(benchwatch.counts.statements). `answer()` gives the tally since the last answer, as one JSON
line, and starts a new one."""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WATCHED = ("sqlalchemy", "sqlite3", "psycopg")


class Tally:
    def __init__(self) -> None:
        self.texts: dict[str, int] = {}
        self.ever = 0  # statements since boot: none at all means the app uses no database here

    def record(self, text: Any) -> None:
        if isinstance(text, str):
            self.texts[text] = self.texts.get(text, 0) + 1
            self.ever += 1

    def answer(self) -> bytes:
        found, self.texts = self.texts, {}
        return json.dumps({"ever": self.ever, "statements": found}).encode() + b"\n"


TALLY = Tally()


def _from_sqlalchemy(depth: int, also: tuple[str, ...] = ()) -> bool:
    """Whether the caller `depth` frames up is SQLAlchemy's code (or one of `also`)."""
    frame = sys._getframe(depth + 1)
    return str(frame.f_globals.get("__name__", "")).startswith(("sqlalchemy", *also))


def _on_sqlalchemy(module: Any) -> None:
    from sqlalchemy import event  # type: ignore[import-not-found]
    from sqlalchemy.engine import Engine  # type: ignore[import-not-found]

    def before(conn: Any, cursor: Any, statement: Any, *rest: Any) -> None:
        TALLY.record(statement)

    event.listen(Engine, "before_cursor_execute", before)


def _on_sqlite3(module: Any) -> None:
    holders: list[Any] = [module, sys.modules.get("sqlite3.dbapi2")]
    for holder in holders:
        original = getattr(holder, "connect", None)
        if original is None or getattr(original, "_benchwatch", False):
            continue

        def connect(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            connection = _original(*args, **kwargs)
            # aiosqlite connects in a thread of its own: under SQLAlchemy's async engine (its
            # listener sees those statements) as when used alone, which is then not seen
            if not _from_sqlalchemy(1, also=("aiosqlite",)):
                connection.set_trace_callback(TALLY.record)
            return connection

        connect._benchwatch = True  # type: ignore[attr-defined]
        holder.connect = connect


def _on_psycopg(module: Any) -> None:
    for name in ("Cursor", "AsyncCursor"):
        cls = getattr(module, name, None)
        if cls is None:
            continue
        for method in ("execute", "executemany"):
            original = getattr(cls, method, None)
            if original is None or getattr(original, "_benchwatch", False):
                continue
            if name == "AsyncCursor":

                async def counted(
                    self: Any, query: Any, *a: Any, _o: Any = original, **k: Any
                ) -> Any:
                    if not _from_sqlalchemy(1):
                        TALLY.record(query if isinstance(query, str) else str(query))
                    return await _o(self, query, *a, **k)

            else:

                def counted(self: Any, query: Any, *a: Any, _o: Any = original, **k: Any) -> Any:  # type: ignore[misc]
                    if not _from_sqlalchemy(1):
                        TALLY.record(query if isinstance(query, str) else str(query))
                    return _o(self, query, *a, **k)

            counted._benchwatch = True  # type: ignore[attr-defined]
            setattr(cls, method, counted)


_INSTALL = {"sqlalchemy": _on_sqlalchemy, "sqlite3": _on_sqlite3, "psycopg": _on_psycopg}


class _Loader(importlib.abc.Loader):
    """The module's own loader, then this module's hook on the module it made."""

    def __init__(self, inner: Any, name: str) -> None:
        self.inner = inner
        self.name = name

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        module.__loader__ = self.inner  # the module sees its own loader (its resources, …)
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.inner
        self.inner.exec_module(module)
        _INSTALL[self.name](module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Watches the imports of the three top-level modules; every other import passes by."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in _WATCHED:
            return None
        sys.meta_path.remove(self)  # find the module's real spec with the other finders
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader, name)
        return spec


def install() -> None:
    """Hook every watched module: those already imported now, the others when imported."""
    for name in _WATCHED:
        if name in sys.modules:
            _INSTALL[name](sys.modules[name])
    sys.meta_path.insert(0, _Finder())

"""Secrets kept out of everything benchwatch writes.

Every value read from `${NAME}` is remembered for the rest of the process (so are the login's
variables, those BENCHWATCH_SECRET_NAMES lists, and a set-up's values), and `redact` turns it (in
every form it is quoted in, and the pieces of it a quoting cut short) back into `${NAME}` where
text benchwatch did not write itself enters what it keeps: a server's answer, its last lines, an
exception's message, oha's and psql's errors. `redact_written` and `redact_tree` do the same over
every file and line benchwatch writes (results.write_json_atomic / write_text_atomic, and cli's
RedactedStream), leaving plain values (numbers, true/false) alone there. Only whole words are
replaced (a user name `bench` stays inside `benchwatch`), and values shorter than MIN_SECRET
characters not at all; a value that is a word of a path or an app name is replaced there too.
"""

from __future__ import annotations

import html
import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

from benchwatch.declarations import app_env

MIN_SECRET = 4


# the secrets of this process: each form a value is quoted in -> what it stands for, and whether
# it is plain (see `redact_written`); the values' own texts, for the pieces a cut leaves
@dataclass(frozen=True)
class _Secret:
    label: str  # `${NAME}`, `{setup.NAME}`
    plain: bool


_secrets: dict[str, _Secret] = {}
_values: dict[str, str] = {}  # value (and its repr's inside) -> label
_pattern: re.Pattern[str] | None = None
_lock = threading.Lock()
_WORD = "A-Za-z0-9_"
_PLAIN = re.compile(r"[-+]?[0-9][0-9.,:_]*|true|false|null|none", re.IGNORECASE)
_CUT = re.compile(r"\.\.\.|…")  # where a quoting cut a value short: pydantic's `input_value`, ours
MIN_PIECE = 6  # the shortest piece of a cut value that is replaced (a shorter one tells little)
# variables whose values are secrets even when no `${NAME}` reads them (a server inherits
# benchwatch's environment): the login init declares, and the names BENCHWATCH_SECRET_NAMES lists
# (an app-env line the declaration does not name; locally, any variable the user names)
SECRET_NAMES_ENV = "BENCHWATCH_SECRET_NAMES"
LOGIN_NAMES = app_env.ALLOWED  # init's login: BENCHWATCH_USER, BENCHWATCH_PASSWORD


def forms(value: str) -> set[str]:
    """The texts `value` is quoted as: itself, URL-encoded (path and form), inside a JSON string
    (ASCII-escaped or not), inside a Python repr (pydantic's `input_value=`), HTML-escaped, and
    with `|` escaped as a markdown table cell has it."""
    return {
        value,
        quote(value, safe=""),
        quote_plus(value),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        repr(value)[1:-1],
        html.escape(value),
        html.escape(value, quote=False),
        value.replace("|", "\\|"),
    }


def remember(name: str, value: str, label: str | None = None) -> None:
    """A value to keep out of every file and line benchwatch writes (see `redact`); it stands as
    `label` (default `${name}`) where it was."""
    global _pattern
    if len(value) < MIN_SECRET:
        return
    secret = _Secret(label or "${" + name + "}", bool(_PLAIN.fullmatch(value)))
    with _lock:
        if _secrets.get(value) == secret:
            return  # known already (every resolution of a `${NAME}` remembers it)
        for form in forms(value):
            _secrets.setdefault(form, secret)
        if not secret.plain:
            for text in (value, repr(value)[1:-1]):
                _values.setdefault(text, secret.label)
        # whole words only: a user name `bench` stays inside `benchwatch`
        alternatives = "|".join(re.escape(v) for v in sorted(_secrets, key=len, reverse=True))
        _pattern = re.compile(f"(?<![{_WORD}])(?:{alternatives})(?![{_WORD}])")


def remember_setup(values: Mapping[str, str]) -> None:
    """A set-up's values (a login's token, the ids it saved) are kept out like secrets, standing
    as `{setup.NAME}`; numbers and true/false are not (an id 42 is no secret, and `redact` would
    change every 42)."""
    for name, value in values.items():
        if not _PLAIN.fullmatch(value):
            remember(name, value, "{setup." + name + "}")


def remember_environment(environ: Mapping[str, str] | None = None) -> None:
    """The values of the login's variables and of those BENCHWATCH_SECRET_NAMES lists (names
    separated by spaces or commas), set or not, for a command's whole run."""
    environ = os.environ if environ is None else environ
    listed = re.split(r"[\s,]+", environ.get(SECRET_NAMES_ENV, "").strip())
    for name in (*LOGIN_NAMES, *listed):
        if name and environ.get(name):
            remember(name, environ[name])


def forget_all() -> None:
    """Tests only: start again with no remembered secrets."""
    global _pattern
    with _lock:
        _secrets.clear()
        _values.clear()
        _pattern = None


def redact(text: str) -> str:
    """`text` with every remembered secret (standing as a word of its own) replaced by what it
    stands for (`${NAME}`), and the pieces of one a quoting cut short (`'s3cr...` or `...t0k3n'`,
    6 characters or more, as pydantic shows a long value or a settings dict)."""
    return _redact(text, written=False)


def redact_written(text: str) -> str:
    """`redact` for a whole file or line benchwatch writes: the same, except plain values
    (numbers, true/false/null), which would change figures and JSON there; they are replaced only
    where `redact` meets them in quoted text. No remembered secret: `text` itself."""
    return _redact(text, written=True)


def redact_tree(value: Any) -> Any:
    """A JSON value with `redact_written` applied to every string in it (keys too); numbers,
    booleans and the shape are left alone. No remembered secret: `value` itself."""
    if _pattern is None:
        return value
    if isinstance(value, str):
        return redact_written(value)
    if isinstance(value, dict):
        return {
            redact_written(k) if isinstance(k, str) else k: redact_tree(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_tree(v) for v in value]
    return value


def _redact(text: str, written: bool) -> str:
    pattern = _pattern
    if pattern is None or not text:
        return text

    def one(match: re.Match[str]) -> str:
        secret = _secrets.get(match.group(0))
        if secret is None:
            return match.group(0)
        return match.group(0) if written and secret.plain else secret.label

    text = pattern.sub(one, text)
    return _redact_pieces(text) if _CUT.search(text) else text


def _redact_pieces(text: str) -> str:
    """The head of a value just before a cut (`...`, `…`) and its tail just after one."""
    values = dict(_values)
    out: list[str] = []
    at = 0
    for cut in _CUT.finditer(text):
        start, end = cut.span()
        if start < at:
            continue
        head = _longest(text, start, values, before=True)
        tail = _longest(text, end, values, before=False)
        out.append(text[at : start - len(head[0])])
        out.append(head[1] + cut.group(0) + tail[1])
        at = end + len(tail[0])
    out.append(text[at:])
    return "".join(out)


def _longest(text: str, where: int, values: dict[str, str], before: bool) -> tuple[str, str]:
    """(piece, label) of the longest piece of a remembered value that ends (`before`) or starts at
    `where` and stands apart from the words around it; ("", "") for none."""
    best = ("", "")
    shortest = text[where - MIN_PIECE : where] if before else text[where : where + MIN_PIECE]
    for value, label in values.items():
        if len(shortest) < MIN_PIECE or shortest not in value:
            continue  # every piece long enough holds these characters: none here
        for size in range(min(len(value) - 1, len(text)), MIN_PIECE - 1, -1):
            if size <= len(best[0]):
                break
            if before:
                start, end = where - size, where
                fits = start >= 0 and value.startswith(text[start:end])
            else:
                start, end = where, where + size
                fits = end <= len(text) and value.endswith(text[start:end])
            # the piece stands apart: no word goes on where the value's cut text begins (ends)
            edge = start - 1 if before else end
            if fits and (edge < 0 or edge >= len(text) or not _is_word(text[edge])):
                best = (text[start:end], label)
                break
    return best


def _is_word(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char == "_")


class RedactedStream:
    """A text stream (sys.stdout, sys.stderr) whose every write passes `redact_written`: the lines
    a terminal or a CI log keeps. Everything else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact_written(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

"""The counting client's side of the harness (counts/harness/sitecustomize.py), over a Unix
socket: a full garbage collection in the server between two counted phases, and its event loop
held still (its timer's ticks so far in hand) while the counter dumps."""

from __future__ import annotations

import shutil
import socket
import tempfile
import time
from pathlib import Path

HARNESS_DIR = Path(__file__).parent / "harness"
SOCKET_ENV = "BENCHWATCH_COUNTS_GC_SOCKET"
STATEMENTS_ENV = "BENCHWATCH_COUNTS_STATEMENTS"  # "1": the server tallies its SQL statements
CONNECT_TIMEOUT_S = 30.0  # the socket exists before the server answers: this is slack
ANSWER_TIMEOUT_S = 150.0  # a full collection under callgrind (1/50 speed); the first tick of a hold


class HarnessError(Exception):
    """The server's harness did not answer."""


class Harness:
    """Where the harness listens (a short path: Unix socket paths are limited to ~100 bytes),
    the variables that load it into a server, and, once connected, `collect()`, `hold()` and
    `release()`."""

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="bw-gc-"))
        self.path = self._dir / "s"
        self._socket: socket.socket | None = None

    def environ(self) -> dict[str, str]:
        """PYTHONPATH with the harness (the server puts it before the app's root, its own
        PYTHONPATH: measure/server_command.py) and the socket's path."""
        return {"PYTHONPATH": str(HARNESS_DIR), SOCKET_ENV: str(self.path)}

    def connect(self) -> None:
        deadline = time.monotonic() + CONNECT_TIMEOUT_S
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(str(self.path))
            except OSError as exc:
                sock.close()
                if time.monotonic() > deadline:
                    raise HarnessError(
                        f"the server's counting harness is not listening ({exc.strerror}): "
                        "was its sitecustomize loaded?"
                    ) from None
                time.sleep(0.1)
                continue
            sock.settimeout(ANSWER_TIMEOUT_S)
            self._socket = sock
            return

    def collect(self) -> None:
        """One full collection in the server; returns when it is done."""
        self._ask(b"c", "collect")
        if self._read_until(b"k", "collect") != b"k":
            raise HarnessError("the server's counting harness closed its socket")

    def allocated_blocks(self) -> int:
        """A full collection in the server, then its allocator's blocks still allocated."""
        self._ask(b"m", "allocated blocks")
        answer = self._read_until(b"\n", "allocated blocks")
        try:
            return int(answer)
        except ValueError:
            raise HarnessError(
                f"the server's counting harness answered {answer!r} to allocated blocks"
            ) from None

    def hold(self) -> int | None:
        """The server's event loop held still until `release()`; how many times its uvicorn timer
        has ticked so far, or None when it is not a uvicorn server (then nothing is held)."""
        self._ask(b"h", "hold")
        answer = self._read_until(b"\n", "hold")
        if not answer:
            raise HarnessError("the server's counting harness closed its socket")
        if answer == b"-\n":
            return None
        try:
            return int(answer)
        except ValueError:
            raise HarnessError(
                f"the server's counting harness answered {answer!r} to hold"
            ) from None

    def quiet(self) -> bool:
        """uvicorn's main-loop timer held until `wake()` (no tick in any phase); False when the
        server is not uvicorn (nothing changed)."""
        self._ask(b"q", "quiet")
        return self._read_one("quiet") == b"k"

    def wake(self) -> None:
        self._ask(b"u", "wake")
        if self._read_one("wake") != b"k":
            raise HarnessError("the server's counting harness closed its socket")

    def statements(self) -> bytes:
        """The server's SQL statements since the last call, as the harness's JSON line, or b"-"
        when it does not tally them (counts/statements.py reads it)."""
        self._ask(b"t", "statements")
        answer = self._read_until(b"\n", "statements")
        if not answer.endswith(b"\n"):
            raise HarnessError("the server's counting harness closed its socket")
        return answer.rstrip(b"\n")

    def _read_one(self, name: str) -> bytes:
        assert self._socket is not None
        try:
            answer = self._socket.recv(1)
        except OSError as exc:
            raise HarnessError(
                f"the server's counting harness did not answer {name} ({exc})"
            ) from None
        if not answer:
            raise HarnessError("the server's counting harness closed its socket")
        return answer

    def release(self) -> None:
        self._ask(b"r", "release")
        if self._read_until(b"k", "release") != b"k":
            raise HarnessError("the server's counting harness closed its socket")

    def _ask(self, what: bytes, name: str) -> None:
        if self._socket is None:
            raise HarnessError(f"{name}() before connect()")
        try:
            self._socket.sendall(what)
        except OSError as exc:
            raise HarnessError(
                f"the server's counting harness did not answer {name} ({exc})"
            ) from None

    def _read_until(self, end: bytes, name: str) -> bytes:
        assert self._socket is not None
        found = b""
        try:
            while not found.endswith(end):
                chunk = self._socket.recv(1)
                if not chunk:
                    break
                found += chunk
        except OSError as exc:
            raise HarnessError(
                f"the server's counting harness did not answer {name} ({exc})"
            ) from None
        return found

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        shutil.rmtree(self._dir, ignore_errors=True)

"""The counting client's side of the harness (counts/harness/sitecustomize.py): a full garbage
collection in the server between two counted phases, on request, over a Unix socket."""

from __future__ import annotations

import shutil
import socket
import tempfile
import time
from pathlib import Path

HARNESS_DIR = Path(__file__).parent / "harness"
SOCKET_ENV = "BENCHWATCH_COUNTS_GC_SOCKET"
CONNECT_TIMEOUT_S = 30.0  # the socket exists before the server answers: this is slack
COLLECT_TIMEOUT_S = 120.0  # a full collection under callgrind, with an interpreter at 1/50 speed


class GcControlError(Exception):
    """The server's harness did not answer."""


class GcControl:
    """Where the harness listens (a short path: Unix socket paths are limited to ~100 bytes),
    the variables that load it into a server, and, once connected, `collect()`."""

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="bw-gc-"))
        self.path = self._dir / "s"
        self._socket: socket.socket | None = None

    def environ(self) -> dict[str, str]:
        """PYTHONPATH with the harness first (server_environment drops any PYTHONPATH of the
        caller's, so it is the harness alone) and the socket's path."""
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
                    raise GcControlError(f"the server's counting harness is not listening ({exc.strerror}): "
                                         "was its sitecustomize loaded?") from None  # fmt: skip
                time.sleep(0.1)
                continue
            sock.settimeout(COLLECT_TIMEOUT_S)
            self._socket = sock
            return

    def collect(self) -> None:
        """One full collection in the server; returns when it is done."""
        if self._socket is None:
            raise GcControlError("collect() before connect()")
        try:
            self._socket.sendall(b"c")
            answer = self._socket.recv(1)
        except OSError as exc:
            raise GcControlError(f"the server's counting harness did not answer ({exc})") from None
        if answer != b"k":
            raise GcControlError("the server's counting harness closed its socket")

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        shutil.rmtree(self._dir, ignore_errors=True)

"""Loaded into a server only while benchwatch counts it (this folder is put on its PYTHONPATH).

Two things the counting client asks for, over a Unix socket (path in
BENCHWATCH_COUNTS_GC_SOCKET) served by a thread that sleeps in `recv` the rest of the time, so
during a phase it runs no instruction and makes no system call:

- `c`: a full garbage collection, answered `k` when done. Every phase then begins with the
  collector in the same state; without it, where its periodic full passes land is a matter of
  which phase they fall in: ±1 % on an endpoint counted 2 requests at a time.
- `m`: a full garbage collection, then the Python allocator's blocks still allocated
  (`sys.getallocatedblocks()`), answered `<n>\\n`: read between segments of requests in
  retained memory's boot, their growth per request is the retained memory per request
  (counts/retained.py, counts/memory_boot.py).
- `q`, `u`: quiet uvicorn's timer, then wake it. uvicorn's main loop sleeps 0.1 s of wall time
  between two calls of `Server.on_tick` (the date header, the exit flag). On a loaded machine a
  phase under callgrind takes longer, so it would hold more of these wake-ups, and what one costs
  inside a busy phase (~9,000 instructions) is not what it costs idle (~30,000): quiet, the main
  loop's sleep waits until `u` (or until the harness goes away), and no phase holds a tick. Only
  the main loop's own sleep is held (uvicorn.server's `asyncio`, seen by that module alone, is
  a stand-in whose `sleep` holds when called from `main_loop`); answered `k`, or `-` when this
  is not a uvicorn server.
- `h`, then `r`: hold the server's event loop still while the counter dumps, then let it go.
  `h` is answered with how many times uvicorn's timer has ticked so far (`<n>\\n`), or `-\\n` when
  this is not a uvicorn server. uvicorn wakes every 0.1 s of wall time to run `Server.on_tick`;
  on a loaded machine a phase under callgrind takes longer, so it holds more ticks. With the loop
  held at both ends of a phase, the ticks in it are counted exactly and their cost can be taken
  off by the tick (not estimated from the phase's wall time, which was off by up to 1 %).
- `t`: the SQL statements the server sent since the last `t`, as one JSON line, or `-\\n` when
  they are not tallied (only the boot under strace tallies them, BENCHWATCH_COUNTS_STATEMENTS:
  benchwatch_statements.py, imported for that boot alone).

A sitecustomize the environment has of its own is loaded after this one."""

from __future__ import annotations

import gc
import importlib
import os
import socket
import sys
import threading

TYPE_CHECKING = False  # the server's process imports nothing more for the annotations (not typing)
if TYPE_CHECKING:
    import asyncio
    from types import ModuleType
    from typing import Any

_PATH = os.environ.pop("BENCHWATCH_COUNTS_GC_SOCKET", "")
_STATEMENTS = os.environ.pop("BENCHWATCH_COUNTS_STATEMENTS", "") == "1"
_FIRST_TICK_S = (
    120.0  # the first tick after the counter is put in, under valgrind on a busy machine
)
_HOLD_S = 120.0  # the held loop's wait for its release: a dump under load, and slack


class _Ticks:
    """uvicorn's timer ticks, counted by wrapping `Server.on_tick` (its main loop looks it up at
    every tick, so the wrapper takes effect on a running server); the first tick also names the
    running loop."""

    def __init__(self) -> None:
        self.count = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.found = threading.Event()
        self.installed = False

    def install(self) -> bool:
        if self.installed:
            return True
        server = sys.modules.get("uvicorn.server")
        cls: Any = getattr(server, "Server", None)
        original = getattr(cls, "on_tick", None)
        if original is None:
            return False
        import asyncio

        ticks = self

        async def on_tick(self: Any, counter: Any) -> Any:
            ticks.count += 1
            if ticks.loop is None:
                ticks.loop = asyncio.get_running_loop()
                ticks.found.set()
            return await original(self, counter)

        cls.on_tick = on_tick
        self.installed = True
        return True

    def hold(self, connection: socket.socket) -> None:
        """Stop the loop in a callback that waits for `r`; answer with the ticks so far."""
        if not self.install() or not self.found.wait(_FIRST_TICK_S) or self.loop is None:
            connection.sendall(b"-\n")
            return
        held, release = threading.Event(), threading.Event()

        def wait_here() -> None:
            held.set()
            release.wait(_HOLD_S)

        self.loop.call_soon_threadsafe(wait_here)
        held.wait(_HOLD_S)
        connection.sendall(b"%d\n" % self.count)
        answer = connection.recv(1)
        release.set()
        if answer == b"r":
            connection.sendall(b"k")


class _QuietAsyncio:
    """What uvicorn.server sees as `asyncio` while quiet: the module itself, but a `sleep` called
    from `Server.main_loop` waits until woken."""

    def __init__(self, real: ModuleType) -> None:
        self._real = real
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: asyncio.Future[None] | None = None
        self.quiet = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def sleep(self, delay: float, result: Any = None) -> Any:
        if self.quiet and sys._getframe(1).f_code.co_name == "main_loop":
            return self._held(result)
        return self._real.sleep(delay, result)

    async def _held(self, result: Any) -> Any:
        self._loop = self._real.get_running_loop()
        self._waiting = self._loop.create_future()
        await self._waiting
        return result

    def wake(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Let the held sleep return; `loop` is the one the first tick named (quiet waited for it)."""
        self.quiet = False

        def done() -> None:
            if self._waiting is not None and not self._waiting.done():
                self._waiting.set_result(None)

        if loop is not None:
            loop.call_soon_threadsafe(done)


class _Timer:
    """uvicorn's main-loop timer, quieted and woken (`q`, `u`)."""

    def __init__(self, ticks: _Ticks) -> None:
        self.ticks = ticks
        self.stand_in: _QuietAsyncio | None = None

    def quiet(self) -> bool:
        if self.stand_in is not None:
            return True
        if not self.ticks.install() or not self.ticks.found.wait(_FIRST_TICK_S):
            return False
        server: Any = sys.modules["uvicorn.server"]
        real = getattr(server, "asyncio", None)
        if real is None:
            return False
        self.stand_in = _QuietAsyncio(real)
        server.asyncio = self.stand_in
        return True

    def wake(self) -> None:
        if self.stand_in is None:
            return
        server: Any = sys.modules["uvicorn.server"]
        server.asyncio = self.stand_in._real
        self.stand_in.wake(self.ticks.loop)
        self.stand_in = None


def _serve(listener: socket.socket) -> None:
    connection, _ = listener.accept()
    listener.close()
    ticks = _Ticks()
    timer = _Timer(ticks)
    try:
        with connection:
            while True:
                asked = connection.recv(1)
                if asked == b"c":
                    gc.collect()
                    connection.sendall(b"k")
                elif asked == b"m":
                    gc.collect()
                    connection.sendall(b"%d\n" % sys.getallocatedblocks())
                elif asked == b"h":
                    ticks.hold(connection)
                elif asked == b"q":
                    connection.sendall(b"k" if timer.quiet() else b"-")
                elif asked == b"u":
                    timer.wake()
                    connection.sendall(b"k")
                elif asked == b"t":
                    connection.sendall(_statements() if _STATEMENTS else b"-\n")
                else:
                    return
    finally:
        timer.wake()  # the client gone: uvicorn's timer runs again, so a signal stops the server


def _statements() -> bytes:
    import benchwatch_statements  # type: ignore[import-not-found]  # beside this file

    return benchwatch_statements.TALLY.answer()


def _start() -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(_PATH)
    listener.listen(1)
    threading.Thread(
        target=_serve, args=(listener,), name="benchwatch-counts-gc", daemon=True
    ).start()


def _load_the_environments_own() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    me = sys.modules.pop(__name__)
    try:
        importlib.import_module("sitecustomize")
    except ModuleNotFoundError as exc:
        if exc.name != "sitecustomize":
            raise
        # none of its own: this one stays what `import sitecustomize` gave (the import machinery
        # looks it up once this file has run; without it Python prints a KeyError at start)
        sys.modules[__name__] = me
    finally:
        sys.path[:] = saved


if _PATH:
    if _STATEMENTS:  # the SQL statements' hooks, beside this file (the boot under strace alone)
        import benchwatch_statements

        benchwatch_statements.install()
    _start()
_load_the_environments_own()

"""Loaded into a server only while benchwatch counts it (this folder is put on its PYTHONPATH).

Two things the counting client asks for, over a Unix socket (path in
BENCHWATCH_COUNTS_GC_SOCKET) served by a thread that sleeps in `recv` the rest of the time, so
during a phase it runs no instruction and makes no system call:

- `c`: a full garbage collection, answered `k` when done. Every phase then begins with the
  collector in the same state; without it, where its periodic full passes land is a matter of
  which phase they fall in: ±1 % on an endpoint counted 2 requests at a time.
- `h`, then `r`: hold the server's event loop still while the counter dumps, then let it go.
  `h` is answered with how many times uvicorn's timer has ticked so far (`<n>\\n`), or `-\\n` when
  this is not a uvicorn server. uvicorn wakes every 0.1 s of wall time to run `Server.on_tick`;
  on a loaded machine a phase under callgrind takes longer, so it holds more ticks. With the loop
  held at both ends of a phase, the ticks in it are counted exactly and their cost can be taken
  off by the tick (not estimated from the phase's wall time, which was off by up to 1 %).

A sitecustomize the environment has of its own is loaded after this one."""

import gc
import importlib
import os
import socket
import sys
import threading

_PATH = os.environ.pop("BENCHWATCH_COUNTS_GC_SOCKET", "")
_FIRST_TICK_S = 120.0  # the first tick after the counter is put in, under valgrind on a busy machine
_HOLD_S = 120.0  # the held loop's wait for its release: a dump under load, and slack


class _Ticks:
    """uvicorn's timer ticks, counted by wrapping `Server.on_tick` (its main loop looks it up at
    every tick, so the wrapper takes effect on a running server); the first tick also names the
    running loop."""

    def __init__(self) -> None:
        self.count = 0
        self.loop = None
        self.found = threading.Event()
        self.installed = False

    def install(self) -> bool:
        if self.installed:
            return True
        server = sys.modules.get("uvicorn.server")
        cls = getattr(server, "Server", None)
        original = getattr(cls, "on_tick", None)
        if original is None:
            return False
        import asyncio

        ticks = self

        async def on_tick(self, counter):
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
        if not self.install() or not self.found.wait(_FIRST_TICK_S):
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


def _serve(listener: socket.socket) -> None:
    connection, _ = listener.accept()
    listener.close()
    ticks = _Ticks()
    with connection:
        while True:
            asked = connection.recv(1)
            if asked == b"c":
                gc.collect()
                connection.sendall(b"k")
            elif asked == b"h":
                ticks.hold(connection)
            else:
                return


def _start() -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(_PATH)
    listener.listen(1)
    threading.Thread(target=_serve, args=(listener,), name="benchwatch-counts-gc", daemon=True).start()


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
    _start()
_load_the_environments_own()

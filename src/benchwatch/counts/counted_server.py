"""A target's server booted under a counter (callgrind or strace) with the counting harness loaded
(counts/harness/sitecustomize.py), one client connection to it, and the harness's controls: a full
garbage collection, the server's loop held still, uvicorn's timer quieted."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from benchwatch.counts.client import Client, Request, RequestFailed
from benchwatch.counts.harness_control import STATEMENTS_ENV, Harness, HarnessError
from benchwatch.counts.target_counts import CountFailed, CountTarget
from benchwatch.measure.launch import ServerOptions, running
from benchwatch.measure.ports import HOST
from benchwatch.measure.server import BootError, Server

# str/bytes hashes, and so dict and set layouts, the same every boot
HASH_SEED = {"PYTHONHASHSEED": "0"}
READY_S = 300.0  # a server's boot under valgrind (imports at ~1/50 speed)
PROBE_TIMEOUT_S = 120.0  # its first answer under valgrind
REQUEST_TIMEOUT_S = 300.0
STOP_WAIT_S = 120.0  # SIGINT to exit: valgrind writes its last file
KEEP_ALIVE_S = 3600.0  # the one connection idles while the counter dumps: uvicorn must not close it (its default: 5 s)


@dataclass
class Serving:
    """A server booted under a counter, one client connection to it, and its harness; the
    endpoints' requests as this boot sends them (its set-up's values filled in)."""

    target: CountTarget
    srv: Server
    client: Client
    gc: Harness
    tail: list[str] = field(default_factory=list)  # its stderr tail once stopped, for later errors
    quiet: bool = False  # uvicorn's timer held for the count (counts/harness)

    @property
    def requests(self) -> list[Request]:
        return [Request.of(self.srv, e) for e in self.target.endpoints]

    def send(self, index: int, request: Request, times: int, think: float = 0.0) -> float:
        try:
            return self.client.send(request, times, think)
        except RequestFailed as exc:
            raise CountFailed(
                str(exc), self.target.endpoints[index], self.srv.stderr_tail()
            ) from None

    def hold(self) -> int | None:
        """The server's loop held still (counts/harness); its timer's ticks so far, or None."""
        try:
            return self.gc.hold()
        except HarnessError as exc:
            raise CountFailed(str(exc), stderr_tail=self.srv.stderr_tail()) from None

    def release(self, held: int | None) -> None:
        if held is None:
            return
        try:
            self.gc.release()
        except HarnessError as exc:
            raise CountFailed(str(exc), stderr_tail=self.srv.stderr_tail()) from None

    def statements(self) -> bytes:
        """The SQL statements the server sent since the last call (counts/statements.py)."""
        try:
            return self.gc.statements()
        except HarnessError as exc:
            raise CountFailed(str(exc), stderr_tail=self.srv.stderr_tail()) from None

    def collect(self) -> None:
        """A full garbage collection in the server (counts/harness): every phase begins with the
        collector in the same state."""
        try:
            self.gc.collect()
        except HarnessError as exc:
            raise CountFailed(str(exc), stderr_tail=self.srv.stderr_tail()) from None

    def allocated_blocks(self) -> int:
        """A full collection in the server, then its allocator's blocks still allocated
        (counts/retained.py)."""
        try:
            return self.gc.allocated_blocks()
        except HarnessError as exc:
            raise CountFailed(str(exc), stderr_tail=self.srv.stderr_tail()) from None


@contextmanager
def serve_under_counter(target: CountTarget, wrap: list[str], counter: str) -> Iterator[Serving]:
    """The server booted under a counter with the counting harness loaded, and one client
    connection to it; after the block, the server must still be alive."""
    gc = Harness()
    try:
        with running(
            target.variant,
            target.env,
            ServerOptions(
                role=target.role,
                wrap=wrap,
                wrap_environ={**HASH_SEED, **gc.environ(), **_tally(counter)},
                ready_timeout=READY_S,
                probe_timeout=PROBE_TIMEOUT_S,
                interrupt_wait=STOP_WAIT_S,
                keep_alive=KEEP_ALIVE_S,
            ),
        ) as srv:
            client = Client(HOST, srv.port, REQUEST_TIMEOUT_S)
            serving = Serving(target, srv, client, gc)
            try:
                gc.connect()
                # a first collection: the harness thread then sleeps in `recv` (holding no lock)
                # before anything is counted, as it does between every two collections
                gc.collect()
                serving.quiet = gc.quiet()  # uvicorn's timer held: no tick in any phase
                yield serving
            except HarnessError as exc:
                raise CountFailed(str(exc), stderr_tail=srv.stderr_tail()) from None
            finally:
                client.close()
                if serving.quiet:  # before the server is stopped: it reads its exit flag at a tick
                    with contextlib.suppress(HarnessError):
                        gc.wake()
            if not srv.alive():
                raise CountFailed("server exited during the count", stderr_tail=srv.stderr_tail())
            serving.tail.append(srv.stderr_tail())
    except BootError as exc:
        raise CountFailed(
            f"boot under {counter}: {exc.reason}", stderr_tail=exc.stderr_tail
        ) from None
    finally:
        gc.close()


def _tally(counter: str) -> dict[str, str]:
    """The boot under strace tallies the SQL statements (counts/statements.py): its hooks are Python
    alone, no system call; under callgrind they would be instructions, so that boot has none."""
    return {STATEMENTS_ENV: "1"} if counter == "strace" else {}

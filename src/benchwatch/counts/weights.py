"""What a counted instruction and a system call by name cost on this machine: the weights that turn
a request's counts into one estimated cost (counts/cost.py).

Measured in a few seconds, with no network, at the start of a compare (both sides are weighed with
the same weights, so they cancel in an A/A):

- **user CPU per instruction**: a fixed Python workload (dicts, strings, calls: what a server's
  interpreter does) counted under callgrind at two sizes (the difference cancels the start-up),
  then timed natively in this process (`time.thread_time`, the thread's own CPU, exact);
- **CPU per system call, by name**: each call made in a loop on a loopback TCP connection with
  TCP_NODELAY (as uvicorn's sockets are) or on a small file, the thread's CPU per call less the
  same loop with no call (the loop's own cost). A call not measured here weighs the median of
  those that were.

Per name, the median of BATCHES batches: one batch that a neighbour's burst slowed does not move it.
"""

from __future__ import annotations

import fcntl
import os
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from benchwatch.counts import callgrind

BATCHES = 15
WARMUP_ROUNDS = 5
CALLS_PER_BATCH = 200
PAYLOAD = b"x" * 100  # about a small HTTP answer's size
WORKLOAD_SIZES = (
    20_000,
    40_000,
)  # iterations counted under callgrind: their difference is what counts
NATIVE_ITERATIONS = 200_000
NATIVE_REPEATS = 5
COUNT_TIMEOUT_S = 300.0

# the workload, one source for the count under callgrind and the native timing
WORKLOAD = """
def work(n):
    found = {}
    for i in range(n):
        key = "k%d" % (i & 1023)
        found[key] = found.get(key, 0) + len(key)
    return len(found)
"""


class WeightsFailed(Exception):
    """The weights could not be measured (callgrind failed on the workload)."""


class Weights(BaseModel):
    """µs of CPU per counted instruction and per system call by name, on the machine that counted."""

    user_us_per_instruction: float
    system_us_per_call: dict[str, float]
    other_call_us: float  # a call not in system_us_per_call: the median of those that are
    instructions_per_iteration: float  # the workload's, under callgrind
    seconds: float  # what measuring them took
    method: str = ""
    # µs per PostgreSQL buffer access (counts/buffer_weight.py: measured once per machine, stored),
    # set when a compare weighs an app's database work; absent (not null) otherwise, so the weights
    # of a compare without a database read as they did before
    db_us_per_buffer: float | None = None

    def call_us(self, name: str) -> float:
        return self.system_us_per_call.get(name, self.other_call_us)

    @model_serializer(mode="wrap")
    def _without_unset_database(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict:
        found = handler(self)
        if found.get("db_us_per_buffer", 0) is None:
            del found["db_us_per_buffer"]
        return found


def measure(python: str | None = None) -> Weights:
    """The weights on this machine; raises WeightsFailed when the workload cannot be counted."""
    began = time.monotonic()
    per_iteration = _instructions_per_iteration(python or sys.executable)
    per_instruction = _native_us_per_iteration() / per_iteration
    calls = _system_calls()
    return Weights(
        user_us_per_instruction=per_instruction,
        system_us_per_call=calls,
        other_call_us=statistics.median(calls.values()),
        instructions_per_iteration=per_iteration,
        seconds=round(time.monotonic() - began, 1),
        method=(
            f"user: a Python workload counted under callgrind ({WORKLOAD_SIZES[1] - WORKLOAD_SIZES[0]} "
            f"iterations' difference) and timed natively (thread CPU, fastest of {NATIVE_REPEATS}); "
            f"system calls: the median of {BATCHES} batches of {CALLS_PER_BATCH} calls each on loopback TCP "
            "or a small file, thread CPU per call less the empty loop's; any other call: the median "
            "of those measured"
        ),
    )


def _instructions_per_iteration(python: str) -> float:
    script = WORKLOAD + "import sys\nwork(int(sys.argv[1]))\n"
    valgrind = callgrind.unavailable_reason()
    if valgrind:
        raise WeightsFailed(valgrind)
    with tempfile.TemporaryDirectory(prefix="benchwatch-weights-") as scratch:
        # both sizes at once; `-I -S`: no site, no user paths (a shorter start-up, the same loop)
        outs = [Path(scratch) / f"callgrind.{size}" for size in WORKLOAD_SIZES]
        started = [
            subprocess.Popen(
                [
                    "valgrind",
                    "--tool=callgrind",
                    f"--callgrind-out-file={out}",
                    python,
                    "-I",
                    "-S",
                    "-c",
                    script,
                    str(size),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONHASHSEED": "0"},
            )
            for out, size in zip(outs, WORKLOAD_SIZES, strict=True)
        ]
        problems = []
        for process in started:
            try:
                _, stderr = process.communicate(timeout=COUNT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                problems.append(
                    f"the weights' workload took over {COUNT_TIMEOUT_S:g} s under callgrind"
                )
                continue
            if process.returncode != 0:
                problems.append(
                    f"the weights' workload failed under callgrind: {stderr.strip()[-300:]}"
                )
        if problems:
            raise WeightsFailed(problems[0])
        try:
            totals = [callgrind.read_total(out) for out in outs]
        except callgrind.CallgrindError as exc:
            raise WeightsFailed(str(exc)) from None
    extra = totals[1] - totals[0]
    if extra <= 0:
        raise WeightsFailed(
            f"the weights' workload did not grow with its size under callgrind ({totals})"
        )
    return extra / (WORKLOAD_SIZES[1] - WORKLOAD_SIZES[0])


def _native_us_per_iteration() -> float:
    space: dict = {}
    exec(compile(WORKLOAD, "<benchwatch weights workload>", "exec"), space)
    work = space["work"]
    work(NATIVE_ITERATIONS // 10)  # warm: the interpreter specializes the loop
    found = []
    for _ in range(NATIVE_REPEATS):
        began = time.thread_time()
        work(NATIVE_ITERATIONS)
        found.append(time.thread_time() - began)
    return min(found) * 1e6 / NATIVE_ITERATIONS


def _one_batch(call: Callable[[], object]) -> float:
    """µs of this thread's CPU per call over one batch."""
    began = time.thread_time()
    for _ in range(CALLS_PER_BATCH):
        call()
    return (time.thread_time() - began) * 1e6 / CALLS_PER_BATCH


def _interleaved(
    calls: dict[
        str, tuple[Callable[[], object], Callable[[], object] | None, Callable[[], object] | None]
    ],
) -> dict[str, list[float]]:
    """Per name, µs per call in each of BATCHES rounds; every round times one batch of every call
    in turn (a drift of the machine's speed then moves them all alike). Each entry is (the call,
    what to do before its batch, after it), untimed. WARMUP_ROUNDS rounds first, not kept: on
    loopback TCP the first thousand writes cost a third of the later ones."""
    found: dict[str, list[float]] = {name: [] for name in calls}
    for index in range(WARMUP_ROUNDS + BATCHES):
        for name, (call, before, after) in calls.items():
            if before is not None:
                before()
            took = _one_batch(call)
            if after is not None:
                after()
            if index >= WARMUP_ROUNDS:
                found[name].append(took)
    return found


def _system_calls() -> dict[str, float]:
    """µs per call by strace's name, the empty loop's cost taken off."""
    listener = socket.create_server(("127.0.0.1", 0))
    writer = socket.create_connection(listener.getsockname())
    reader, _ = listener.accept()
    listener.close()
    for s in (writer, reader):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    poller = select.epoll()
    poller.register(reader.fileno(), select.EPOLLIN)
    masks = [select.EPOLLIN, select.EPOLLIN | select.EPOLLOUT]
    with tempfile.NamedTemporaryFile(prefix="benchwatch-weights-") as file:
        file.write(PAYLOAD * 10)
        file.flush()
        w, r, f = writer.fileno(), reader.fileno(), file.fileno()
        whole = PAYLOAD * CALLS_PER_BATCH

        def drain() -> None:
            left = len(whole)
            while left:
                left -= len(reader.recv(left))

        def fill() -> None:
            writer.sendall(whole)
            time.sleep(0.002)  # the data is in the reader's queue before the reads are timed

        flip = iter(range(10**9))
        try:
            measured = _interleaved(
                {
                    "": (lambda: None, None, None),  # the empty loop
                    "write": (lambda: os.write(w, PAYLOAD), None, drain),
                    "writev": (lambda: os.writev(w, (PAYLOAD[:50], PAYLOAD[50:])), None, drain),
                    "sendto": (lambda: writer.send(PAYLOAD), None, drain),
                    "read": (lambda: os.read(r, len(PAYLOAD)), fill, None),
                    "recvfrom": (lambda: reader.recv(len(PAYLOAD)), fill, None),
                    "epoll_ctl": (lambda: poller.modify(r, masks[next(flip) % 2]), None, None),
                    "fcntl": (lambda: fcntl.fcntl(r, fcntl.F_GETFL), None, None),
                    "getsockname": (reader.getsockname, None, None),
                    "setsockopt": (
                        lambda: reader.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),
                        None,
                        None,
                    ),
                    "newfstatat": (lambda: os.stat(file.name), None, None),
                    "pread64": (lambda: os.pread(f, len(PAYLOAD), 0), None, None),
                    "lseek": (lambda: os.lseek(f, 0, os.SEEK_SET), None, None),
                }
            )
        finally:
            poller.close()
            writer.close()
            reader.close()
    empty = statistics.median(measured.pop(""))
    return {
        name: round(max(statistics.median(batches) - empty, 0.0), 4)
        for name, batches in measured.items()
    }

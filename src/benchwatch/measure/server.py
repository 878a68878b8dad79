"""Boot a variant under uvicorn on loopback, wait until it answers, measure it, always stop it."""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx
import psutil

from benchwatch.declarations.placeholders import (
    RUNNER_PREFIXES,
    Context,
    Unresolved,
    app_environ,
    redact,
    resolve,
)
from benchwatch.environments.envs import Env
from benchwatch.errors import UserError
from benchwatch.measure import database, guard
from benchwatch.measure.inject import INJECT_ENVS, NO_INJECTION, Injection
from benchwatch.measure.setup import SetupError, run_setup
from benchwatch.project.config import APP_FILE, Variant

HOST = "127.0.0.1"
# where the last failure's lines begin in uvicorn's log ("ERROR:    Exception in ASGI application",
# then the traceback), or a plain Python traceback
TRACEBACK_STARTS = ("ERROR:", "Traceback (most recent call last)")
PRE_START_TIMEOUT_S = 300
_live: dict[int, subprocess.Popen] = {}
_guarded: dict[int, int] = {}  # server pid -> its guard ticket (measure/guard.py)


class BootError(Exception):
    """The server could not be started, did not become ready, or its set-up failed (`phase`)."""

    def __init__(
        self,
        variant_id: str,
        reason: str,
        stderr_tail: str = "",
        phase: Literal["boot", "setup"] = "boot",
    ) -> None:
        super().__init__(f"{variant_id}: {reason}")
        self.variant_id = variant_id
        self.reason = redact(reason)
        self.stderr_tail = redact(stderr_tail)
        self.phase = phase


@dataclass
class Server:
    variant: Variant
    port: int
    process: subprocess.Popen
    log_path: Path
    # what this boot's placeholders resolve to: {tmp}, {database_*}, then the set-up's values
    context: Context = field(default_factory=Context)
    _ps: psutil.Process = field(init=False)

    def __post_init__(self) -> None:
        self._ps = psutil.Process(self.process.pid)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def _tree(self) -> list[psutil.Process]:
        try:
            return [self._ps, *self._ps.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def cpu_seconds(self) -> float:
        return self.cpu_times().total

    def cpu_times(self) -> CpuTimes:
        """CPU time of the server and its child processes. The total takes the server's own from
        its process CPU clock (nanoseconds, exited threads included) where Linux offers it:
        /proc's user and system times tick at 10 ms, 1 % of a one-second measurement, so they
        only say how the total splits."""
        total = user = system = 0.0
        for proc in self._tree():
            try:
                times = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            user += times.user
            system += times.system
            if proc is self._ps:
                user += times.children_user
                system += times.children_system
                total += times.children_user + times.children_system
                total += process_cpu_clock(proc.pid, fallback=times.user + times.system)
            else:
                total += times.user + times.system
        return CpuTimes(total, user, system)

    def rss_bytes(self) -> int:
        total = 0
        for proc in self._tree():
            try:
                total += proc.memory_info().rss
            except psutil.NoSuchProcess:
                continue
        return total

    def stderr_tail(self, lines: int = 12) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return redact("\n".join(text.strip().splitlines()[-lines:]))

    def last_error(self, lines: int = 30) -> str:
        """The server's last traceback (uvicorn logs one per failed request), at most its last
        `lines` lines; else its last lines."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        found = text.strip().splitlines()
        starts = [i for i, line in enumerate(found) if line.startswith(TRACEBACK_STARTS)]
        if starts:
            found = found[starts[-1] :]
        return redact("\n".join(found[-lines:]))

    @contextmanager
    def rss_peak(self, interval: float = 0.05) -> Iterator[list[int]]:
        """Sample the tree's RSS in a thread; the yielded list holds [peak] once the block ends."""
        result = [self.rss_bytes()]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(interval):
                result[0] = max(result[0], self.rss_bytes())

        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        try:
            yield result
        finally:
            stop.set()
            thread.join()
            result[0] = max(result[0], self.rss_bytes())


@dataclass(frozen=True)
class CpuTimes:
    """Seconds of CPU: `total` precise, `user` and `system` in /proc's 10 ms ticks."""

    total: float
    user: float
    system: float

    def __sub__(self, earlier: CpuTimes) -> CpuTimes:
        return CpuTimes(
            self.total - earlier.total, self.user - earlier.user, self.system - earlier.system
        )

    def split(self) -> tuple[float, float]:
        """(user, system) seconds: the precise total split as the ticks split, each part counted
        half a tick more, so a short window with no system tick still gives a positive figure
        (and every round a sample on both sides, which keeps the pairs of a compare aligned)."""
        user, system = max(self.user, 0.0) + 0.005, max(self.system, 0.0) + 0.005
        return self.total * user / (user + system), self.total * system / (user + system)


def process_cpu_clock(pid: int, fallback: float) -> float:
    """Seconds of CPU another process has used, from its POSIX CPU clock (Linux encodes the
    process-wide scheduler clock of `pid` as the clock id ~pid << 3 | 2)."""
    try:
        return time.clock_gettime((~pid << 3) | 2)
    except (OSError, AttributeError, OverflowError):
        return fallback


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return True
        return False


def cpu_plan() -> tuple[list[int] | None, list[int] | None]:
    """(server cores, load generator cores): the last core for the server, the rest for oha."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return None, None
    if len(cores) < 2:
        return None, None
    return [cores[-1]], cores[:-1]


def server_environment(variant: Variant, env: Env, context: Context, inject: Injection) -> dict:
    """Ours, the runner's apart, then the declared `env` with its placeholders resolved, the
    environment's bin first on PATH, and the app's project importable: PYTHONPATH is its root alone
    (ours is never the app's), as an install of the project would make it (the full-stack
    template's image installs its `app` package, so its pre-start runs `python app/initial_data.py`,
    a script that imports `app`). The environment holds only the project's dependencies, shared by
    every checkout of one lock, so the root of this checkout is given here. The pre-start command,
    the set-up and the counting wrapper get it too."""
    environ = {k: v for k, v in app_environ().items() if k not in INJECT_ENVS}
    environ.update({k: _resolved(variant, f"env.{k}", v, context) for k, v in variant.env.items()})
    environ["PATH"] = f"{env.path / 'bin'}{os.pathsep}{environ.get('PATH', '')}"
    environ["VIRTUAL_ENV"] = str(env.path)
    environ["PYTHONPATH"] = str(variant.app.root)
    environ.update(inject.environ())
    return environ


def refused_setting(name: str) -> str | None:
    """Why an app's `env` may not set `name` (benchwatch gives the server that variable itself, or
    never gives it one), or None."""
    if name == "PYTHONPATH":
        return (
            "benchwatch sets PYTHONPATH to the app's root (its import root), so the project imports in every "
            "boot, its pre-start and set-up"
        )
    if name == "VIRTUAL_ENV":
        return "benchwatch sets VIRTUAL_ENV to the app's own environment"
    if name in INJECT_ENVS:
        return f"{name} is a test's injected slowdown, never an app's setting"
    if name.startswith(RUNNER_PREFIXES):
        return f"{', '.join(p + '*' for p in RUNNER_PREFIXES)} belong to the CI runner and never reach an app"
    return None


def _with_wrapper(environ: dict, wrap_environ: Mapping[str, str]) -> dict:
    """The server's variables with the wrapper's on top; a wrapper's PYTHONPATH (the counting
    harness) goes first, the app's root stays after it."""
    merged = {**environ, **wrap_environ}
    if "PYTHONPATH" in wrap_environ and environ.get("PYTHONPATH"):
        merged["PYTHONPATH"] = f"{wrap_environ['PYTHONPATH']}{os.pathsep}{environ['PYTHONPATH']}"
    return merged


@contextmanager
def running(
    variant: Variant,
    env: Env,
    *,
    port: int | None = None,
    cpu: list[int] | None = None,
    ready_timeout: float | None = None,
    inject: Injection = NO_INJECTION,
    wrap: Sequence[str] = (),
    wrap_environ: Mapping[str, str] | None = None,
    interrupt_wait: float = 15.0,
    probe_timeout: float = 2.0,
    keep_alive: float | None = None,
) -> Iterator[Server]:
    """`wrap`: a command that launches the server as its child (`py-spy record … --`) or runs it
    (`valgrind …`); it is stopped with SIGINT first and given `interrupt_wait` seconds, so it can
    write what it recorded. `wrap_environ`: variables the wrapped server needs on top of its own
    (PYTHONHASHSEED=0 for a counter). `probe_timeout`: how long one readiness request may take
    (a server under valgrind answers its first request slowly); the set-up's requests get as long
    at least. `keep_alive`: seconds uvicorn keeps an idle connection open (its default is 5 s; a
    counted server's one connection idles while the counter dumps, which takes longer than that on
    a busy machine).

    Every boot has a fresh `{tmp}` directory and, when the app declares one, a fresh database;
    the app's set-up runs once the server answers (`Server.context` holds its values)."""
    with (
        tempfile.TemporaryDirectory(prefix="benchwatch-") as scratch_name,
        guard.folder(Path(scratch_name)) as scratch,
        _boot_database(variant) as boot_db,
    ):
        context = Context(tmp=str(scratch), database=boot_db.parts if boot_db else None)
        environ = server_environment(variant, env, context, inject)
        root = variant.app.root
        if (
            variant.app.declaration.pre_start
        ):  # without the wrapper's variables: they are the server's
            _pre_start(
                variant, environ, root, context
            )  # (a counting harness loaded here would hold its socket)
        setup_environ = dict(environ)
        environ = _with_wrapper(environ, wrap_environ or {})
        if port is not None and port_in_use(port):
            raise BootError(variant.id, f"port {HOST}:{port} is already in use")
        for attempt in range(3):
            chosen = port if port is not None else free_port()
            server = _spawn(
                variant,
                env,
                environ,
                root,
                chosen,
                scratch / f"server-{attempt}.log",
                wrap,
                keep_alive,
            )
            try:
                if cpu:
                    pin(server, cpu)
                _wait_ready(
                    server, ready_timeout or variant.app.declaration.ready_timeout, probe_timeout
                )
                server.context = context
                if variant.app.declaration.setup is not None:
                    server.context = _set_up(server, env, setup_environ, probe_timeout)
            except BootError as exc:
                _stop(server.process, grace=1.0)
                if port is None and "already in use" in exc.reason and attempt < 2:
                    continue
                raise
            except BaseException:
                _stop(server.process)
                raise
            try:
                yield server
            finally:
                if wrap:
                    _interrupt(server.process, interrupt_wait)
                _stop(server.process)
            return


def _resolved(variant: Variant, where: str, text: str, context: Context) -> str:
    """A declared string with its placeholders resolved; a missing variable is bad input (the
    command's check before any boot names it first: measure/preflight.py)."""
    try:
        return resolve(text, context)
    except Unresolved as exc:
        raise UserError(f"{variant.app.directory / APP_FILE}: {where}: {exc}") from None


@contextmanager
def _boot_database(variant: Variant) -> Iterator[database.BootDatabase | None]:
    """A fresh database for this boot when the app declares one (dropped after the server stopped)."""
    if variant.app.declaration.database is None:
        yield None
        return
    with ExitStack() as stack:
        try:
            opened = stack.enter_context(database.fresh())
        except database.DatabaseError as exc:
            raise BootError(variant.id, f"database: {exc}") from None
        yield opened


def _set_up(server: Server, env: Env, environ: dict, probe_timeout: float) -> Context:
    """The app's set-up against the ready server; a failure is the boot's, said by its step."""
    declared = server.variant.app.declaration.setup
    assert declared is not None
    timeout = max(declared.timeout, probe_timeout)
    try:
        values = run_setup(
            server.variant, server.base_url, server.context, environ, env.python, timeout
        )
    except SetupError as exc:
        tail = "\n".join(part for part in (exc.tail, server.stderr_tail()) if part)
        raise BootError(server.variant.id, str(exc), tail, phase="setup") from None
    return server.context.with_setup(values)


def _pre_start(variant: Variant, environ: dict, root: Path, context: Context) -> None:
    """The declared command, in a process group of its own: a script's children (`bash
    scripts/prestart.sh` runs python) are stopped with it when it runs too long or is interrupted."""
    declared = variant.app.declaration.pre_start or []
    argv = [_resolved(variant, f"pre_start[{i}]", arg, context) for i, arg in enumerate(declared)]
    try:
        process = subprocess.Popen(
            argv,
            cwd=root,
            env=environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
    except OSError as exc:
        raise BootError(variant.id, f"pre_start {declared[0]!r} failed: {exc}") from None
    try:
        out, err = process.communicate(timeout=PRE_START_TIMEOUT_S)
    except subprocess.TimeoutExpired:  # what it said so far: a step waiting for a database says why
        _stop(process, grace=2.0)
        out, err = process.communicate()
        raise BootError(
            variant.id,
            f"pre_start still running after {PRE_START_TIMEOUT_S} s",
            _tail(err) or _tail(out),
        ) from None
    except BaseException:
        _stop(process, grace=2.0)
        raise
    if process.returncode != 0:
        raise BootError(
            variant.id, f"pre_start exited with {process.returncode}", _tail(err) or _tail(out)
        )


def _tail(output: str | bytes | None, lines: int = 12) -> str:
    text = output.decode(errors="replace") if isinstance(output, bytes) else (output or "")
    return "\n".join(text.strip().splitlines()[-lines:])


def _spawn(
    variant: Variant,
    env: Env,
    environ: dict,
    root: Path,
    port: int,
    log_path: Path,
    wrap: Sequence[str] = (),
    keep_alive: float | None = None,
) -> Server:
    argv = [
        *wrap,
        str(env.python),
        "-m",
        "uvicorn",
        variant.import_string,
        "--host",
        HOST,
        "--port",
        str(port),
        "--no-access-log",
        "--log-level",
        "warning",
        *(["--timeout-keep-alive", str(int(keep_alive))] if keep_alive else []),
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            argv,
            cwd=root,
            env=environ,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    _live[process.pid] = process
    # the server leads a group of its own (the wrapper and whatever it starts): killed should benchwatch
    # end without stopping it, SIGKILL included
    _guarded[process.pid] = guard.watch_group(process.pid)
    return Server(variant=variant, port=port, process=process, log_path=log_path)


def pin(server: Server, cores: list[int]) -> None:
    try:
        psutil.Process(server.pid).cpu_affinity(cores)
    except (psutil.Error, AttributeError, OSError):
        pass  # pinning is an improvement, not a requirement


def _wait_ready(server: Server, timeout: float, probe_timeout: float = 2.0) -> None:
    """Poll until an answer comes from *our* server: an answer on the port counts only when the
    listening socket belongs to the process tree we started (ports are picked, released and then
    bound, so a neighbour's server can take ours in between and answer for it)."""
    deadline = time.monotonic() + timeout
    url = server.base_url + server.variant.ready_endpoint
    neighbour: str | None = None
    with httpx.Client(timeout=probe_timeout) as client:
        while True:
            code = server.process.poll()
            if code is not None:
                tail = server.stderr_tail()
                if "address already in use" in tail.lower():
                    raise BootError(
                        server.variant.id, f"port {HOST}:{server.port} is already in use", tail
                    )
                raise BootError(server.variant.id, f"server exited with code {code} at boot", tail)
            try:
                client.get(url)
            except httpx.HTTPError:
                pass
            else:
                if listens(server):
                    return
                neighbour = holder_of(server.port)
            if time.monotonic() > deadline:
                if neighbour is not None:
                    raise BootError(
                        server.variant.id,
                        f"another server ({neighbour}) answered on {HOST}:{server.port}, "
                        "not the one benchwatch started",
                        server.stderr_tail(),
                    )
                raise BootError(
                    server.variant.id,
                    f"not ready after {timeout:g}s (no answer on {server.variant.ready_endpoint})",
                    server.stderr_tail(),
                )
            time.sleep(0.1)


def listens(server: Server) -> bool:
    """Whether a process of the server's tree holds the listening socket of its port."""
    for proc in server._tree():
        try:
            connections = proc.net_connections(kind="tcp")
        except psutil.Error:
            continue
        if any(
            c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == server.port
            for c in connections
        ):
            return True
    return False


def holder_of(port: int) -> str:
    """Who listens on a loopback port, as far as this user may see (`pid 123 python3`)."""
    try:
        connections = psutil.net_connections(kind="tcp")
    except (psutil.Error, OSError):
        connections = []
    for conn in connections:
        if (
            conn.status == psutil.CONN_LISTEN
            and conn.laddr
            and conn.laddr.port == port
            and conn.pid
        ):
            try:
                return f"pid {conn.pid} {psutil.Process(conn.pid).name()}"
            except psutil.Error:
                return f"pid {conn.pid}"
    return "a process of another user"


def _interrupt(process: subprocess.Popen, wait: float = 15.0) -> None:
    """SIGINT to the group (a wrapper such as py-spy writes its output and exits), then wait."""
    try:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=wait)
    except (ProcessLookupError, PermissionError, subprocess.TimeoutExpired):
        pass


def _stop(process: subprocess.Popen, grace: float = 5.0) -> None:
    try:
        leftovers = psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        leftovers = []
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if process.poll() is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    for child in leftovers:
        try:
            child.kill()
        except psutil.Error:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # anything left in the group
    except (ProcessLookupError, PermissionError):
        pass
    _live.pop(process.pid, None)
    ticket = _guarded.pop(process.pid, None)
    if ticket is not None:
        guard.forget(ticket)


def stop_all() -> None:
    """Every server this process started, then the database cluster it started (if any)."""
    for process in list(_live.values()):
        _stop(process, grace=2.0)
    database.stop()


def _on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def install_cleanup() -> None:
    """Stop every server at exit, and turn SIGTERM into an orderly exit (context managers run).
    Installed once however often it is called."""
    atexit.unregister(stop_all)
    atexit.register(stop_all)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)

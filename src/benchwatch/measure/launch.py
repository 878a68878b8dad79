"""Launch a variant's server under uvicorn on loopback: its boot's scratch folder and database, the
pre-start, the process, readiness and the app's set-up; it is always stopped after the block."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchwatch.declarations.placeholders import Context
from benchwatch.environments.envs import Env
from benchwatch.measure import database, guard, ports
from benchwatch.measure.pre_start import run_pre_start
from benchwatch.measure.readiness import wait_ready
from benchwatch.measure.server import BootError, Server, pin
from benchwatch.measure.server_command import server_environment, uvicorn_command, with_wrapper
from benchwatch.measure.setup import SetupError, run_setup
from benchwatch.measure.stopping import interrupt, register, stop
from benchwatch.project.variants import Variant


@dataclass(frozen=True)
class ServerOptions:
    """How a server is started, beyond its variant and environment: `port` (None: a free one),
    the cores it is pinned to, its readiness timeout (None: the app's `ready_timeout`), the compare
    side it serves (measure/inject.py asks), a wrapper command and its variables, and the waits."""

    port: int | None = None
    cpu: list[int] | None = None
    ready_timeout: float | None = None
    role: str | None = None
    wrap: Sequence[str] = ()
    wrap_environ: Mapping[str, str] | None = None
    interrupt_wait: float = 15.0
    probe_timeout: float = 2.0
    keep_alive: float | None = None


@contextmanager
def running(
    variant: Variant, env: Env, options: ServerOptions = ServerOptions()
) -> Iterator[Server]:
    """`options.wrap`: a command that launches the server as its child (`py-spy record … --`) or runs it
    (`valgrind …`); it is stopped with SIGINT first and given `interrupt_wait` seconds, so it can
    write what it recorded. `wrap_environ`: variables the wrapped server needs on top of its own
    (PYTHONHASHSEED=0 for a counter). `probe_timeout`: how long one readiness request may take
    (a server under valgrind answers its first request slowly); the set-up's requests get as long
    at least. `keep_alive`: seconds uvicorn keeps an idle connection open (its default is 5 s; a
    counted server's one connection idles while the counter dumps, which takes longer than that on
    a busy machine).

    Every boot has a fresh `{tmp}` directory and, when the app declares one, a fresh database;
    the app's set-up runs once the server answers (`Server.context` holds its values)."""
    port, cpu, ready_timeout, role = options.port, options.cpu, options.ready_timeout, options.role
    wrap, wrap_environ, keep_alive = options.wrap, options.wrap_environ, options.keep_alive
    interrupt_wait, probe_timeout = options.interrupt_wait, options.probe_timeout
    with (
        tempfile.TemporaryDirectory(prefix="benchwatch-") as scratch_name,
        guard.folder(Path(scratch_name)) as scratch,
        _boot_database(variant) as boot_db,
    ):
        context = Context(tmp=str(scratch), database=boot_db.parts if boot_db else None)
        environ = server_environment(variant, env, context, role)
        root = variant.app.root
        # the pre-start without the wrapper's variables: they are the server's (a counting
        # harness loaded here would hold its socket)
        if variant.app.declaration.pre_start:
            run_pre_start(variant, environ, root, context)
        setup_environ = dict(environ)
        environ = with_wrapper(environ, wrap_environ or {})
        if port is not None and ports.port_in_use(port):
            raise BootError(variant.id, f"port {ports.HOST}:{port} is already in use")
        for attempt in range(3):
            chosen = port if port is not None else ports.free_port()
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
                wait_ready(
                    server, ready_timeout or variant.app.declaration.ready_timeout, probe_timeout
                )
                server.context = context
                if variant.app.declaration.setup is not None:
                    server.context = _set_up(server, env, setup_environ, probe_timeout)
            except BootError as exc:
                stop(server.process, grace=1.0)
                if port is None and "already in use" in exc.reason and attempt < 2:
                    continue
                raise
            except BaseException:
                stop(server.process)
                raise
            try:
                yield server
            finally:
                if wrap:
                    interrupt(server.process, interrupt_wait)
                stop(server.process)
            return


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
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            uvicorn_command(variant, env, port, wrap, keep_alive),
            cwd=root,
            env=environ,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    register(process)
    return Server(variant=variant, port=port, process=process, log_path=log_path)

"""The per-boot database of an app that declares `database = "postgresql"`: a fresh, empty
database for every server boot, created before `pre_start` and dropped once the server stopped,
so both sides of a compare (and every boot) start from the same state.

The cluster it lives in: the running server `BENCHWATCH_POSTGRES_URL` names (an admin URL on
loopback), or a throwaway cluster started once per command from PostgreSQL's server binaries
(as root through `runuser -u postgres`, in a directory owned by postgres), stopped at exit.
Databases are created and dropped with PostgreSQL's own client, psql. Should benchwatch end
without its cleanup (SIGKILL), the guard (measure/guard.py) stops the throwaway cluster and removes
its folder, or drops the boot's database in a configured cluster."""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from benchwatch.declarations import redaction
from benchwatch.errors import UserError
from benchwatch.measure import guard

URL_ENV = "BENCHWATCH_POSTGRES_URL"
INSTALL = "install it with `sudo apt-get install postgresql`"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
SERVER_BINARIES = ("initdb", "pg_ctl")
CLUSTER_USER = "bench"
CLUSTER_PREFIX = "benchwatch-cluster-"  # the throwaway cluster's directory
_TIMEOUT_S = 60
# the throwaway cluster's per-statement statistics (calls, rows, buffers: measure/database_work.py);
# utility statements (BEGIN, COMMIT, SET) left out: they touch no table
STATS = "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_utility=off"
PRELOAD = STATS + " -c autovacuum=off"  # its vacuums move pages per request: docs/counts.md


class DatabaseError(Exception):
    """The cluster would not start, or a database could not be created."""


@dataclass(frozen=True)
class Cluster:
    host: str
    port: int
    user: str
    password: str
    admin_database: str
    psql: str

    def psql_command(
        self, statement: str, database: str | None = None, options: tuple[str, ...] = ()
    ) -> tuple[list[str], dict[str, str]]:
        """psql's argv running `statement` in `database` (the admin database by default) with
        `options` of its output, and the variables it needs on top of the environment."""
        argv = [
            self.psql,
            "-X",
            "-q",
            *options,
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            self.host,
            "-p",
            str(self.port),
            "-U",
            self.user,
            "-d",
            database or self.admin_database,
            "-c",
            statement,
        ]
        return argv, {"PGPASSWORD": self.password, "PGCONNECT_TIMEOUT": "10"}

    def sql(self, statement: str) -> None:
        argv, extra = self.psql_command(statement)
        try:
            done = subprocess.run(
                argv,
                env={**os.environ, **extra},
                capture_output=True,
                text=True,
                timeout=_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DatabaseError(f"psql: {exc}") from None
        if done.returncode != 0:
            raise DatabaseError("psql: " + redaction.redact(done.stderr.strip()[-2000:])[-300:])


@dataclass(frozen=True)
class BootDatabase:
    """One boot's database; `parts` are what `{database_*}` placeholders become."""

    cluster: Cluster
    name: str

    @property
    def parts(self) -> dict[str, str]:
        c = self.cluster
        login = quote(c.user, safe="") + (f":{quote(c.password, safe='')}" if c.password else "")
        host = f"[{c.host}]" if ":" in c.host else c.host
        return {
            "url": f"postgresql://{login}@{host}:{c.port}/{self.name}",
            "host": c.host,
            "port": str(c.port),
            "name": self.name,
            "user": c.user,
            "password": c.password,
        }


def parse_url(url: str) -> Cluster:
    """An admin URL (`postgresql[+driver]://user[:password]@127.0.0.1:port/dbname`) as a Cluster."""
    parts = urlsplit(url)
    if parts.scheme.split("+")[0] not in ("postgresql", "postgres"):
        raise UserError(f"{URL_ENV}: give a postgresql:// URL (got scheme {parts.scheme!r})")
    host = parts.hostname or ""
    if host not in LOOPBACK:
        raise UserError(
            f"{URL_ENV}: the server must be on loopback (127.0.0.1), not {host or 'no host'!r}"
        )
    try:
        port = parts.port or 5432
    except ValueError:
        raise UserError(f"{URL_ENV}: the port is not a number") from None
    password = unquote(parts.password or "")
    if password:
        redaction.remember(URL_ENV, password)
    return Cluster(
        host=host,
        port=port,
        user=unquote(parts.username or "postgres"),
        password=password,
        admin_database=parts.path.lstrip("/") or "postgres",
        psql=_psql() or "psql",
    )


def _bin_dirs() -> list[Path]:
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: _version(p.parent.name),
        reverse=True,
    )
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            done = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=30
            )
            if done.returncode == 0 and done.stdout.strip():
                found.append(Path(done.stdout.strip()))
        except (OSError, subprocess.TimeoutExpired):
            pass
    return found


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def server_bin() -> Path | None:
    """The directory holding initdb and pg_ctl: /usr/lib/postgresql/*/bin, `pg_config --bindir`, PATH."""
    for directory in _bin_dirs():
        if all((directory / name).is_file() for name in SERVER_BINARIES):
            return directory
    on_path = [found for name in SERVER_BINARIES if (found := shutil.which(name))]
    if len(on_path) == len(SERVER_BINARIES) and Path(on_path[0]).parent == Path(on_path[1]).parent:
        return Path(on_path[0]).parent
    return None


def _psql() -> str | None:
    for directory in _bin_dirs():
        if (directory / "psql").is_file():
            return str(directory / "psql")
    return shutil.which("psql")


def require(where: str) -> None:
    """Before anything boots: a cluster can be had, or one UserError saying what to install."""
    configured = os.environ.get(URL_ENV)
    if configured:
        parse_url(configured)
        if _psql() is None:
            raise UserError(
                f"{where} needs PostgreSQL's client (psql) to create each boot's database: "
                "install it with `sudo apt-get install postgresql-client`"
            )
        return
    if server_bin() is None or _psql() is None:
        raise UserError(
            f"{where} needs PostgreSQL's server (initdb, pg_ctl): {INSTALL}, "
            f"or set {URL_ENV} to the admin URL of a running one on 127.0.0.1"
        )
    if os.geteuid() == 0 and (shutil.which("runuser") is None or not _has_user("postgres")):
        raise UserError(
            f"{where}: PostgreSQL's server refuses to run as root, and there is no `postgres` user "
            f"and `runuser` to start it as: {INSTALL}, or set {URL_ENV}"
        )


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


class _Throwaway:
    """A cluster of our own: initdb, pg_ctl start on a free loopback port; stopped at exit."""

    def __init__(self) -> None:
        found = server_bin()
        if found is None:
            raise DatabaseError(f"PostgreSQL's server (initdb, pg_ctl) not found: {INSTALL}")
        self.bin = found
        self.as_root = os.geteuid() == 0
        self.directory = Path(tempfile.mkdtemp(prefix=CLUSTER_PREFIX, dir=cluster_parent()))
        self.tickets = [guard.watch_folder(self.directory)]
        if self.as_root:
            shutil.chown(self.directory, "postgres")
        self.started = False

    def _as_owner(self, *argv: str | Path) -> list[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        return [*prefix, *map(str, argv)]

    def _run(self, *argv: str | Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            self._as_owner(*argv), capture_output=True, text=True, timeout=120, cwd=self.directory
        )

    def start(self) -> Cluster:
        data = self.directory / "data"
        done = self._run(
            self.bin / "initdb",
            "-D",
            data,
            "-A",
            "trust",
            "-U",
            CLUSTER_USER,
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        if done.returncode != 0:
            raise DatabaseError(f"initdb failed: {done.stderr.strip()[-300:]}")
        # pg_ctl daemonizes the server: should benchwatch be killed, the guard stops it (a stop of a
        # cluster that never started fails, harmlessly), then removes the folder
        self.tickets.append(
            guard.watch_command(
                self._as_owner(self.bin / "pg_ctl", "-D", data, "-m", "immediate", "stop")
            )
        )
        for _attempt in range(3):
            port = _free_port()
            done = self._run(
                self.bin / "pg_ctl",
                "-D",
                data,
                "-o",
                f"-k {self.directory} -h 127.0.0.1 -p {port} {PRELOAD}",
                "-l",
                self.directory / "log",
                "-w",
                "-t",
                "60",
                "start",
            )
            if done.returncode == 0:
                self.started = True
                psql = (
                    str(self.bin / "psql") if (self.bin / "psql").is_file() else (_psql() or "psql")
                )
                started = Cluster("127.0.0.1", port, CLUSTER_USER, "", "postgres", psql)
                # what counts/database_work.py reads; a cluster without it counts no database work
                with contextlib.suppress(DatabaseError):
                    started.sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                return started
        log = (
            (self.directory / "log").read_text(errors="replace")
            if (self.directory / "log").is_file()
            else ""
        )
        raise DatabaseError(f"pg_ctl start failed: {(done.stderr + log).strip()[-300:]}")

    def stop(self) -> None:
        if self.started:
            self._run(self.bin / "pg_ctl", "-D", self.directory / "data", "-m", "fast", "stop")
            self.started = False
        shutil.rmtree(self.directory, ignore_errors=True)
        for ticket in self.tickets:
            guard.forget(ticket)
        self.tickets = []


def cluster_parent() -> Path:
    """Where a throwaway cluster's directory goes: as root, /tmp, which the postgres user can reach
    (a TMPDIR only root may enter would not do); else the usual temporary directory."""
    return Path("/tmp") if os.geteuid() == 0 else Path(tempfile.gettempdir())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_lock = threading.Lock()
_cluster: Cluster | None = None
_own: _Throwaway | None = None
_failed: str | None = (
    None  # why the throwaway cluster did not start: every later boot says the same
)


def cluster() -> Cluster:
    """The command's cluster: BENCHWATCH_POSTGRES_URL's, or a throwaway one started now (once)."""
    global _cluster, _own, _failed
    with _lock:
        if _cluster is not None:
            return _cluster
        if _failed is not None:
            raise DatabaseError(_failed)
        configured = os.environ.get(URL_ENV)
        if configured:
            _cluster = parse_url(configured)
            return _cluster
        own = _Throwaway()
        atexit.register(stop)
        _own = own
        try:
            _cluster = own.start()
        except BaseException as exc:
            own.stop()
            _own = None
            if isinstance(exc, DatabaseError):
                _failed = str(exc)
            raise
        return _cluster


def stop() -> None:
    """Stop the throwaway cluster, if this process started one (at exit; idempotent)."""
    global _cluster, _own
    with _lock:
        if _own is not None:
            _own.stop()
            _own = None
            _cluster = None


@contextmanager
def fresh() -> Iterator[BootDatabase]:
    """A new empty database for one boot, dropped afterwards (its connections closed by force)."""
    where = cluster()
    database = BootDatabase(where, f"benchwatch_{os.getpid()}_{secrets.token_hex(4)}")
    # in a configured cluster, the guard drops what benchwatch could not (ours is removed whole)
    ticket = (
        None
        if _own is not None
        else guard.watch_command(*where.psql_command(_drop_statements(database.name)[0]))
    )
    where.sql(f'CREATE DATABASE "{database.name}"')
    try:
        yield database
    finally:
        _drop(where, database.name)
        if ticket is not None:
            guard.forget(ticket)


def _drop_statements(name: str) -> tuple[str, str]:
    return f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'DROP DATABASE IF EXISTS "{name}"'


def _drop(where: Cluster, name: str) -> None:
    """WITH (FORCE) closes what is left connected (PostgreSQL 13+); an older server gets a plain
    drop (the boot's server has stopped by now). A database left behind is a name, not a result."""
    for statement in _drop_statements(name):
        try:
            where.sql(statement)
            return
        except DatabaseError:
            continue

"""`benchwatch init`: find the app, boot it once, read its OpenAPI schema, write the
declarations, the golden bodies and the caller workflows. Never overwrites a file unless forced.

The app folder may be anywhere in the repository (its imports resolve from it); benchwatch.toml
and the workflows go to the repository root, which git names (scaffold/layout.py)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchwatch.config import APP_FILE, PROJECT_FILE, App, Project, _own_stack, load_stacks
from benchwatch.declarations import AppDeclaration, Endpoint, ProjectSettings
from benchwatch.errors import UserError
from benchwatch.scaffold import declare, discover, schema
from benchwatch.scaffold.layout import Layout, project_with_app
from benchwatch.scaffold.workflows import caller_workflows, default_source

OPENAPI_PATH = "/openapi.json"
REQUIREMENTS = ("requirements.txt", "requirements/base.txt", "requirements/prod.txt")
MIGRATION_CONFIG = "alembic.ini"
MIGRATE = ["python", "-m", "alembic", "upgrade", "head"]
_ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Outcome:
    written: list[Path]
    declared: int  # endpoints declared (0: the app file holds commented examples only)
    variant: str
    kept: list[Path] = field(default_factory=list)  # shared files that exist already (workflows)


@dataclass(frozen=True)
class Answer:
    """What one parameter-free GET answered at init (twice, to see what changes)."""

    status: int  # 0: no answer
    content_type: str = ""
    first: object = None
    second: object = None
    error: str = ""  # the server's own error line, or why there was no answer


def parse_env(pairs: list[str]) -> dict[str, str]:
    """`--env KEY=VALUE` (repeatable) as a dict; a malformed one is bad input."""
    settings: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not _ENV_KEY.fullmatch(key):
            raise UserError(f"--env {pair!r}: give KEY=VALUE, KEY a variable name (e.g. DATABASE_URL=postgresql://...)")
        settings[key] = value
    return settings


def init(
    where: Layout, app: str | None = None, *, force: bool = False, workflows_from: str | None = None,
    python: str | None = None, env: dict[str, str] | None = None, migrate: bool = False,
    say: Callable[[str], None] = print,
) -> Outcome:  # fmt: skip
    env = env or {}
    found = discover.find_app(where.folder, app)
    # pinned to a commit (a tag resolved with git) before anything is written
    workflows = {where.root / ".github" / "workflows" / n: t
                 for n, t in caller_workflows(workflows_from or default_source()).items()}
    project_file = where.root / PROJECT_FILE
    app_file = where.app_dir / APP_FILE
    if app_file.exists() and not force:
        raise UserError(f"{app_file} exists; init never overwrites a file (use --force to replace)")
    project_text = _project_text(where, project_file, force)
    pre_start = _migration(where, found, migrate)
    requirements = _pinned_requirements(where, say)
    name = _name(where)
    import_root = where.from_app_dir(where.folder / found.import_root)
    say(f"init: app {found.import_string} ({found.source.relative_to(where.root)}), import root {import_root}, "
        f"repository root {where.root}")  # fmt: skip
    probe = AppDeclaration(
        name=name, root=import_root, app=found.import_string, python=python, env=env, pre_start=pre_start,
        requirements=requirements, stacks=None if requirements else ["latest"], ready_path=OPENAPI_PATH,
        endpoints=[Endpoint(name="openapi", path=OPENAPI_PATH)],
    )  # fmt: skip
    openapi, answers = _boot_and_read(where, probe, found.import_string, say)
    declared, left_out, goldens = _endpoints(openapi, answers)
    text = declare.AppText(
        name=name, import_string=found.import_string, root=import_root, requirements=requirements, python=python,
        declared=declared, left_out=left_out, env_names=[n for n in discover.env_names(found) if n not in env],
        migrations=[m for m in (MIGRATION_CONFIG, "migrations", "manage.py") if (where.folder / m).exists()],
        env=env, pre_start=pre_start,
    )  # fmt: skip
    files = {
        app_file: declare.app_text(text),
        **{where.app_dir / rel: json.dumps(body, indent=2, ensure_ascii=False) + "\n" for rel, body in goldens.items()},
    }
    if project_text is not None:
        files[project_file] = project_text
    kept = [p for p in workflows if p.exists() and not force]
    files.update({p: t for p, t in workflows.items() if p not in kept})
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    variant = f"{name}@{'own' if requirements else 'latest'}"
    return Outcome(written=list(files), declared=len(declared), variant=variant, kept=kept)


def _project_text(where: Layout, path: Path, force: bool) -> str | None:
    """benchwatch.toml's new text: a new file listing the app, the existing one with the app added
    (another app's init wrote it; --force keeps the other apps too), or None when it lists the app
    already. Only --force replaces a file it cannot add to."""
    entry = where.listed()
    if path.exists():
        try:
            return project_with_app(path.read_text(), path, entry)
        except UserError:
            if not force:
                raise
    return declare.project_text(entry)


def _name(where: Layout) -> str:
    name = re.sub(r"[^a-z0-9_]+", "_", where.folder.name.lower()).strip("_") or "app"
    return name if name[0].isalnum() else f"app_{name}"


def _migration(where: Layout, found: discover.FoundApp, migrate: bool) -> list[str] | None:
    """`alembic upgrade head` before each boot, when asked and alembic.ini sits where the app runs."""
    if not migrate:
        return None
    if not (where.folder / found.import_root / MIGRATION_CONFIG).is_file():
        raise UserError(f"--migrate: no {MIGRATION_CONFIG} in {where.folder / found.import_root}, where the app "
                        "runs; give pre_start in its benchwatch-app.toml instead")  # fmt: skip
    return MIGRATE


def _pinned_requirements(where: Layout, say: Callable[[str], None]) -> str | None:
    """The first requirements file (in the app folder, then at the repository root) whose every
    line is an exact pin (name==version), relative to the app file; a file with a line that is not
    is named, with the line, and the app runs on the `latest` stack."""
    for base in dict.fromkeys((where.folder, where.root)):
        for relative in REQUIREMENTS:
            path = base / relative
            if not path.is_file():
                continue
            lines = [ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines()]
            lines = [ln for ln in lines if ln and not ln.startswith("-")]
            loose = [ln for ln in lines if not re.fullmatch(r"[A-Za-z0-9._-]+(\[[^\]]*\])?\s*==\s*[0-9][0-9A-Za-z.+!-]*", ln)]
            shown = path.relative_to(where.root)
            if lines and not loose:
                return where.from_app_dir(path)
            if loose:
                say(f"init: {shown}: {loose[0]!r} is not an exact pin (name==version), so the app runs on "
                    "the `latest` stack; pin every line and set requirements = ... to use the file")  # fmt: skip
    return None


def _endpoints(
    openapi: dict, answers: dict[str, Answer]
) -> tuple[list[declare.Declared], list[tuple[str, schema.Operation, str]], dict[str, object]]:
    operations = schema.operations(openapi)
    names = schema.endpoint_names([(o.method, o.path) for o in operations])
    declared: list[declare.Declared] = []
    left_out: list[tuple[str, schema.Operation, str]] = []
    goldens: dict[str, object] = {}
    for endpoint_name, operation in zip(names, operations, strict=True):
        if not operation.ready:
            left_out.append((endpoint_name, operation, "needs " + ", ".join(operation.needs or ["a body"])))
            continue
        answer = answers[operation.path]
        if answer.status != 200:
            said = f"answered {answer.status} at init" if answer.status else "no answer at init"
            left_out.append((endpoint_name, operation, f"{said}: {answer.error}" if answer.error else said))
            continue
        item = declare.Declared(endpoint_name, operation, answer.content_type)
        if answer.content_type == "application/json":
            item.golden = f"expected/{endpoint_name}.json"
            item.volatile = sorted(schema.differing_keys(answer.first, answer.second))
            goldens[item.golden] = answer.first
        declared.append(item)
    return declared, left_out, goldens


def _boot_and_read(
    where: Layout, probe: AppDeclaration, import_string: str, say: Callable[[str], None]
) -> tuple[dict, dict[str, Answer]]:
    """Boot the app once on 127.0.0.1: its OpenAPI schema, and what each parameter-free GET
    answered. A boot that fails shows the server's last lines, then one ERROR line."""
    import httpx

    from benchwatch import envs
    from benchwatch.measure import server

    created = not where.app_dir.exists()
    where.app_dir.mkdir(exist_ok=True)  # the probe sits where the app file will: relative paths mean the same
    try:
        probe_app = App(declaration=probe, directory=where.app_dir)
        if probe.requirements:
            _own_stack(probe_app)  # names a line that is not an exact pin
        settings = ProjectSettings(apps=[where.listed()])
        project = Project(where.root, settings, load_stacks(where.root), (probe_app,))
        (variant,) = project.variants(["latest"])
        say(f"init: environment for {variant.id} ({variant.stack.description or variant.stack.name})")
        try:
            env = envs.ensure(variant.stack, requirements_file=variant.requirements_file)
        except envs.EnvError as exc:
            raise UserError(f"cannot build the app's environment: {exc}") from None
        step = "migrating, then booting" if probe.pre_start else "booting"
        say(f"init: {step} {import_string} on 127.0.0.1 to read {OPENAPI_PATH}")
        try:
            with server.running(variant, env) as srv, httpx.Client(
                base_url=srv.base_url, timeout=30, headers={"Connection": "close"}  # after an error, a new one
            ) as client:
                schema_answer = _get(client, srv, OPENAPI_PATH)
                if schema_answer.status != 200 or not isinstance(schema_answer.first, dict):
                    got = f"answered {schema_answer.status}" if schema_answer.status else "gave no answer"
                    raise UserError(f"{import_string}: GET {OPENAPI_PATH} {got}"
                                    f"{': ' + schema_answer.error if schema_answer.error else ''}; init needs the "
                                    "app's OpenAPI schema (FastAPI(openapi_url=...))")  # fmt: skip
                openapi = schema_answer.first
                answers = {o.path: _get(client, srv, o.path) for o in schema.operations(openapi) if o.ready}
        except server.BootError as exc:
            _show_tail(exc.stderr_tail)
            hint = ("give settings with --env KEY=VALUE" if not probe.env else "check the --env settings")
            if not probe.pre_start and (where.folder / MIGRATION_CONFIG).is_file():
                hint += f"; {MIGRATION_CONFIG} is there: --migrate runs `alembic upgrade head` first"
            raise UserError(f"{import_string} did not boot: {exc.reason} (its last lines above); {hint}") from None
        return openapi, answers
    except BaseException:
        if created and not any(where.app_dir.iterdir()):
            where.app_dir.rmdir()
        raise


def _get(client, srv, path: str) -> Answer:  # type: ignore[no-untyped-def]
    """GET `path` twice; on an error status or no answer, the server's own last error line."""
    import httpx

    if not srv.alive():
        return Answer(0, error=f"the server exited (code {srv.process.returncode}) at an earlier request")
    before = len(srv.stderr_tail(lines=10_000).splitlines())
    try:
        first = client.get(path)
        content_type = first.headers.get("content-type", "").split(";")[0].strip()
        if first.status_code != 200:  # asked once: the server may close the connection after an error
            logged = _server_error(srv, before, wait=2.0 if first.status_code >= 500 else 0.0)
            return Answer(first.status_code, content_type, error=logged or _detail(first))
        if content_type != "application/json":
            return Answer(first.status_code, content_type)
        second = client.get(path)
    except httpx.HTTPError as exc:
        code = _exit_code(srv, wait=1.0)  # a server that dies drops its connection a moment before it exits
        died = "" if code is None else f"the server exited (code {code}); "
        return Answer(0, error=died + (_server_error(srv, before) or f"{type(exc).__name__}: {exc}".strip(": ")))
    try:
        return Answer(first.status_code, content_type, first.json(), second.json())
    except ValueError:
        return Answer(first.status_code, content_type)


def _exit_code(srv, wait: float) -> int | None:  # type: ignore[no-untyped-def]
    """The server's exit code if it exits within `wait` seconds, else None (still serving)."""
    import subprocess

    try:
        return srv.process.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        return None


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*: \S")  # `sqlalchemy.exc.ProgrammingError: (...) ...`


def _server_error(srv, before: int, wait: float = 0.0) -> str:  # type: ignore[no-untyped-def]
    """The server's error since log line `before`: a traceback's exception line (its message may
    run on over more lines), else the last line logged. An error answer can arrive before its
    traceback is logged: up to `wait` seconds for it."""
    import time

    deadline = time.monotonic() + wait
    while True:
        new = [ln for ln in srv.stderr_tail(lines=10_000).splitlines()[before:] if ln.strip()]
        if new or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    if new and wait:
        time.sleep(0.2)  # the rest of the traceback
        new = [ln for ln in srv.stderr_tail(lines=10_000).splitlines()[before:] if ln.strip()]
    exceptions = [ln for ln in new if _EXCEPTION_LINE.match(ln)]
    return (exceptions or new or [""])[-1].strip()[:300]


def _detail(reply) -> str:  # type: ignore[no-untyped-def]
    try:
        body = reply.json()
    except ValueError:
        return reply.text.strip().splitlines()[0][:300] if reply.text.strip() else ""
    detail = body.get("detail", body) if isinstance(body, dict) else body
    return json.dumps(detail, ensure_ascii=False)[:300]


def _show_tail(tail: str) -> None:
    for line in tail.splitlines()[-12:]:
        print(f"    | {line}", file=sys.stderr)

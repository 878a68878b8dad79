"""`benchwatch init`: find the app, boot it, read its OpenAPI schema, write the declarations, the
golden bodies and the caller workflows. Never overwrites a file unless forced.

The app folder is where the app's imports resolve from (a scan from the repository root moves
there: `backend/` for `backend/app/main.py` importing `app.…`); benchwatch.toml and the workflows
go to the repository root, which git names (scaffold/layout.py).

Three boots: the first reads the schema (the app's own `openapi_url`), logs in when the schema
has an OAuth2 password flow and the credentials are set, and asks the parameter-free GETs (their
lists give ids to path parameters); the next two run the set-up init writes and send every
request it would declare, so the golden bodies come from a boot like verify's and the keys that
differ between boots are `volatile`."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwatch.declarations.apps import AppDeclaration
from benchwatch.declarations.pins import exact_pin
from benchwatch.declarations.project_file import ProjectSettings
from benchwatch.declarations.requests import Endpoint
from benchwatch.declarations.setup import Setup, SetupRequest
from benchwatch.environments.own_requirements import check_python
from benchwatch.errors import UserError
from benchwatch.figures.figure_key import variant_id
from benchwatch.measure.verify import golden_text
from benchwatch.project.apps import App, own_stack
from benchwatch.project.files import APP_FILE, PROJECT_FILE
from benchwatch.project.stacks import load_stacks
from benchwatch.project.variants import Project, Variant
from benchwatch.scaffold import causes, declare, discover, schema, unique
from benchwatch.scaffold import declared_requests as plan
from benchwatch.scaffold.layout import Layout, ignore_outputs, project_with_app
from benchwatch.scaffold.probe import Answer, ask, ask_endpoint, server_error, show_tail
from benchwatch.scaffold.workflows import caller_workflows, default_source
from benchwatch.whole_files import write_text_whole

OPENAPI_PATH = "/openapi.json"
REQUIREMENTS = ("requirements.txt", "requirements/base.txt", "requirements/prod.txt")
MIGRATION_CONFIG = "alembic.ini"
MIGRATE = ["python", "-m", "alembic", "upgrade", "head"]
_ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_POSTGRES_URL = re.compile(r"^postgres(?:ql)?(\+\w+)?://")
_ASK_APP = (
    "import importlib, json, sys\nmodule, _, name = sys.argv[1].partition(':')\n"
    "app = getattr(importlib.import_module(module), name)\n"
    "print(); print(json.dumps({'openapi_url': app.openapi_url, 'root_path': app.root_path}))\n"
)


@dataclass
class Outcome:
    written: list[Path]
    declared: int  # endpoints declared (0: the app file holds commented examples only)
    variant: str
    kept: list[Path] = field(default_factory=list)  # shared files that exist already (workflows)
    left_out: int = 0
    secrets: list[str] = field(default_factory=list)  # the ${NAME}s the declaration reads
    referenced: list[str] = field(default_factory=list)  # the --env settings written as ${NAME}
    database: str = ""  # "postgresql": the callers ask the workflows for it
    where: Layout | None = None  # the layout init wrote into (the app folder may have moved)


def parse_env(pairs: list[str], option: str = "--env") -> dict[str, str]:
    """`--env KEY=VALUE` (repeatable) as a dict; a malformed one is bad input."""
    settings: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not _ENV_KEY.fullmatch(key):
            raise UserError(
                f"{option} {pair!r}: give KEY=VALUE, KEY a variable name (e.g. DATABASE_URL=postgresql://...)"
            )
        settings[key] = value
    _refuse_what_the_server_sets(settings)
    return settings


def _refuse_what_the_server_sets(settings: dict[str, str]) -> None:
    """A KEY the server's environment takes over (PYTHONPATH, a runner's GITHUB_*) would never
    reach the app: bad input, said with why, rather than dropped."""
    from benchwatch.measure.server_command import refused_setting

    for key in settings:
        refused = refused_setting(key)
        if refused:
            raise UserError(f"--env {key}: {refused}; leave it out")


def init(
    where: Layout,
    app: str | None = None,
    *,
    force: bool = False,
    workflows_from: str | None = None,
    python: str | None = None,
    env: dict[str, str] | None = None,
    migrate: bool = False,
    pre_start: str | None = None,
    say: Callable[[str], None] = print,
    literal_env: dict[str, str] | None = None,
) -> Outcome:
    both = sorted(set(env or {}) & set(literal_env or {}))
    if both:
        raise UserError(f"--env and --env-literal both give {both[0]}: give it once")
    with _references(dict(env or {}), literal_env or {}) as (env, referenced):
        return _init(
            where,
            app,
            force=force,
            workflows_from=workflows_from,
            python=python,
            env=env,
            migrate=migrate,
            pre_start=pre_start,
            say=say,
            referenced=referenced,
        )


@contextmanager
def _references(
    env: dict[str, str], literal: dict[str, str]
) -> Iterator[tuple[dict[str, str], list[str]]]:
    """The declaration's `env`: each `--env KEY=VALUE` as `KEY = "${KEY}"`, read from the
    environment on every later run (a value may be a secret: nothing of it is committed), VALUE
    in init's own environment while it boots the app; one that holds a placeholder (`{database_host}`,
    `${APP_SECRET_KEY}`), or is empty, stays as it is, as does every `--env-literal` one.
    Yields (the env, the names written as references)."""
    from benchwatch.declarations.placeholders import PlaceholderError, refs

    def placeholder(value: str) -> bool:
        try:
            return bool(refs(value))
        except PlaceholderError:
            return True  # written as given: the declaration's check names what is wrong

    given = {
        k: v for k, v in env.items() if v and not placeholder(v) and not _POSTGRES_URL.match(v)
    }
    before = {k: os.environ.get(k) for k in given}
    os.environ.update(given)
    try:
        yield {**env, **{k: "${" + k + "}" for k in given}, **literal}, sorted(given)
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _init(
    where: Layout,
    app: str | None,
    *,
    force: bool,
    workflows_from: str | None,
    python: str | None,
    env: dict[str, str],
    migrate: bool,
    pre_start: str | None,
    say: Callable[[str], None],
    referenced: list[str],
) -> Outcome:
    found = discover.find_app(where.folder, app)
    where, found = _app_folder(where, found, say)
    env, database = _database(env, say)
    # pinned to a commit (a tag resolved with git) before anything is written
    source = workflows_from or default_source()
    project_file = where.root / PROJECT_FILE
    app_file = where.app_dir / APP_FILE
    if app_file.exists() and not force:
        raise UserError(f"{app_file} exists; init never overwrites a file (use --force to replace)")
    project_text = _project_text(where, project_file, force)
    before_boot = _pre_start(where, found, migrate, pre_start)
    requirements = _pinned_requirements(where, say)
    if python is not None:  # before anything is built
        check_python(
            python,
            f"--python {python}",
            where.folder / found.import_root,
            where.root,
            where.app_dir / requirements if requirements else None,
        )
    name = _name(where)
    import_root = where.from_app_dir(where.folder / found.import_root)
    say(
        f"init: app {found.import_string} ({found.source.relative_to(where.root)}), import root {import_root}, "
        f"repository root {where.root}"
    )
    probe = AppDeclaration(
        name=name,
        root=import_root,
        app=found.import_string,
        python=python,
        env=env,
        pre_start=before_boot,
        requirements=requirements,
        stacks=None if requirements else ["latest"],
        ready_path=OPENAPI_PATH,
        database=database or None,
        endpoints=[Endpoint(name="openapi", path=OPENAPI_PATH)],
    )
    can_login = all(os.environ.get(v) for v in (plan.USER_VAR, plan.PASSWORD_VAR))
    found_plan, goldens, schema_path = _read(where, probe, found.import_string, can_login, say)
    declared = plan.in_order([c for c in found_plan.candidates if c.declared])
    left_out = [c for c in found_plan.candidates if not c.declared]
    bodies = {rel: body for rel, (body, _) in goldens.items()}
    quick, why_quick = plan.quick_choice(declared, bodies) if declared else ([], "")
    text = declare.AppText(
        name=name,
        import_string=found.import_string,
        root=import_root,
        requirements=requirements,
        python=python,
        declared=declared,
        left_out=left_out,
        env_names=[n for n in discover.env_names(found) if n not in env],
        migrations=[
            m for m in (MIGRATION_CONFIG, "migrations", "manage.py") if (where.folder / m).exists()
        ],
        env=env,
        pre_start=before_boot,
        database=database,
        login=found_plan.login,
        setup=found_plan.setup_requests,
        quick=quick,
        why_quick=why_quick,
        schema_path=schema_path,
    )
    content = declare.app_text(text)
    secrets = sorted({r.name for r in _refs(content) if r.kind == "env"})
    workflows = {
        where.root / ".github" / "workflows" / n: t
        for n, t in caller_workflows(
            source, database=database, app_env=bool(secrets), own=bool(requirements)
        ).items()
    }
    files = {
        app_file: content,
        **{where.app_dir / rel: golden_text(*golden) for rel, golden in goldens.items()},
    }
    if project_text is not None:
        files[project_file] = project_text
    kept = [p for p in workflows if p.exists() and not force]
    files.update({p: t for p, t in workflows.items() if p not in kept})
    _remove_stale_goldens(where, set(files))
    for path, text_of in files.items():
        _write(path, text_of)
    ignored = ignore_outputs(where.root)
    if ignored:
        files[ignored] = ""
    variant = variant_id(name, "own" if requirements else "latest")
    return Outcome(
        written=list(files),
        declared=len(declared),
        variant=variant,
        kept=kept,
        left_out=len(left_out),
        secrets=secrets,
        database=database,
        where=where,
        referenced=referenced,
    )


def _refs(text: str) -> list[Any]:
    from benchwatch.declarations.placeholders import refs

    return [
        r for line in text.splitlines() if not line.lstrip().startswith("#") for r in refs(line)
    ]


def _write(path: Path, text: str) -> None:
    write_text_whole(path, text)


def _remove_stale_goldens(where: Layout, written: set[Path]) -> None:
    """Golden bodies of an earlier init that this one does not write: they would name endpoints
    the declaration no longer has."""
    for stale in sorted((where.app_dir / "expected").glob("*.json")):
        if stale not in written:
            stale.unlink()


def _app_folder(
    where: Layout, found: discover.FoundApp, say: Callable[[str], None]
) -> tuple[Layout, discover.FoundApp]:
    """The folder the app's imports resolve from becomes the app folder: a scan from the
    repository root that finds `backend/app/main.py` importing `app.…` moves to `backend/`."""
    if found.import_root in (Path(), Path("src")):
        return where, found
    folder = where.folder / found.import_root
    say(
        f"init: {found.source.relative_to(where.folder)} imports resolve from {found.import_root}/: "
        "that is the app folder"
    )
    return Layout(root=where.root, folder=folder), dataclasses.replace(found, import_root=Path())


def _database(env: dict[str, str], say: Callable[[str], None]) -> tuple[dict[str, str], str]:
    """`database = "postgresql"` when a setting names the boot's database (`{database_url}`, …) or
    points at a PostgreSQL server: such a URL becomes the per-boot database's (`{database_url}`
    with its driver kept), so nothing of a local server (a password, a port) is committed and CI
    can start its own."""
    database = ""
    for key, value in env.items():
        if "{database_" in value:
            database = "postgresql"
        match = _POSTGRES_URL.match(value)
        if match:
            driver = match.group(1) or ""
            env[key] = (
                "{database_url}"
                if not driver
                else f"postgresql{driver}://{{database_user}}:{{database_password}}@{{database_host}}:"
                "{database_port}/{database_name}"
            )
            say(
                f"init: {key} points at a PostgreSQL server: every boot gets a fresh database of its own instead "
                f'(database = "postgresql", {key} = "{env[key]}")'
            )
            database = "postgresql"
    return env, database


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


def _pre_start(
    where: Layout, found: discover.FoundApp, migrate: bool, given: str | None
) -> list[str] | None:
    """What runs before each boot: `--pre-start "bash scripts/prestart.sh"` as given, or
    `alembic upgrade head` (`--migrate`) when alembic.ini sits where the app runs."""
    if given is not None:
        try:
            argv = shlex.split(given)
        except ValueError as exc:
            raise UserError(f"--pre-start {given!r}: {exc}") from None
        if not argv or migrate:
            raise UserError(
                "--pre-start: give one command (with its arguments), or --migrate, not both"
            )
        return argv
    if not migrate:
        return None
    if not (where.folder / found.import_root / MIGRATION_CONFIG).is_file():
        raise UserError(
            f"--migrate: no {MIGRATION_CONFIG} in {where.folder / found.import_root}, where the app "
            "runs; give pre_start in its benchwatch-app.toml instead"
        )
    return MIGRATE


def _pinned_requirements(where: Layout, say: Callable[[str], None]) -> str | None:
    """The app's own pins, relative to the app file: its `uv.lock` (beside its pyproject.toml),
    else the first requirements file whose every line is an exact pin (name==version, a marker
    may follow), in the app folder, then at the repository root; a file with a line that is not
    is named, with the line, and the app runs on the `latest` stack."""
    for base in dict.fromkeys((where.folder, where.root)):
        if (base / "uv.lock").is_file() and (base / "pyproject.toml").is_file():
            return where.from_app_dir(base / "uv.lock")
        for relative in REQUIREMENTS:
            path = base / relative
            if not path.is_file():
                continue
            lines = [ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines()]
            lines = [ln for ln in lines if ln and not ln.startswith("-")]
            loose = [ln for ln in lines if not exact_pin(ln.partition(";")[0].strip())]
            shown = path.relative_to(where.root)
            if lines and not loose:
                return where.from_app_dir(path)
            if loose:
                say(
                    f"init: {shown}: {loose[0]!r} is not an exact pin (name==version), so the app runs on "
                    "the `latest` stack; pin every line and set requirements = ... to use the file"
                )
    return None


def _read(
    where: Layout,
    probe: AppDeclaration,
    import_string: str,
    can_login: bool,
    say: Callable[[str], None],
) -> tuple[plan.Plan, dict[str, tuple[object, set[str]]], str]:
    """Boot the app three times on 127.0.0.1 (see the module's docstring): the plan with each
    endpoint's request and expectation, the golden bodies, and the path of the schema."""
    import httpx

    from benchwatch.environments import envs
    from benchwatch.measure import launch, server
    from benchwatch.measure.setup import SetupError

    created = not where.app_dir.exists()
    where.app_dir.mkdir(
        parents=True, exist_ok=True
    )  # the probe sits where the app file will: relative paths hold
    try:
        variant = _variant(where, probe)
        say(
            f"init: environment for {variant.id} ({variant.stack.description or variant.stack.name})"
        )
        try:
            env = envs.ensure(variant.stack, requirements_file=variant.requirements_file)
        except envs.EnvError as exc:
            raise UserError(f"cannot build the app's environment: {exc}") from None

        @contextmanager
        def booted(v: Variant) -> Iterator[tuple[Any, httpx.Client]]:
            try:
                with (
                    launch.running(v, env) as srv,
                    httpx.Client(
                        base_url=srv.base_url,
                        timeout=30,
                        trust_env=False,
                        headers={"Connection": "close"},
                    ) as client,
                ):
                    yield srv, client
            except server.BootError as exc:
                show_tail(exc.stderr_tail)
                raise UserError(_boot_failed(where, probe, import_string, exc)) from None

        step = "migrating, then booting" if probe.pre_start else "booting"
        say(f"init: {step} {import_string} on 127.0.0.1 to read its OpenAPI schema")
        with booted(variant) as (srv, client):
            openapi, schema_path = _schema(client, srv, variant, env, import_string)
            found = plan.plan(openapi, can_login)
            context, failed = srv.context, {}
            if (
                found.login is not None
                and can_login
                and any(plan.LOGIN in c.steps for c in found.candidates)
            ):
                logged = len(srv.stderr_tail(lines=10_000).splitlines())
                try:
                    context = context.with_setup(_run_step(variant, found.login, srv, env, context))
                except SetupError as exc:
                    if (
                        exc.status is None or exc.status >= 500
                    ):  # its traceback comes a moment after the answer
                        server_error(srv, logged, wait=3.0)
                    raise _login_failed(where, probe, exc, srv.stderr_tail()) from None
            first = {}
            for cand in [
                c
                for c in found.candidates
                if c.endpoint is not None
                and c.param is None
                and c.operation.method == "GET"
                and not c.why
            ]:
                first[cand.name] = ask_endpoint(client, srv, variant.app, cand.endpoint, context)
            _stop_when_all_failed(first, srv, probe.env)
            lists = {
                c.operation.path: first[c.name].first
                for c in found.candidates
                if c.name in first and 200 <= first[c.name].status < 300
            }
            for cand in found.candidates:
                if cand.name in first and not 200 <= first[cand.name].status < 300:
                    cand.why = first[cand.name].said()
            plan.fill_path_params(found, lists)
            for source in found.sources:
                try:
                    context = context.with_setup(_run_step(variant, source, srv, env, context))
                except SetupError as exc:
                    failed[source.name] = exc.reason
            plan.without_failed_steps(found, failed)
        declared = plan.in_order([c for c in found.candidates if c.declared])
        if not declared:
            return found, {}, schema_path
        answers = []
        setup = Setup(requests=found.setup_requests) if found.setup_requests else None
        checked = _variant(
            where,
            probe.model_copy(
                update={
                    "setup": setup,
                    "endpoints": [c.endpoint for c in declared],
                    "ready_path": schema_path,
                }
            ),
        )
        for turn in ("with the set-up init writes", "again, to see what differs between boots"):
            say(f"init: booting {turn}: {len(declared)} requests")
            with booted(checked) as (srv, client):
                asked = {
                    c.name: ask_endpoint(client, srv, checked.app, c.endpoint, srv.context)
                    for c in declared
                }
                if not answers:
                    _retry_unique(
                        declared,
                        asked,
                        lambda e: ask_endpoint(client, srv, checked.app, e, srv.context),
                    )
                answers.append(asked)
                _stop_when_all_failed(answers[-1], srv, probe.env)
        return found, _expectations(declared, answers), schema_path
    except BaseException:
        if created and where.app_dir.is_dir() and not any(where.app_dir.iterdir()):
            where.app_dir.rmdir()
        raise


def _variant(where: Layout, declaration: AppDeclaration) -> Variant:
    probe_app = App(declaration=declaration, directory=where.app_dir)
    if declaration.requirements:
        own_stack(probe_app, stop=where.root)  # names a line that is not an exact pin
    settings = ProjectSettings(apps=[where.listed()])
    project = Project(where.root, settings, load_stacks(where.root), (probe_app,))
    (variant,) = project.variants(["latest"])
    return variant


def _boot_failed(where: Layout, probe: AppDeclaration, import_string: str, exc: Any) -> str:
    if exc.phase == "setup":
        return f"{import_string}: the set-up init wrote failed on a fresh boot: {exc.reason}"
    unreachable = causes.database(exc.stderr_tail)
    missing = re.findall(r"ModuleNotFoundError: No module named '([\w.]+)'", exc.stderr_tail)
    if unreachable:
        hint = f"{unreachable}: {causes.database_fix(probe.env)}"
    elif missing:
        hint = (
            f"the app's environment has no module {missing[-1]!r}: its own requirements (uv.lock, "
            "requirements.txt) must pin what it imports, and the app folder is where its imports resolve "
            "from (benchwatch init <folder>)"
        )
    else:
        hint = "give settings with --env KEY=VALUE" if not probe.env else "check the --env settings"
    if not probe.pre_start and not unreachable and (where.folder / MIGRATION_CONFIG).is_file():
        hint += f"; {MIGRATION_CONFIG} is there: --migrate runs `alembic upgrade head` first"
    return f"{import_string} did not boot: {exc.reason} (its last lines above); {hint}"


def _schema(
    client: Any, srv: Any, variant: Variant, env: Any, import_string: str
) -> tuple[dict, str]:
    """The app's OpenAPI schema: at /openapi.json, else where the app object says it is
    (`app.openapi_url`, under its `root_path`), asked in the app's environment."""
    from benchwatch.measure.request import Prepared

    def get(path: str) -> Answer:
        return ask(client, srv, Prepared("GET", path, (), None, None))

    answer, path = get(OPENAPI_PATH), OPENAPI_PATH
    if answer.status != 200 or not isinstance(answer.first, dict):
        declared = _openapi_url(variant, env, srv.context)
        if declared and declared != OPENAPI_PATH:
            answer, path = get(declared), declared
        elif declared is None and answer.status == 404:
            raise UserError(
                f"{import_string}: the app serves no OpenAPI schema (openapi_url=None); init reads the "
                "endpoints from it: declare them by hand (docs/your-repository.md)"
            )
    if answer.status != 200 or not isinstance(answer.first, dict):
        got = f"answered {answer.status}" if answer.status else "gave no answer"
        raise UserError(
            f"{import_string}: GET {path} {got}{': ' + answer.error if answer.error else ''}; init "
            "needs the app's OpenAPI schema (FastAPI(openapi_url=...))"
        )
    return answer.first, path


def _openapi_url(variant: Variant, env: Any, context: Any) -> str | None:
    """`app.openapi_url` (after its `root_path`), asked of the app object in its environment; ""
    when it could not be asked."""
    import subprocess

    from benchwatch.measure.server_command import server_environment

    environ = server_environment(variant, env, context)
    try:
        done = subprocess.run(
            [str(env.python), "-c", _ASK_APP, variant.import_string],
            cwd=variant.app.root,
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        said = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return ""
    if not isinstance(said, dict) or "openapi_url" not in said:
        return ""
    url = said["openapi_url"]
    return None if url is None else (str(said.get("root_path") or "").rstrip("/") + str(url))


def _run_step(
    variant: Variant, step: SetupRequest, srv: Any, env: Any, context: Any
) -> dict[str, str]:
    """One set-up request against init's first boot, as every later boot will send it (a failure:
    measure.setup's SetupError)."""
    from benchwatch.measure.server_command import server_environment
    from benchwatch.measure.setup import run_setup

    alone = dataclasses.replace(
        variant,
        app=App(
            declaration=variant.app.declaration.model_copy(
                update={"setup": Setup(requests=[step])}
            ),
            directory=variant.app.directory,
        ),
        endpoints=(),
    )
    return run_setup(
        alone,
        srv.base_url,
        context,
        server_environment(variant, env, context),
        env.python,
        timeout=60,
    )


def _login_failed(where: Layout, probe: AppDeclaration, exc: Any, said: str) -> UserError:
    """The login's failure, by its cause: a database the app could not reach (said in its log), a
    user that nothing before the boot creates (refused: 400, 401, 403), else the server's own error."""
    failed = f"the login failed: {exc.reason}"
    unreachable = causes.database(said)
    if unreachable:
        show_tail(said)
        return UserError(
            f"{failed}: {unreachable} (the server's lines above); {causes.database_fix(probe.env)}"
        )
    if exc.status in (400, 401, 403):  # refused: these credentials are no user of the app
        why = causes.no_user(
            where.folder,
            probe.env,
            probe.pre_start,
            MIGRATE,
            plan.USER_VAR,
            plan.PASSWORD_VAR,
            fresh=probe.database is not None,
        )
        return UserError(
            f"{failed}: {plan.USER_VAR} and {plan.PASSWORD_VAR} are not a user of the app; {why}"
        )
    show_tail(said)
    error = causes.last_exception(said)
    shown = " (its last lines above)" if said.strip() else ""
    return UserError(f"{failed}{f': the server said {error}' if error else ''}{shown}")


def _stop_when_all_failed(answers: dict[str, Answer], srv: Any, env: dict[str, str]) -> None:
    """Every request answered 5xx or nothing: the app or its set-up is broken (a database that is
    not there, a migration not run), not the requests. Show the server's error; write nothing."""
    if not answers or not all(a.failed for a in answers.values()):
        return
    said = srv.stderr_tail()
    show_tail(said)
    errors = sorted({a.error or f"status {a.status}" for a in answers.values()})
    unreachable = causes.database(said)
    fix = (
        f"{unreachable}: {causes.database_fix(env)}"
        if unreachable
        else "fix that (--env, --migrate, --pre-start)"
    )
    raise UserError(
        f"every request init sent failed ({len(answers)}: {errors[0]}"
        f"{f' and {len(errors) - 1} other errors' if len(errors) > 1 else ''}): the app or its "
        f"settings are broken, so nothing is written; {fix}, then run init again"
    )


def _retry_unique(
    declared: list[plan.Candidate], asked: dict[str, Answer], send: Callable[[Endpoint], Answer]
) -> None:
    """A write that answered 2xx, then an error when sent again (a user whose e-mail exists now):
    sent again (twice) with its body's unique-key strings as `{unique}` (scaffold/unique.py's
    rule); when both sends answer 2xx, it is declared so, else it keeps its first answer (and reason)."""
    for cand in declared:
        answer = asked[cand.name]
        if not answer.again or cand.endpoint is None:
            continue
        made = unique.made_unique(cand.endpoint)
        if made is None:
            continue
        retried = send(made[0])
        if 200 <= retried.status < 300 and not retried.again:
            cand.endpoint, cand.unique = made
            asked[cand.name] = retried


def _expectations(
    declared: list[plan.Candidate], answers: list[dict[str, Answer]]
) -> dict[str, tuple[object, set[str]]]:
    """Each declared endpoint's expectation from what the two checking boots answered (both 2xx,
    the same status): its status and type, a GET's golden body; keys that differed within a boot
    or between the two are `volatile`. One that did not answer alike is left out, saying so."""
    goldens: dict[str, tuple[object, set[str]]] = {}
    first, second = answers
    for cand in declared:
        assert cand.endpoint is not None
        one, two = first[cand.name], second[cand.name]
        if not 200 <= one.status < 300 or one.status != two.status:
            cand.why = (one.said() if not 200 <= one.status < 300 else two.said()) + cand.guess
            continue
        if one.again or two.again:
            cand.why = (
                f"answered {one.status} at init, then {one.again or two.again} when sent again: "
                "repeated under load it measures errors"
            )
            continue
        golden = None
        volatile: set[str] = set()
        if one.content_type == "application/json" and cand.operation.method == "GET":
            golden = f"expected/{cand.name}.json"
            volatile = schema.differing_keys(one.first, one.second) | schema.differing_keys(
                one.first, two.first
            )
            goldens[golden] = (one.first, volatile)
        elif one.content_type == "application/json":
            volatile = schema.differing_keys(one.first, two.first) | schema.differing_keys(
                one.first, one.second
            )
        cand.endpoint = plan.with_expectation(
            cand.endpoint, one.status, one.content_type, golden, sorted(volatile)
        )
    return goldens

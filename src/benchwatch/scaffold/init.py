"""`benchwatch init`: find the app, boot it once, read its OpenAPI schema, write the
declarations, the golden bodies and the caller workflows. Never overwrites a file unless forced."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchwatch.config import APP_FILE, PROJECT_FILE, App, Project, _own_stack, load_stacks
from benchwatch.declarations import AppDeclaration, Endpoint, ProjectSettings
from benchwatch.errors import UserError
from benchwatch.scaffold import declare, discover, schema
from benchwatch.scaffold.workflows import TEMPLATES, caller_workflows, default_source

APP_DIR = "benchwatch"
OPENAPI_PATH = "/openapi.json"
REQUIREMENTS = ("requirements.txt", "requirements/base.txt", "requirements/prod.txt")


@dataclass
class Outcome:
    written: list[Path]
    declared: int  # endpoints declared (0: the app file holds commented examples only)
    variant: str


def init(
    root: Path, app: str | None = None, *, force: bool = False, workflows_from: str | None = None,
    python: str | None = None, say: Callable[[str], None] = print,
) -> Outcome:  # fmt: skip
    root = root.resolve()
    found = discover.find_app(root, app)
    app_dir = root / APP_DIR
    planned = [root / PROJECT_FILE, app_dir / APP_FILE] + [root / ".github" / "workflows" / n for n in TEMPLATES]
    existing = [p for p in planned if p.exists()]
    if existing and not force:
        raise UserError(f"{existing[0]} exists; init never overwrites a file (use --force to replace)")
    # pinned to a commit (a tag resolved with git) before anything is written
    workflows = caller_workflows(workflows_from or default_source())
    requirements = _pinned_requirements(root, say)
    name = re.sub(r"[^a-z0-9_]+", "_", root.name.lower()).strip("_") or "app"
    name = name if name[0].isalnum() else f"app_{name}"
    import_root = Path("..") / found.import_root
    say(f"init: app {found.import_string} ({found.source.relative_to(root)}), import root {import_root}")
    openapi, bodies = _boot_and_read(root, app_dir, name, found, import_root, requirements, python, say)
    operations = schema.operations(openapi)
    names = schema.endpoint_names([(o.method, o.path) for o in operations])
    declared: list[declare.Declared] = []
    left_out: list[tuple[str, schema.Operation, str]] = []
    goldens: dict[str, object] = {}
    for endpoint_name, operation in zip(names, operations, strict=True):
        if not operation.ready:
            left_out.append((endpoint_name, operation, "needs " + ", ".join(operation.needs or ["a body"])))
            continue
        status, content_type, first, second = bodies[operation.path]
        if status != 200:
            left_out.append((endpoint_name, operation, f"answered {status} at init"))
            continue
        item = declare.Declared(endpoint_name, operation, content_type)
        if content_type == "application/json":
            item.golden = f"expected/{endpoint_name}.json"
            item.volatile = sorted(schema.differing_keys(first, second))
            goldens[item.golden] = first
        declared.append(item)
    text = declare.AppText(
        name=name, import_string=found.import_string, root=str(import_root),
        requirements=f"../{requirements}" if requirements else None, python=python,
        declared=declared, left_out=left_out, env_names=discover.env_names(found),
        migrations=[m for m in ("alembic.ini", "migrations", "manage.py") if (root / m).exists()],
    )  # fmt: skip
    files = {
        root / PROJECT_FILE: declare.project_text(APP_DIR, uses_stacks=requirements is None),
        app_dir / APP_FILE: declare.app_text(text),
        **{app_dir / rel: json.dumps(body, indent=2, ensure_ascii=False) + "\n" for rel, body in goldens.items()},
        **{root / ".github" / "workflows" / n: t for n, t in workflows.items()},
    }
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    variant = f"{name}@{'own' if requirements else 'latest'}"
    return Outcome(written=list(files), declared=len(declared), variant=variant)


def _pinned_requirements(root: Path, say: Callable[[str], None]) -> str | None:
    """The first requirements file whose every line is an exact pin (name==version); a file
    with a line that is not is named, with the line, and the app runs on the `latest` stack."""
    for relative in REQUIREMENTS:
        path = root / relative
        if not path.is_file():
            continue
        lines = [ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines()]
        lines = [ln for ln in lines if ln and not ln.startswith("-")]
        loose = [ln for ln in lines if not re.fullmatch(r"[A-Za-z0-9._-]+(\[[^\]]*\])?\s*==\s*[0-9][0-9A-Za-z.+!-]*", ln)]
        if lines and not loose:
            return relative
        if loose:
            say(f"init: {relative}: {loose[0]!r} is not an exact pin (name==version), so the app runs on "
                "the `latest` stack; pin every line and set requirements = ... to use the file")  # fmt: skip
    return None


def _boot_and_read(
    root: Path, app_dir: Path, name: str, found: discover.FoundApp, import_root: Path,
    requirements: str | None, python: str | None, say: Callable[[str], None],
) -> tuple[dict, dict[str, tuple[int, str, object, object]]]:  # fmt: skip
    """Boot the app once on 127.0.0.1: its OpenAPI schema, and each parameter-free GET
    requested twice ({path: (status, content type, first body, second body)})."""
    import httpx

    from benchwatch import envs
    from benchwatch.measure import server

    probe = AppDeclaration(
        name=name, root=str(import_root), app=found.import_string, python=python,
        requirements=f"../{requirements}" if requirements else None,
        stacks=None if requirements else ["latest"], ready_path=OPENAPI_PATH,
        endpoints=[Endpoint(name="openapi", path=OPENAPI_PATH)],
    )  # fmt: skip
    created = not app_dir.exists()
    app_dir.mkdir(exist_ok=True)  # the probe sits where the app file will: relative paths mean the same
    try:
        probe_app = App(declaration=probe, directory=app_dir)
        if requirements:
            _own_stack(probe_app)  # names a line that is not an exact pin
        project = Project(root, ProjectSettings(apps=[APP_DIR]), load_stacks(root), (probe_app,))
        (variant,) = project.variants(["latest"])
        say(f"init: environment for {variant.id} ({variant.stack.description or variant.stack.name})")
        try:
            env = envs.ensure(variant.stack, requirements_file=variant.requirements_file)
        except envs.EnvError as exc:
            raise UserError(f"cannot build the app's environment: {exc}") from None
        say(f"init: booting {found.import_string} on 127.0.0.1 to read {OPENAPI_PATH}")
        try:
            with server.running(variant, env) as srv, httpx.Client(base_url=srv.base_url, timeout=30) as client:
                reply = client.get(OPENAPI_PATH)
                if reply.status_code != 200:
                    raise UserError(f"{found.import_string}: GET {OPENAPI_PATH} answered {reply.status_code}; "
                                    "init needs the app's OpenAPI schema (FastAPI(openapi_url=...))")  # fmt: skip
                openapi = reply.json()
                bodies = {}
                for operation in schema.operations(openapi):
                    if operation.ready:
                        bodies[operation.path] = _twice(client, operation.path)
        except server.BootError as exc:
            raise UserError(
                f"{found.import_string} did not boot: {exc.reason}; if it needs settings (a database "
                "URL), export them and re-run init, then put them in env = {...}"
            ) from None
        return openapi, bodies
    except BaseException:
        if created and not any(app_dir.iterdir()):
            app_dir.rmdir()
        raise


def _twice(client, path: str) -> tuple[int, str, object, object]:  # type: ignore[no-untyped-def]
    replies = [client.get(path) for _ in range(2)]
    content_type = replies[0].headers.get("content-type", "").split(";")[0].strip()
    if content_type != "application/json":
        return replies[0].status_code, content_type, None, None
    try:
        return replies[0].status_code, content_type, replies[0].json(), replies[1].json()
    except ValueError:
        return replies[0].status_code, content_type, None, None

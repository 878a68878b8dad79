"""`benchwatch init`: find the app, boot it, read its OpenAPI schema, write the declarations, the
golden bodies and the caller workflows. Never overwrites a file unless forced.

The app folder is where the app's imports resolve from (a scan from the repository root moves
there: `backend/` for `backend/app/main.py` importing `app.…`); benchwatch.toml and the workflows
go to the repository root, which git names (scaffold/layout.py).

What the boots run with comes from the options and the app's folder (scaffold/boot_settings.py);
the three boots read the schema and ask every request (scaffold/boots.py)."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwatch.declarations.apps import AppDeclaration
from benchwatch.declarations.requests import Endpoint
from benchwatch.environments.own_requirements import check_python
from benchwatch.errors import UserError
from benchwatch.figures.figure_key import variant_id
from benchwatch.measure.verify import golden_text
from benchwatch.project.files import APP_FILE, PROJECT_FILE
from benchwatch.scaffold import declare, discover
from benchwatch.scaffold import declared_requests as plan
from benchwatch.scaffold.boot_settings import (
    MIGRATION_CONFIG,
    env_references,
    per_boot_database,
    pinned_requirements,
    pre_start_command,
)
from benchwatch.scaffold.boots import OPENAPI_PATH, read_app
from benchwatch.scaffold.layout import Layout, ignore_outputs, project_with_app
from benchwatch.scaffold.workflows import caller_workflows, default_source
from benchwatch.whole_files import write_text_whole


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
    with env_references(dict(env or {}), literal_env or {}) as (env, referenced):
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
    env, database = per_boot_database(env, say)
    # pinned to a commit (a tag resolved with git) before anything is written
    source = workflows_from or default_source()
    project_file = where.root / PROJECT_FILE
    app_file = where.app_dir / APP_FILE
    if app_file.exists() and not force:
        raise UserError(f"{app_file} exists; init never overwrites a file (use --force to replace)")
    project_text = _project_text(where, project_file, force)
    before_boot = pre_start_command(where, found, migrate, pre_start)
    requirements = pinned_requirements(where, say)
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
    found_plan, goldens, schema_path = read_app(where, probe, found.import_string, can_login, say)
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

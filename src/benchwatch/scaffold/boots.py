"""init's three boots of the app on 127.0.0.1. The first reads the schema (the app's own
`openapi_url`), logs in when the schema has an OAuth2 password flow and the credentials are set,
and asks the parameter-free GETs (their lists give ids to path parameters); the next two run the
set-up init writes and send every request it would declare, so the golden bodies come from a boot
like verify's and the keys that differ between boots are `volatile` (scaffold/expectations.py)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from benchwatch.declarations.apps import AppDeclaration
from benchwatch.declarations.project_file import ProjectSettings
from benchwatch.declarations.requests import Endpoint
from benchwatch.declarations.setup import Setup, SetupRequest
from benchwatch.errors import UserError
from benchwatch.project.apps import App, own_stack
from benchwatch.project.stacks import load_stacks
from benchwatch.project.variants import Project, Variant
from benchwatch.scaffold import declared_requests as plan
from benchwatch.scaffold.causes import boot_failed, login_failed, stop_when_all_failed
from benchwatch.scaffold.expectations import expectations_of, retry_unique
from benchwatch.scaffold.layout import Layout
from benchwatch.scaffold.path_params import fill_path_params
from benchwatch.scaffold.probe import Answer, ask, ask_endpoint, server_error, show_tail

OPENAPI_PATH = "/openapi.json"
_ASK_APP = (
    "import importlib, json, sys\nmodule, _, name = sys.argv[1].partition(':')\n"
    "app = getattr(importlib.import_module(module), name)\n"
    "print(); print(json.dumps({'openapi_url': app.openapi_url, 'root_path': app.root_path}))\n"
)


def read_app(
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
                raise UserError(boot_failed(where, probe, import_string, exc)) from None

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
                    raise login_failed(where, probe, exc, srv.stderr_tail()) from None
            first = {}
            for cand in [
                c
                for c in found.candidates
                if c.endpoint is not None
                and c.param is None
                and c.operation.method == "GET"
                and not c.why
            ]:
                first[cand.name] = ask_endpoint(client, srv, variant.app, _endpoint(cand), context)
            stop_when_all_failed(first, srv, probe.env)
            lists = {
                c.operation.path: first[c.name].first
                for c in found.candidates
                if c.name in first and 200 <= first[c.name].status < 300
            }
            for cand in found.candidates:
                if cand.name in first and not 200 <= first[cand.name].status < 300:
                    cand.why = first[cand.name].said()
            fill_path_params(found, lists)
            for source in found.sources:
                try:
                    context = context.with_setup(_run_step(variant, source, srv, env, context))
                except SetupError as exc:
                    failed[source.name] = exc.reason
            plan.without_failed_steps(found, failed)
        declared = plan.in_order([c for c in found.candidates if c.declared])
        if not declared:
            return found, {}, schema_path
        answers: list[dict[str, Answer]] = []
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
                    c.name: ask_endpoint(client, srv, checked.app, _endpoint(c), srv.context)
                    for c in declared
                }
                if not answers:
                    retry_unique(
                        declared,
                        asked,
                        lambda e: ask_endpoint(client, srv, checked.app, e, srv.context),
                    )
                answers.append(asked)
                stop_when_all_failed(answers[-1], srv, probe.env)
        return found, expectations_of(declared, answers), schema_path
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


def _endpoint(cand: plan.Candidate) -> Endpoint:
    """A candidate's request: every candidate asked for has one (declared, or a GET to try)."""
    assert cand.endpoint is not None, cand.name
    return cand.endpoint

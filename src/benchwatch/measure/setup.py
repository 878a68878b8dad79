"""An app's set-up, run on every boot once the server answers and before anything is verified or
measured: its requests (a login, a record created) in order, and its seed (a command or a Python
callable in the app's environment), each value it yields becoming `{setup.NAME}` for this boot."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from benchwatch.declarations.apps import declared_strings
from benchwatch.declarations.placeholders import Context, Unresolved, refs, resolve
from benchwatch.declarations.redaction import redact, remember_setup
from benchwatch.declarations.setup import SetupRequest
from benchwatch.measure.request import prepare
from benchwatch.project.variants import Variant

BASE_URL_ENV = "BENCHWATCH_BASE_URL"
VALUE_ENV_PREFIX = "BENCHWATCH_SETUP_"
SNIPPET = 160
# how a `callable` is run: imported from the app's root in its environment, called, its dict printed
_CALL = (
    "import asyncio, importlib, inspect, json, sys\n"
    "module, _, name = sys.argv[1].partition(':')\n"
    "found = getattr(importlib.import_module(module), name)()\n"
    "if inspect.isawaitable(found):\n"
    "    async def wait(): return await found\n"
    "    found = asyncio.run(wait())\n"
    "print(); print(json.dumps(found if found is not None else {}, default=str))\n"
)


class SetupError(Exception):
    """A set-up step that failed: which step, why (status or exit code), and its output's tail."""

    def __init__(self, step: str, reason: str, tail: str = "", status: int | None = None) -> None:
        super().__init__(f"set-up {step}: {reason}")
        self.step = step
        self.reason = redact(reason)
        self.tail = redact(tail)
        self.status = status  # a request's answer that was not the one wanted; None: no answer, or not a request


def run_setup(
    variant: Variant,
    base_url: str,
    context: Context,
    environ: Mapping[str, str],
    python: Path,
    timeout: float,
) -> dict[str, str]:
    """Every set-up step against the server at `base_url`; the values they gave. `timeout`: seconds
    for the whole set-up (a server under valgrind answers slowly)."""
    setup = variant.app.declaration.setup
    values: dict[str, str] = {}
    if setup is None:
        return values
    deadline = time.monotonic() + timeout
    seed = [None] if setup.seeds else []
    steps: list[SetupRequest | None] = (
        [*seed, *setup.requests] if setup.command_first else [*setup.requests, *seed]
    )
    # plain HTTP on loopback: no proxy from the environment, no certificates to load
    with httpx.Client(base_url=base_url, trust_env=False, verify=False) as client:
        for step in steps:
            left = max(1.0, deadline - time.monotonic())
            here = context.with_setup(values)
            if step is None:
                values.update(_seed(variant, base_url, here, environ, python, left))
            else:
                values.update(_request(client, variant, step, here, left))
            remember_setup(values)  # a login's token is kept out of what benchwatch writes
            if time.monotonic() > deadline:
                raise SetupError("timeout", f"took over {timeout:g} s (setup.timeout)")
    _check_endpoints(variant, context.with_setup(values))
    return values


def _request(
    client: httpx.Client, variant: Variant, step: SetupRequest, context: Context, timeout: float
) -> dict[str, str]:
    name = f"request {step.name!r}"
    try:
        prepared = prepare(variant.app, step, context)
    except Unresolved as exc:
        raise SetupError(name, str(exc)) from None
    try:
        response = client.request(
            prepared.method,
            prepared.target,
            content=prepared.body,
            headers=prepared.header_dict(),
            timeout=timeout,
        )
    except httpx.HTTPError as exc:
        raise SetupError(
            name, f"{step.method} {step.path}: no answer ({type(exc).__name__})"
        ) from None
    wanted = step.expect_status
    if (wanted is None and not 200 <= response.status_code < 300) or (
        wanted is not None and response.status_code != wanted
    ):
        snippet = redact(response.text[:2000].replace("\n", " "))[
            :SNIPPET
        ]  # a secret redacted whole, then cut
        want = f"want {wanted}" if wanted is not None else "want 2xx"
        raise SetupError(
            name,
            f"{step.method} {step.path}: status {response.status_code}, {want} ({snippet})",
            status=response.status_code,
        )
    if not step.save:
        return {}
    try:
        answer = response.json()
    except ValueError:
        raise SetupError(
            name, f"{step.method} {step.path}: the answer is not JSON, so nothing to save"
        ) from None
    return {key: _dig(answer, dotted, name) for key, dotted in step.save.items()}


def _dig(answer: Any, dotted: str, step: str) -> str:
    """The value at a dotted path of a JSON answer (`data.0.id`), as text."""
    found = answer
    for part in dotted.split("."):
        if isinstance(found, dict) and part in found:
            found = found[part]
        elif isinstance(found, list) and part.isdigit() and int(part) < len(found):
            found = found[int(part)]
        else:
            keys = ", ".join(map(str, found)) if isinstance(found, dict) else type(found).__name__
            raise SetupError(step, f"the answer has no {dotted!r} to save (at {part!r}: {keys})")
    if found is None:
        raise SetupError(step, f"the answer's {dotted!r} is null")
    if isinstance(found, bool):
        return "true" if found else "false"
    return found if isinstance(found, str) else json.dumps(found)


def _seed(
    variant: Variant,
    base_url: str,
    context: Context,
    environ: Mapping[str, str],
    python: Path,
    timeout: float,
) -> dict[str, str]:
    setup = variant.app.declaration.setup
    assert setup is not None
    if setup.command is not None:
        name = "command"
        try:
            argv = [resolve(arg, context) for arg in setup.command]
        except Unresolved as exc:
            raise SetupError(name, str(exc)) from None
    else:
        name = f"callable {setup.callable}"
        argv = [str(python), "-c", _CALL, str(setup.callable)]
    env = {
        **environ,
        BASE_URL_ENV: base_url,
        **{VALUE_ENV_PREFIX + key.upper(): value for key, value in context.setup.items()},
    }
    try:
        done = subprocess.run(
            argv,
            cwd=variant.app.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise SetupError(name, f"still running after {timeout:.0f} s (setup.timeout)") from None
    except OSError as exc:
        raise SetupError(name, f"could not start {argv[0]!r}: {exc.strerror or exc}") from None
    output = (done.stderr.strip() + "\n" + done.stdout.strip()).strip()
    tail = "\n".join(output.splitlines()[-12:])
    if done.returncode != 0:
        raise SetupError(name, f"exited with {done.returncode}", tail)
    lines = done.stdout.strip().splitlines()
    return _values(lines[-1] if lines else "", name, tail, strict=setup.callable is not None)


def _values(line: str, step: str, tail: str, *, strict: bool) -> dict[str, str]:
    """A last line that is a JSON object of strings and numbers, as set-up values; another last
    line adds none (a command need not print any), except from a callable, which must return one."""
    try:
        found = json.loads(line)
    except ValueError:
        found = None
    if isinstance(found, dict) and all(
        isinstance(v, str | int | float) and not isinstance(v, bool) for v in found.values()
    ):
        return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in found.items()}
    if strict:
        raise SetupError(step, "did not return a dict of strings and numbers", tail)
    return {}


def _check_endpoints(variant: Variant, context: Context) -> None:
    """Every `{setup.NAME}` the variant's endpoints use has a value now: one step's problem, not
    an error per request later."""
    for where, text in declared_strings(
        variant.app.declaration, list(variant.endpoints), variant.flavor
    ):
        if not where.startswith("endpoints."):
            continue
        for ref in refs(text):
            if ref.kind == "setup" and ref.name not in context.setup:
                given = ", ".join(sorted(context.setup)) or "none"
                raise SetupError(
                    "values", f"{where} needs {ref.text}, which no step gave (they gave: {given})"
                )

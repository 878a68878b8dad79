"""Check every endpoint's answer before any load is sent: a fast wrong answer is a failure."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from benchwatch.declarations.placeholders import (
    Context,
    PlaceholderError,
    Unresolved,
    as_references,
    resolve_tree,
)
from benchwatch.declarations.redaction import redact
from benchwatch.declarations.requests import Endpoint
from benchwatch.measure.request import prepare
from benchwatch.project.variants import Variant
from benchwatch.results.schema import Problem

if TYPE_CHECKING:
    from benchwatch.measure.server import Server

MISSING = object()


@dataclass
class Checked:
    """What one variant answered: problems, and each endpoint's masked body for cross-checks."""

    variant: str
    problems: list[Problem] = field(default_factory=list)
    bodies: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def mask(value: Any, volatile: set[str]) -> Any:
    if isinstance(value, dict):
        return {
            k: f"<{type(v).__name__}>" if k in volatile else mask(v, volatile)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [mask(v, volatile) for v in value]
    return value


def golden_text(body: Any, volatile: set[str] | frozenset[str] = frozenset()) -> str:
    """A golden body as its file holds it: volatile keys masked (they are masked when compared,
    and a token is not kept), every secret as its `${NAME}` (placeholders.as_references)."""
    return json.dumps(as_references(mask(body, set(volatile))), indent=2, ensure_ascii=False) + "\n"


def expected_body(endpoint: Endpoint, variant: Variant, context: Context) -> Any:
    """An endpoint's golden body with this boot's values in it (the `${NAME}`s it holds resolved,
    so a CI user other than init's compares equal); Unresolved when one is not set."""
    assert endpoint.expect.json_file is not None
    return resolve_tree(
        json.loads(variant.app.file(endpoint.expect.json_file).read_text()), context
    )


def first_difference(got: Any, want: Any, path: str = "$") -> str | None:
    if type(got) is not type(want):
        return f"{path}: got {type(got).__name__}, want {type(want).__name__}"
    if isinstance(want, dict):
        for key in want:
            if key not in got:
                return f"{path}.{key}: missing"
        for key in got:
            if key not in want:
                return f"{path}.{key}: unexpected key"
            found = first_difference(got[key], want[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{path}: {len(got)} items, want {len(want)}"
        for index, (g, w) in enumerate(zip(got, want, strict=True)):
            found = first_difference(g, w, f"{path}[{index}]")
            if found:
                return found
        return None
    if got != want:
        return f"{path}: got {_short(got)}, want {_short(want)}"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_endpoint(client: httpx.Client, srv: Server, endpoint: Endpoint) -> tuple[str | None, Any]:
    """(reason it is wrong or None, masked body), the request made in the boot's context."""
    expect = endpoint.expect
    variant = srv.variant
    sent = prepare(variant.app, endpoint, srv.context)
    try:
        response = client.request(
            sent.method, sent.target, content=sent.body, headers=sent.header_dict()
        )
    except httpx.HTTPError as exc:
        return f"request failed: {type(exc).__name__}: {redact(str(exc))}", MISSING
    if response.status_code != expect.status:
        snippet = redact(response.text[:2000].replace("\n", " "))[
            :120
        ]  # a secret redacted whole, then cut
        return f"status {response.status_code}, want {expect.status} ({snippet})", MISSING
    media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != expect.content_type.lower():
        return f"content type {media_type or 'none'!r}, want {expect.content_type!r}", MISSING
    size = len(response.content)
    if expect.min_bytes is not None and size < expect.min_bytes:
        return f"body is {size} bytes, want at least {expect.min_bytes}", MISSING
    if expect.max_bytes is not None and size > expect.max_bytes:
        return f"body is {size} bytes, want at most {expect.max_bytes}", MISSING
    if not media_type.endswith("json"):
        return None, response.content
    try:
        body = json.loads(response.content)
    except ValueError:
        return "body is not valid JSON", MISSING
    masked = mask(body, set(expect.volatile))
    if expect.json_file:
        try:
            want = mask(expected_body(endpoint, variant, srv.context), set(expect.volatile))
        except (Unresolved, PlaceholderError) as exc:
            return f"{expect.json_file}: {exc}", masked
        difference = first_difference(masked, want)
        if difference:
            return f"body differs from {expect.json_file}: {difference}", masked
    return None, masked


def check_server(srv: Server, endpoints: tuple[Endpoint, ...] | None = None) -> Checked:
    """Every endpoint's answer (the variant's, or `endpoints`); a wrong one is a problem that
    carries the server's last error (its traceback after a 5xx)."""
    variant = srv.variant
    checked = Checked(variant.id)
    with httpx.Client(base_url=srv.base_url, timeout=60.0) as client:
        for endpoint in endpoints or variant.endpoints:
            reason, body = check_endpoint(client, srv, endpoint)
            reason = redact(reason) if reason else None  # a body's difference quotes the server
            if reason:
                checked.problems.append(
                    Problem(
                        variant=variant.id,
                        phase="verify",
                        endpoint=endpoint.label,
                        reason=reason,
                        detail=srv.last_error() if reason.startswith("status 5") else "",
                    )
                )
            if body is not MISSING:
                checked.bodies[endpoint.name] = body
    return checked


def cross_check(variants: list[Variant], checks: dict[str, Checked]) -> list[Problem]:
    """Every variant of one app must serve the same (masked) body per endpoint."""
    groups: dict[tuple[str, str], list[tuple[Variant, Any]]] = defaultdict(list)
    for variant in variants:
        checked = checks.get(variant.id)
        if checked is None:
            continue
        for endpoint in variant.endpoints:
            if endpoint.name in checked.bodies:
                groups[(variant.app.name, endpoint.name)].append(
                    (variant, checked.bodies[endpoint.name])
                )
    problems = []
    for (_app, _endpoint_name), answers in groups.items():
        reference_variant, reference = answers[0]
        for variant, body in answers[1:]:
            difference = first_difference(body, reference)
            if difference:
                endpoint = next(e for e in variant.endpoints if e.name == _endpoint_name)
                problems.append(
                    Problem(
                        variant=variant.id,
                        phase="verify",
                        endpoint=endpoint.label,
                        reason=f"body differs from {reference_variant.id}: {difference}",
                    )
                )
    return problems


def verify_variants(
    variants: list[Variant], quiet: bool = False
) -> tuple[dict[str, Checked], list[Problem]]:
    """Boot each variant in turn, check every endpoint, stop it; then cross-check the bodies."""
    from benchwatch.environments import envs
    from benchwatch.measure import launch, preflight, server
    from benchwatch.progress import Progress

    preflight.check(variants)
    progress = Progress(len(variants), quiet=quiet)
    ready, failed = envs.prepare(variants)
    server_cores, _ = server.cpu_plan()
    checks: dict[str, Checked] = {}
    problems: list[Problem] = []
    for variant in variants:
        progress.step(variant.id, "verify")
        if variant.env_key in failed:
            problems.append(
                Problem(variant=variant.id, phase="env", reason=failed[variant.env_key])
            )
        else:
            try:
                with launch.running(
                    variant, ready[variant.env_key], launch.ServerOptions(cpu=server_cores)
                ) as srv:
                    checked = check_server(srv)
                    if not srv.alive():
                        checked.problems.append(
                            Problem(
                                variant=variant.id,
                                phase="verify",
                                reason="server died during verify",
                                detail=srv.stderr_tail(),
                            )
                        )
                checks[variant.id] = checked
                problems.extend(checked.problems)
            except server.BootError as exc:
                problems.append(
                    Problem(
                        variant=variant.id,
                        phase=exc.phase,
                        reason=exc.reason,
                        detail=exc.stderr_tail,
                    )
                )
        progress.advance()
    problems.extend(cross_check(variants, checks))
    return checks, problems

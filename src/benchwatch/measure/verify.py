"""Check every endpoint's answer before any load is sent: a fast wrong answer is a failure."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import httpx

from benchwatch.config import Endpoint, Variant
from benchwatch.results import Problem

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


def request_body(variant: Variant, endpoint: Endpoint) -> bytes | None:
    if endpoint.body_file:
        return variant.app.file(endpoint.body_file).read_bytes()
    return endpoint.body.encode() if endpoint.body is not None else None


def request_headers(endpoint: Endpoint) -> dict[str, str]:
    return {"content-type": endpoint.content_type} if endpoint.content_type else {}


def mask(value: Any, volatile: set[str]) -> Any:
    if isinstance(value, dict):
        return {
            k: f"<{type(v).__name__}>" if k in volatile else mask(v, volatile)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [mask(v, volatile) for v in value]
    return value


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


def check_endpoint(client: httpx.Client, variant: Variant, endpoint: Endpoint) -> tuple[str | None, Any]:
    """(reason it is wrong or None, masked body)."""
    expect = endpoint.expect
    try:
        response = client.request(
            endpoint.method,
            endpoint.url_path,
            content=request_body(variant, endpoint),
            headers=request_headers(endpoint),
        )
    except httpx.HTTPError as exc:
        return f"request failed: {type(exc).__name__}: {exc}", MISSING
    if response.status_code != expect.status:
        snippet = response.text[:120].replace("\n", " ")
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
        want = mask(json.loads(variant.app.file(expect.json_file).read_text()), set(expect.volatile))
        difference = first_difference(masked, want)
        if difference:
            return f"body differs from {expect.json_file}: {difference}", masked
    return None, masked


def check_server(base_url: str, variant: Variant, endpoints: tuple[Endpoint, ...] | None = None) -> Checked:
    checked = Checked(variant.id)
    with httpx.Client(base_url=base_url, timeout=60.0) as client:
        for endpoint in endpoints or variant.endpoints:
            reason, body = check_endpoint(client, variant, endpoint)
            if reason:
                checked.problems.append(
                    Problem(variant=variant.id, phase="verify", endpoint=endpoint.label, reason=reason)
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
                groups[(variant.app.name, endpoint.name)].append((variant, checked.bodies[endpoint.name]))
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


def verify_variants(variants: list[Variant], quiet: bool = False) -> tuple[dict[str, Checked], list[Problem]]:
    """Boot each variant in turn, check every endpoint, stop it; then cross-check the bodies."""
    from benchwatch import envs
    from benchwatch.measure import server
    from benchwatch.progress import Progress

    progress = Progress(len(variants), quiet=quiet)
    ready, failed = envs.prepare(variants)
    server_cores, _ = server.cpu_plan()
    checks: dict[str, Checked] = {}
    problems: list[Problem] = []
    for variant in variants:
        progress.step(variant.id, "verify")
        if variant.env_key in failed:
            problems.append(Problem(variant=variant.id, phase="env", reason=failed[variant.env_key]))
        else:
            try:
                with server.running(variant, ready[variant.env_key], cpu=server_cores) as srv:
                    checked = check_server(srv.base_url, variant)
                    if not srv.alive():
                        checked.problems.append(
                            Problem(variant=variant.id, phase="verify", reason="server died during verify",
                                    detail=srv.stderr_tail())
                        )  # fmt: skip
                checks[variant.id] = checked
                problems.extend(checked.problems)
            except server.BootError as exc:
                problems.append(
                    Problem(variant=variant.id, phase="boot", reason=exc.reason, detail=exc.stderr_tail)
                )
        progress.advance()
    problems.extend(cross_check(variants, checks))
    return checks, problems

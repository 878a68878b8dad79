"""`benchwatch verify --record`: the golden bodies written again from what the app answers now,
the declaration left as it is but for `volatile`. Each app's first variant is booted twice and
every endpoint with a golden body asked twice per boot, as init does (scaffold/probe.py): a key
whose value differed is volatile, added to the endpoint's `volatile` (never removed from it)."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwatch.declarations.redaction import redact
from benchwatch.declarations.requests import Endpoint
from benchwatch.project.variants import Variant
from benchwatch.results.schema import Problem
from benchwatch.whole_files import write_text_whole


@dataclass
class Recorded:
    """What one app's recording wrote, or the problems that kept it from writing."""

    app: str
    written: list[Path] = field(default_factory=list)
    volatile: dict[str, list[str]] = field(
        default_factory=dict
    )  # endpoint -> keys found volatile now
    problems: list[Problem] = field(default_factory=list)


def recordable(variant: Variant) -> list[Endpoint]:
    return [e for e in variant.endpoints if e.expect.json_file]


def record_variants(variants: list[Variant], quiet: bool = False) -> list[Recorded]:
    """One variant per app (the first selected): its golden bodies recorded again. An app whose
    boot or any endpoint's answer fails writes nothing."""
    from benchwatch.environments import envs
    from benchwatch.measure import launch, preflight, server

    firsts = list({v.app.name: v for v in reversed(variants)}.values())[::-1]
    firsts = [v for v in firsts if recordable(v)]
    preflight.check(firsts)
    ready, failed = envs.prepare(firsts)
    done = []
    for variant in firsts:
        if not quiet:
            print(
                f"record: {variant.id}: booting twice, {len(recordable(variant))} golden bodies",
                flush=True,
            )
        outcome = Recorded(variant.app.name)
        if variant.env_key in failed:
            outcome.problems.append(
                Problem(variant=variant.id, phase="env", reason=failed[variant.env_key])
            )
        else:
            try:
                answers = [_ask_all(variant, ready[variant.env_key], launch) for _ in range(2)]
            except server.BootError as exc:
                outcome.problems.append(
                    Problem(
                        variant=variant.id,
                        phase=exc.phase,
                        reason=exc.reason,
                        detail=exc.stderr_tail,
                    )
                )
            else:
                _write(variant, answers, outcome)
        done.append(outcome)
    return done


def _ask_all(variant: Variant, env: Any, launch: Any) -> dict[str, Any]:
    import httpx

    from benchwatch.scaffold.probe import ask_endpoint

    with (
        launch.running(variant, env) as srv,
        httpx.Client(
            base_url=srv.base_url, timeout=60, trust_env=False, headers={"Connection": "close"}
        ) as client,
    ):
        return {
            e.name: ask_endpoint(client, srv, variant.app, e, srv.context)
            for e in recordable(variant)
        }


def _write(variant: Variant, answers: list[dict[str, Any]], outcome: Recorded) -> None:
    from benchwatch.measure.verify import golden_text
    from benchwatch.scaffold.expectations import differing_keys

    first, second = answers
    files: dict[Path, str] = {}
    for endpoint in recordable(variant):
        one, two = first[endpoint.name], second[endpoint.name]
        wrong = next((a for a in (one, two) if a.status != endpoint.expect.status or a.again), None)
        if wrong is not None:
            said = f"then {wrong.again}" if wrong.again else redact(wrong.said())
            outcome.problems.append(
                Problem(
                    variant=variant.id,
                    phase="verify",
                    endpoint=endpoint.label,
                    reason=f"{said}, want {endpoint.expect.status}: nothing recorded",
                )
            )
            continue
        if one.content_type != "application/json":
            outcome.problems.append(
                Problem(
                    variant=variant.id,
                    phase="verify",
                    endpoint=endpoint.label,
                    reason=f"answered {one.content_type or 'no'} content, not JSON: nothing "
                    "recorded",
                )
            )
            continue
        found = differing_keys(one.first, one.second) | differing_keys(one.first, two.first)
        new = sorted(found - set(endpoint.expect.volatile))
        if new:
            outcome.volatile[endpoint.name] = new
        assert endpoint.expect.json_file is not None
        files[variant.app.file(endpoint.expect.json_file)] = golden_text(
            one.first, found | set(endpoint.expect.volatile)
        )
    if outcome.problems:
        return
    declaration = variant.app.directory / "benchwatch-app.toml"
    if outcome.volatile:
        text = declaration.read_text()
        changed = with_volatile(
            text,
            {n: sorted(set(k) | set(_declared(variant, n))) for n, k in outcome.volatile.items()},
        )
        if changed is None:
            shown = "; ".join(f"{n}: {', '.join(k)}" for n, k in outcome.volatile.items())
            outcome.problems.append(
                Problem(
                    variant=variant.id,
                    phase="verify",
                    reason=(
                        f"keys differed between requests or boots and are not volatile ({shown}); {declaration.name} "
                        "does not declare them in the [endpoints.expect] form init writes: add them to each endpoint's "
                        "`volatile`, then record again"
                    ),
                )
            )
            return
        files[declaration] = changed
    for path, text in files.items():
        write_text_whole(path, text)
        outcome.written.append(path)


def _declared(variant: Variant, name: str) -> list[str]:
    return next(list(e.expect.volatile) for e in variant.endpoints if e.name == name)


_TABLE = re.compile(r"^\s*\[")
_NAME = re.compile(r'^\s*name\s*=\s*"([^"]*)"')
_VOLATILE = re.compile(r"^\s*volatile\s*=")


def with_volatile(text: str, volatile: dict[str, list[str]]) -> str | None:
    """The declaration's text with each named endpoint's `volatile = [...]` line (in its
    `[endpoints.expect]` table, as init writes it) set to the keys given; None when an endpoint's
    table is not in that form, or the result would say anything else than the text did."""
    lines = text.splitlines()
    todo = dict(volatile)
    endpoint: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.strip() == "[[endpoints]]":
            endpoint = None
        elif (named := _NAME.match(line)) and endpoint is None:
            endpoint = named.group(1)
        elif line.strip() == "[endpoints.expect]" and endpoint in todo:
            keys = todo.pop(endpoint)
            value = f"volatile = [{', '.join(json.dumps(k) for k in keys)}]  # differed between requests or boots"
            end = index + 1
            while end < len(lines) and not _TABLE.match(lines[end]):
                end += 1
            at = next((i for i in range(index + 1, end) if _VOLATILE.match(lines[i])), None)
            if at is None:
                lines.insert(index + 1, value)
            elif lines[at].rstrip().endswith("]") or "]" in lines[at].split("#", 1)[0]:
                lines[at] = value
            else:
                return None  # an array over several lines
        index += 1
    if todo:
        return None
    changed = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
    before, after = tomllib.loads(text), tomllib.loads(changed)
    for entry in after.get("endpoints", []):
        if entry.get("name") in volatile:
            entry.get("expect", {}).pop("volatile", None)
    for entry in before.get("endpoints", []):
        if entry.get("name") in volatile:
            entry.get("expect", {}).pop("volatile", None)
    return changed if before == after else None

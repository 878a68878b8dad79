"""What every command that boots servers checks before the first boot (and before it writes
anything): each `${NAME}` its variants use is set, and a database cluster can be had for the apps
that declare one. One `ERROR:` line naming the file and key, exit 3. Or, asked (`compare
--skip-unset`: a fork's pull request gets no secrets), what needs an unset `${NAME}` is left out
and said (`without_unset`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from benchwatch.declarations.apps import declared_strings
from benchwatch.declarations.placeholders import app_environ, refs
from benchwatch.declarations.redaction import remember
from benchwatch.declarations.requests import request_strings
from benchwatch.errors import UserError
from benchwatch.measure.server_command import refused_setting
from benchwatch.project.files import APP_FILE
from benchwatch.project.variants import Variant


def check(variants: Iterable[Variant]) -> None:
    seen: set[tuple] = set()
    databases: list[Variant] = []
    environ = app_environ()  # a runner's GITHUB_*, ACTIONS_*, RUNNER_* are never an app's
    for variant in variants:
        key = (variant.app.directory, variant.flavor, tuple(e.name for e in variant.endpoints))
        if key in seen:
            continue
        seen.add(key)
        path = variant.app.directory / APP_FILE
        for (
            name
        ) in variant.env:  # a variable benchwatch gives the server itself is not an app's setting
            refused = refused_setting(name)
            if refused:
                raise UserError(f"{path}: env.{name}: {refused}; remove it")
        for where, text in declared_strings(
            variant.app.declaration, list(variant.endpoints), variant.flavor
        ):
            for ref in refs(text):
                if ref.kind != "env":
                    continue
                value = environ.get(ref.name)
                if value is None:
                    raise UserError(f"{path}: {where}: {ref.text} is not set in the environment")
                remember(ref.name, value)
        if variant.app.declaration.database is not None:
            databases.append(variant)
    if databases:
        from benchwatch.measure import database

        database.require(f'{databases[0].app.directory / APP_FILE}: database = "postgresql"')


# --- what needs no unset ${NAME}: a fork's pull request, which GitHub gives no secrets ----------


@dataclass(frozen=True)
class Skipped:
    """Endpoints of a variant left out because they need a `${NAME}` that is not set here."""

    variant: str
    endpoints: tuple[str, ...]  # their labels
    why: str


def without_unset(
    variant: Variant, environ: Mapping[str, str] | None = None
) -> tuple[Variant | None, list[Skipped]]:
    """The variant narrowed to what needs no `${NAME}` unset in `environ` (default: the apps'
    environment), and what was left out with why. Its boot (env, pre_start, the set-up command)
    needing one leaves out the whole variant; a set-up request needing one is dropped, with every
    later request and endpoint that uses a `{setup.NAME}` it saves; an endpoint needing one is
    left out. None: nothing of it is left."""
    environ = app_environ() if environ is None else environ
    decl, path = variant.app.declaration, variant.app.directory / APP_FILE
    labels = tuple(e.label for e in variant.endpoints)

    def unset(strings: Iterable[tuple[str, str]]) -> str | None:
        for where, text in strings:
            for ref in refs(text):
                if ref.kind == "env" and ref.name not in environ:
                    return (
                        f"needs {ref.text} ({path.parent.name}/{APP_FILE}: {where}), not set here"
                    )
        return None

    booting = [
        (w, t)
        for w, t in declared_strings(decl, [], variant.flavor)
        if not w.startswith("setup.requests.")
    ]
    why = unset(booting)
    if why is not None:
        return None, [Skipped(variant.id, labels, why)]
    lost: dict[str, str] = {}  # a set-up value no request gives now -> why
    kept_requests = []
    for request in decl.setup.requests if decl.setup is not None else []:
        strings = list(request_strings(request, f"setup.requests.{request.name}"))
        why = unset(strings) or _uses(strings, lost)
        if why is None:
            kept_requests.append(request)
            continue
        for name in request.save:
            lost[name] = f"the set-up request {request.name}, which {why}"
    skipped: dict[str, list[str]] = {}
    kept = []
    for endpoint in variant.endpoints:
        strings = list(request_strings(endpoint, f"endpoints.{endpoint.name}"))
        why = unset(strings) or _uses(strings, lost)
        if why is None:
            kept.append(endpoint)
        else:
            skipped.setdefault(why, []).append(endpoint.label)
    found = [Skipped(variant.id, tuple(each), why) for why, each in skipped.items()]
    if not kept:
        return None, found
    if decl.setup is not None and len(kept_requests) < len(decl.setup.requests):
        setup = decl.setup.model_copy(update={"requests": kept_requests})
        app = dataclasses.replace(variant.app, declaration=decl.model_copy(update={"setup": setup}))
        variant = dataclasses.replace(variant, app=app)
    quick = tuple(e for e in variant.quick_endpoints if e in kept)
    return dataclasses.replace(variant, endpoints=tuple(kept), quick_endpoints=quick), found


def _uses(strings: list[tuple[str, str]], lost: Mapping[str, str]) -> str | None:
    for _, text in strings:
        for ref in refs(text):
            if ref.kind == "setup" and ref.name in lost:
                return f"needs {ref.text} from {lost[ref.name]}"
    return None


def pairs_without_unset(
    pairs: Iterable[tuple[Variant, Variant]],
) -> tuple[list[tuple[Variant, Variant]], list[Skipped]]:
    """compare's (base, head) pairs narrowed by `without_unset` on both sides: an endpoint left
    out on either side is left out on both (the pair measures the same requests); a pair with
    nothing left is dropped. The skipped are named by head's variant, as coverage names them."""
    kept, skipped = [], []
    for base, head in pairs:
        (narrow_base, base_skipped), (narrow_head, head_skipped) = (
            without_unset(base),
            without_unset(head),
        )
        why: dict[str, str] = {}
        for each in head_skipped + base_skipped:
            for label in each.endpoints:
                why.setdefault(label, each.why)
        labels = list(
            dict.fromkeys([*(e.label for e in head.endpoints), *(e.label for e in base.endpoints)])
        )
        if narrow_base is not None and narrow_head is not None:
            narrow_base, narrow_head = (
                _without(narrow_base, set(why)),
                _without(narrow_head, set(why)),
            )
        if (
            narrow_base is None
            or narrow_head is None
            or not narrow_base.endpoints
            or not narrow_head.endpoints
        ):
            gone = (
                (narrow_head is None and head_skipped)
                or (narrow_base is None and base_skipped)
                or []
            )
            whole = gone[0].why if gone else "nothing else of the pair is left to measure"
            why = {label: why.get(label, whole) for label in labels}
        else:
            kept.append((narrow_base, narrow_head))
        by_why: dict[str, list[str]] = {}
        for label in labels:
            if label in why:
                by_why.setdefault(why[label], []).append(label)
        skipped += [Skipped(head.id, tuple(each), reason) for reason, each in by_why.items()]
    return kept, skipped


def _without(variant: Variant, labels: set[str]) -> Variant:
    return dataclasses.replace(
        variant,
        endpoints=tuple(e for e in variant.endpoints if e.label not in labels),
        quick_endpoints=tuple(e for e in variant.quick_endpoints if e.label not in labels),
    )

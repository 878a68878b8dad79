"""What an exact pin is (`name==version`, extras allowed), read with `packaging`: the one
definition an app's requirements file (environments.own_requirements), a run-time stack's
`requires` (declarations.apps) and `init`'s look at an app's files (scaffold.init) share."""

from __future__ import annotations

from packaging.requirements import InvalidRequirement, Requirement


def exact_pin(requirement: str) -> tuple[str, str] | None:
    """`fastapi[standard] == 0.115.0` → ("fastapi", "0.115.0"), the name as written; None for
    anything else: a range, a wildcard (`==1.*`), `===`, a URL, a marker (callers split a marker
    off at `;` first), a version that does not start with a digit, or no requirement at all."""
    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        return None
    specifiers = list(parsed.specifier)
    if parsed.url or parsed.marker or len(specifiers) != 1:
        return None
    version = specifiers[0].version
    if specifiers[0].operator != "==" or "*" in version or not version[:1].isdigit():
        return None
    return parsed.name, version

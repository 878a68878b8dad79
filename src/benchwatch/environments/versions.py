"""Installed versions of two environments set side by side."""

from __future__ import annotations

from collections.abc import Mapping


def differing(
    base: Mapping[str, str], head: Mapping[str, str]
) -> dict[str, tuple[str | None, str | None]]:
    """{package: (base version, head version)} for every package the two environments disagree on."""
    names = sorted(set(base) | set(head))
    return {p: (base.get(p), head.get(p)) for p in names if base.get(p) != head.get(p)}

"""Newest FastAPI / Pydantic / Starlette / uvicorn releases from a package index's JSON API.

Every version string is validated (PEP 440 and canonical, see `safe_version`) before it is
used anywhere; anything else is reported as rejected and never compared, stored or printed
into a command line.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from benchwatch.whole_files import write_text_whole

PACKAGES = ("fastapi", "pydantic", "starlette", "uvicorn")
DEFAULT_INDEX_URL = "https://pypi.org"
INDEX_URL_ENV = "BENCHWATCH_INDEX_URL"
STATE_SCHEMA = 1
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
TIMEOUT_SECONDS = 20.0

_VERSION_CHARS = re.compile(r"[0-9a-z][0-9a-z.+!]*")
_NAME_CHARS = re.compile(r"[a-z0-9][a-z0-9._-]*")


class ReleaseError(Exception):
    """A problem with the index or the state file, explained in one line."""


@dataclass(frozen=True)
class Change:
    package: str
    old: str | None
    new: str


@dataclass
class Resolution:
    index_url: str
    pre: bool
    versions: dict[str, str]
    rejected: dict[str, list[str]] = field(default_factory=dict)

    def changes_since(self, previous: dict[str, str]) -> list[Change]:
        return [
            Change(name, previous.get(name), version)
            for name, version in self.versions.items()
            if previous.get(name) != version
        ]


def safe_version(text: object) -> Version | None:
    """The parsed version if `text` is a canonical PEP 440 string, else None."""
    if not isinstance(text, str) or len(text) > 64 or not _VERSION_CHARS.fullmatch(text):
        return None
    try:
        version = Version(text)
    except InvalidVersion:
        return None
    return version if str(version) == text else None


def resolve_index_url(option: str | None) -> str:
    raw = option or os.environ.get(INDEX_URL_ENV) or DEFAULT_INDEX_URL
    parsed = urllib.parse.urlsplit(raw)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ReleaseError(
            f"index URL {raw!r} is not an http(s) URL; set --index-url or {INDEX_URL_ENV}"
        )
    return raw.rstrip("/")


def fetch_project(index_url: str, name: str, timeout: float = TIMEOUT_SECONDS) -> dict[str, Any]:
    url = f"{index_url}/pypi/{name}/json"
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(MAX_RESPONSE_BYTES + 1)
    except urllib.error.HTTPError as error:
        raise ReleaseError(f"package index answered HTTP {error.code} for {url}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise ReleaseError(f"cannot reach package index at {url}: {reason}") from None
    if len(body) > MAX_RESPONSE_BYTES:
        raise ReleaseError(
            f"package index response for {url} is larger than {MAX_RESPONSE_BYTES} bytes"
        )
    try:
        data = json.loads(body)
    except ValueError:
        raise ReleaseError(f"package index response for {url} is not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("releases"), dict):
        raise ReleaseError(f"package index response for {url} has no 'releases' mapping")
    return data


def _is_yanked(files: object) -> bool:
    if not isinstance(files, list) or not files:
        return True  # no distributions to install
    return all(isinstance(f, dict) and f.get("yanked") is True for f in files)


def newest_version(project: dict[str, Any], pre: bool) -> tuple[Version | None, list[str]]:
    """Newest non-yanked version (pre-releases only when `pre`) and the rejected strings."""
    best: Version | None = None
    rejected: list[str] = []
    for text, files in project["releases"].items():
        version = safe_version(text)
        if version is None:
            rejected.append(text)
            continue
        if _is_yanked(files) or (version.is_prerelease and not pre):
            continue
        if best is None or version > best:
            best = version
    return best, rejected


def resolve(index_url: str, pre: bool, packages: tuple[str, ...] = PACKAGES) -> Resolution:
    resolution = Resolution(index_url=index_url, pre=pre, versions={})
    for name in packages:
        version, rejected = newest_version(fetch_project(index_url, name), pre)
        if version is None:
            raise ReleaseError(f"package index lists no installable release of {name}")
        resolution.versions[name] = str(version)
        if rejected:
            resolution.rejected[name] = rejected
    return resolution


def read_state(path: Path) -> dict[str, str] | None:
    """Versions recorded in the state file; None when it does not exist yet."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ReleaseError(f"cannot read state file {path}: {error.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ReleaseError(f"state file {path} is corrupt ({error}); fix or delete it") from None
    versions = data.get("versions") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("schema") != STATE_SCHEMA
        or not isinstance(versions, dict)
    ):
        raise ReleaseError(
            f"state file {path} is corrupt (expected schema {STATE_SCHEMA} with a 'versions' object); fix or delete it"
        )
    for name, version in versions.items():
        if (
            not (isinstance(name, str) and _NAME_CHARS.fullmatch(name))
            or safe_version(version) is None
        ):
            raise ReleaseError(
                f"state file {path} is corrupt (bad entry {name!r}: {version!r}); fix or delete it"
            )
    return dict(versions)


def write_state(path: Path, resolution: Resolution) -> None:
    payload = {
        "schema": STATE_SCHEMA,
        "index_url": resolution.index_url,
        "pre": resolution.pre,
        "versions": resolution.versions,
    }
    write_text_whole(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")


def changes_markdown(changes: list[Change], pre: bool) -> str:
    kind = "releases (including pre-releases)" if pre else "stable releases"
    if not changes:
        return f"No new {kind} of {', '.join(PACKAGES)}.\n"
    lines = [f"New {kind}:", ""]
    for change in changes:
        old = f"`{change.old}`" if change.old else "(not recorded)"
        lines.append(f"- **{change.package}** {old} → `{change.new}`")
    return "\n".join(lines) + "\n"


def pin_requirements(requires: list[str], versions: dict[str, str]) -> list[str]:
    """A run-time stack's requirements with the resolved packages pinned exactly, so the
    environment holds the very versions that were looked up (others stay as written)."""
    pinned = []
    for requirement in requires:
        name = re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0]
        key = re.sub(r"[-_.]+", "-", name).lower()
        extras = (
            requirement[len(name) :].split("]")[0] + "]"
            if requirement[len(name) :].startswith("[")
            else ""
        )
        version = versions.get(key)
        pinned.append(
            f"{name}{extras}=={version}" if version and safe_version(version) else requirement
        )
    return pinned


def pin_stack_file(path: Path, stack: str, versions: dict[str, str]) -> list[str]:
    """Rewrite the `requires = [...]` line of `[stacks.<stack>]` in a stacks.toml with
    `pin_requirements`; returns the new requirements."""
    import tomllib

    text = path.read_text(encoding="utf-8")
    table = tomllib.loads(text).get("stacks", {}).get(stack)
    if not isinstance(table, dict) or not table.get("resolved_at_run_time"):
        raise ReleaseError(f"{path}: no stack {stack!r} resolved at run time to pin")
    pinned = pin_requirements(list(table.get("requires", [])), versions)
    lines = text.splitlines(keepends=True)
    header = f"[stacks.{stack}]"
    start = next(i for i, line in enumerate(lines) if line.strip() == header)
    for i in range(start + 1, len(lines)):
        if lines[i].lstrip().startswith("["):
            break
        if lines[i].startswith("requires"):
            lines[i] = "requires = [" + ", ".join(json.dumps(r) for r in pinned) + "]\n"
            path.write_text("".join(lines), encoding="utf-8")
            return pinned
    raise ReleaseError(f"{path}: [stacks.{stack}] has no one-line `requires = [...]` to pin")


def record_measured(path: Path, versions: dict[str, str]) -> None:
    """Add every package the measured environment held to the state file (`measured`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data["measured"] = {
        name: version
        for name, version in sorted(versions.items())
        if _NAME_CHARS.fullmatch(name) and safe_version(version)
    }
    write_text_whole(path, json.dumps(data, indent=2, sort_keys=True) + "\n")

"""A package index on 127.0.0.1 for the nightly's runner tests: PyPI as an app's lock saw it, plus
the test's own releases.

It serves what the nightly asks of an index: `/simple/<name>/` (PEP 691 JSON, with PEP 700's
upload times; what uv resolves and installs from) and `/pypi/<name>/json` (the JSON API that
`benchwatch releases` and the record job read). Every project is PyPI's, fetched on first use;
a project `held` at a version lists nothing newer than it (so tonight's real releases do not
enter the test), and the test's own wheels (`add`) are listed beside it, served from
`/files/<wheel>`, uploaded "now".
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import io
import json
import re
import threading
import urllib.request
import zipfile
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

PYPI = "https://pypi.org"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


def _version_of(filename: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None


def _fetch(url: str, accept: str) -> Any:
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "bw-test"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


@dataclass(frozen=True)
class Release:
    name: str
    version: str
    wheel: Path
    sha256: str
    uploaded: str


class PackageIndex:
    """`with PackageIndex(held) as index:` serves on `index.url` until the block ends."""

    def __init__(self, held: dict[str, str]) -> None:
        self.held = {canonicalize_name(n): Version(v) for n, v in held.items()}
        self.releases: dict[str, list[Release]] = {}
        self.requests: list[str] = []
        self._pypi: dict[str, Any] = {}
        self._lock = threading.Lock()
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self.do_GET(body=False)

            def do_GET(self, body: bool = True) -> None:
                index.requests.append(self.path)
                try:
                    found = index.answer(self.path)
                except Exception as exc:  # the client hears why
                    found = (502, "text/plain", f"{type(exc).__name__}: {exc}".encode())
                status, kind, data = found
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> PackageIndex:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add(self, name: str, version: str, wheel: Path) -> None:
        """List `wheel` as `name` `version`, uploaded now."""
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        key = canonicalize_name(name)
        self.releases.setdefault(key, []).append(Release(key, version, wheel, digest, now))

    # --- answers ------------------------------------------------------------------------
    def answer(self, path: str) -> tuple[int, str, bytes]:
        path = path.split("?", 1)[0]
        if m := re.fullmatch(r"/simple/([^/]+)/?", path):
            body = json.dumps(self.simple(canonicalize_name(m[1]))).encode()
            return 200, SIMPLE_JSON, body
        if m := re.fullmatch(r"/pypi/([^/]+)/json/?", path):
            return 200, "application/json", json.dumps(self.project(m[1])).encode()
        if m := re.fullmatch(r"/files/([^/]+)", path):
            for release in (r for rs in self.releases.values() for r in rs):
                if release.wheel.name == m[1]:
                    return 200, "application/octet-stream", release.wheel.read_bytes()
        return 404, "text/plain", b"not on this index\n"

    def _listed(self, name: str, version: Version | None) -> bool:
        return version is not None and (name not in self.held or version <= self.held[name])

    def simple(self, name: str) -> dict[str, Any]:
        with self._lock:
            if name not in self._pypi:
                self._pypi[name] = _fetch(f"{PYPI}/simple/{name}/", SIMPLE_JSON)
        page = self._pypi[name]
        files = [f for f in page["files"] if self._listed(name, _version_of(f["filename"]))]
        versions = {str(_version_of(f["filename"])) for f in files}
        for release in self.releases.get(name, []):
            files.append(
                {
                    "filename": release.wheel.name,
                    "url": f"{self.url}/files/{release.wheel.name}",
                    "hashes": {"sha256": release.sha256},
                    "upload-time": release.uploaded,
                    "size": release.wheel.stat().st_size,
                }
            )
            versions.add(release.version)
        return {
            "meta": {"api-version": "1.1"},
            "name": name,
            "versions": sorted(versions, key=Version),
            "files": files,
        }

    def project(self, raw: str) -> dict[str, Any]:
        """The JSON API's project: `releases` as listed on /simple, `info.version` the newest."""
        name = canonicalize_name(raw)
        listed = self.simple(name)
        releases: dict[str, list[dict[str, Any]]] = {v: [] for v in listed["versions"]}
        for f in listed["files"]:
            releases[str(_version_of(f["filename"]))].append(
                {
                    "filename": f["filename"],
                    "url": f["url"],
                    "digests": f.get("hashes", {}),
                    "upload_time_iso_8601": f.get("upload-time"),
                    "yanked": bool(f.get("yanked")),
                }
            )
        newest = max((Version(v) for v in releases), default=None)
        return {"info": {"name": name, "version": str(newest)}, "releases": releases}


def rebuilt_wheel(
    source: Path, out: Path, version: str, edits: dict[str, tuple[str, str]] | None = None
) -> Path:
    """`source` (a pure-Python wheel) as `version`: its dist-info renamed, METADATA's Version and
    RECORD rewritten, and each `edits[member] = (old, new)` applied once to that member (the old
    text must be there)."""
    name, old_version, _, tags = parse_wheel_filename(source.name)
    module = source.name.split("-", 1)[0]
    old_info, new_info = f"{module}-{old_version}.dist-info", f"{module}-{version}.dist-info"
    pending = dict(edits or {})
    members: dict[str, bytes] = {}
    with zipfile.ZipFile(source) as archive:
        for member in archive.namelist():
            data = archive.read(member)
            if member in pending:
                old, new = pending.pop(member)
                text = data.decode()
                if old not in text:
                    raise ValueError(f"{source.name}:{member}: {old!r} is not in it")
                data = text.replace(old, new, 1).encode()
            target = new_info + member[len(old_info) :] if member.startswith(old_info) else member
            if target == f"{new_info}/METADATA":
                data = re.sub(
                    rb"^Version: .*$", f"Version: {version}".encode(), data, count=1, flags=re.M
                )
            members[target] = data
    if pending:
        raise ValueError(f"{source.name}: no member {sorted(pending)}")
    record = f"{new_info}/RECORD"
    lines = []
    for member, data in members.items():
        if member == record:
            continue
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{member},sha256={digest},{len(data)}")
    members[record] = ("\n".join([*lines, f"{record},,"]) + "\n").encode()
    tag = "-".join(sorted({f"{t.interpreter}-{t.abi}-{t.platform}" for t in tags}))
    wheel = out / f"{module}-{version}-{tag}.whl"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    out.mkdir(parents=True, exist_ok=True)
    wheel.write_bytes(buffer.getvalue())
    return wheel


def download(url: str, out: Path) -> Path:
    """A file from PyPI's file host into `out`."""
    target = out / url.rsplit("/", 1)[1].split("#", 1)[0]
    out.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url, timeout=120) as response:
        target.write_bytes(response.read())
    return target

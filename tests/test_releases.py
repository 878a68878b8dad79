"""`benchwatch releases` against a fake package index served on 127.0.0.1 (no network)."""

from __future__ import annotations

import json
import shutil
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import REPO

from benchwatch.cli import main
from benchwatch.environments import releases

HOSTILE = ["1.0; rm -rf /", "$(id)", "2.0 ", "`id`", "9.9.9\n"]


def _files(yanked: bool = False) -> list[dict]:
    return [{"filename": "x.whl", "yanked": yanked}]


def _project(releases_: dict[str, list[dict]]) -> dict:
    return {"info": {"version": "ignored"}, "releases": releases_}


def default_index() -> dict[str, dict]:
    return {
        "fastapi": _project(
            {"0.110.0": _files(), "0.111.0": _files(), "0.112.0": _files(yanked=True)}
        ),
        "pydantic": _project(
            {"2.7.0": _files(), "2.8.0b1": _files(), **{h: _files() for h in HOSTILE}}
        ),
        "starlette": _project({"0.37.2": _files(), "0.38.0": []}),
        "uvicorn": _project({"0.29.0": _files(), "0.30.0.dev1": _files(), "0.3.0-beta": _files()}),
    }


class FakeIndex:
    def __init__(self) -> None:
        self.projects = default_index()
        self.requests: list[str] = []
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                index.requests.append(self.path)
                parts = self.path.strip("/").split("/")
                if (
                    len(parts) == 3
                    and parts[0] == "pypi"
                    and parts[2] == "json"
                    and parts[1] in index.projects
                ):
                    body = json.dumps(index.projects[parts[1]]).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:
                    self.send_error(404)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> FakeIndex:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeIndex]:
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    monkeypatch.delenv(releases.INDEX_URL_ENV, raising=False)
    with FakeIndex() as fake:
        yield fake


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["releases", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_stable_ignores_yanked_pre_releases_and_hostile_strings(index, capsys):
    result = run_json(capsys, "--index-url", index.url)
    assert result["versions"] == {
        "fastapi": "0.111.0",  # 0.112.0 is yanked
        "pydantic": "2.7.0",  # 2.8.0b1 is a pre-release
        "starlette": "0.37.2",  # 0.38.0 has no files
        "uvicorn": "0.29.0",
    }
    assert result["rejected"] == {"pydantic": len(HOSTILE), "uvicorn": 1}
    assert sorted(index.requests) == [f"/pypi/{name}/json" for name in sorted(releases.PACKAGES)]


def test_pre_includes_pre_and_dev_releases(index, capsys):
    result = run_json(capsys, "--pre", "--index-url", index.url)
    assert result["versions"]["pydantic"] == "2.8.0b1"
    assert result["versions"]["uvicorn"] == "0.30.0.dev1"


def test_hostile_strings_never_reach_output_or_state(index, capsys, tmp_path):
    state = tmp_path / "state.json"
    markdown = tmp_path / "changes.md"
    assert (
        main(
            [
                "releases",
                "--index-url",
                index.url,
                "--state",
                str(state),
                "--write-state",
                "--markdown",
                str(markdown),
            ]
        )
        == 0
    )
    texts = [capsys.readouterr().out, state.read_text(), markdown.read_text()]
    for text in texts:
        for bad in ("rm -rf", "$(id)", "`id`", "9.9.9"):
            assert bad not in text


@pytest.mark.parametrize("text", [*HOSTILE, "1.0.0-rc1", "01.0", "v1.0", "1.0 ", "", None, 1.0])
def test_safe_version_rejects_non_canonical(text):
    assert releases.safe_version(text) is None


@pytest.mark.parametrize(
    "text", ["0.165.0", "2.8.0b1", "1.0.0rc2", "1.0.post1", "1.0.dev3", "1!2.0", "1.0+local.7"]
)
def test_safe_version_accepts_canonical(text):
    assert str(releases.safe_version(text)) == text


def test_state_diff_and_atomic_write(index, capsys, tmp_path, monkeypatch):
    state = tmp_path / "nightly" / "state.json"
    first = run_json(capsys, "--index-url", index.url, "--state", str(state), "--write-state")
    assert first["changed"] is True
    assert {c["package"] for c in first["changes"]} == set(releases.PACKAGES)
    assert all(c["old"] is None for c in first["changes"])
    assert json.loads(state.read_text())["versions"] == first["versions"]

    second = run_json(capsys, "--index-url", index.url, "--state", str(state))
    assert second["changed"] is False and second["changes"] == []

    index.projects["pydantic"]["releases"]["2.7.1"] = _files()
    output = tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    assert main(["releases", "--index-url", index.url, "--state", str(state)]) == 0
    text = capsys.readouterr().out
    assert "changed: pydantic 2.7.0 -> 2.7.1" in text
    assert output.read_text() == "changed=true\n"
    assert json.loads(state.read_text())["versions"]["pydantic"] == "2.7.0"  # no --write-state

    assert main(["releases", "--index-url", index.url, "--state", str(state), "--write-state"]) == 0
    assert json.loads(state.read_text())["versions"]["pydantic"] == "2.7.1"
    assert [p.name for p in state.parent.iterdir()] == ["state.json"]  # no temp files left


def test_markdown_names_package_and_versions(index, tmp_path, capsys):
    state = tmp_path / "state.json"
    state.write_text(
        json.dumps(
            {
                "schema": 1,
                "versions": {
                    "fastapi": "0.110.0",
                    "pydantic": "2.7.0",
                    "starlette": "0.37.2",
                    "uvicorn": "0.29.0",
                },
            }
        )
    )
    markdown = tmp_path / "changes.md"
    main(["releases", "--index-url", index.url, "--state", str(state), "--markdown", str(markdown)])
    assert markdown.read_text() == "New stable releases:\n\n- **fastapi** `0.110.0` → `0.111.0`\n"


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"schema": 1}',
        '{"schema": 1, "versions": {"fastapi": "$(id)"}}',
        '{"schema": 2, "versions": {}}',
    ],
)
def test_corrupt_state_is_reported_and_never_overwritten(index, capsys, tmp_path, content):
    state = tmp_path / "state.json"
    state.write_text(content)
    code = main(["releases", "--index-url", index.url, "--state", str(state), "--write-state"])
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith("ERROR: state file") and "corrupt" in err and err.count("\n") == 1
    assert state.read_text() == content


def test_unreachable_index_is_one_clear_line(capsys, monkeypatch):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv(releases.INDEX_URL_ENV, f"http://127.0.0.1:{port}")
    assert main(["releases"]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"ERROR: cannot reach package index at http://127.0.0.1:{port}/pypi/")
    assert err.count("\n") == 1


def test_missing_project_is_reported(index, capsys):
    del index.projects["uvicorn"]
    assert main(["releases", "--index-url", index.url]) == 3
    assert "HTTP 404" in capsys.readouterr().err


def test_index_url_precedence(monkeypatch):
    monkeypatch.delenv(releases.INDEX_URL_ENV, raising=False)
    assert releases.resolve_index_url(None) == "https://pypi.org"
    monkeypatch.setenv(releases.INDEX_URL_ENV, "https://mirror.example/")
    assert releases.resolve_index_url(None) == "https://mirror.example"
    assert releases.resolve_index_url("http://127.0.0.1:9") == "http://127.0.0.1:9"
    with pytest.raises(releases.ReleaseError, match="not an http"):
        releases.resolve_index_url("file:///etc")


def test_write_state_needs_state(capsys):
    assert main(["releases", "--write-state"]) == 3
    assert "--write-state needs --state" in capsys.readouterr().err


def test_state_file_path_unused_until_resolution_succeeds(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv(releases.INDEX_URL_ENV, "http://127.0.0.1:1")
    state = tmp_path / "state.json"
    assert main(["releases", "--state", str(state), "--write-state"]) == 3
    assert not state.exists()


def test_next_is_pinned_to_exactly_the_resolved_versions_and_its_env_checks_them(tmp_path):
    from benchwatch.environments.releases import pin_requirements, pin_stack_file
    from benchwatch.project.stacks import load_stacks

    assert pin_requirements(
        ["fastapi", "psycopg[binary]", "orjson"], {"fastapi": "0.166.0b1", "psycopg": "3.3.9"}
    ) == ["fastapi==0.166.0b1", "psycopg[binary]==3.3.9", "orjson"]
    assert pin_requirements(["fastapi"], {"fastapi": "1.0; rm -rf /"}) == [
        "fastapi"
    ]  # never an unsafe string
    shutil.copy(REPO / "stacks.toml", tmp_path / "stacks.toml")
    pin_stack_file(
        tmp_path / "stacks.toml", "next", {"fastapi": "0.166.0b1", "starlette": "1.11.0"}
    )
    stacks = load_stacks(tmp_path)
    assert stacks["next"].pinned_versions() == {"fastapi": "0.166.0b1", "starlette": "1.11.0"}
    assert stacks["latest"] == load_stacks(REPO)["latest"]  # nothing else touched


def test_record_measured_adds_every_package_to_the_state(tmp_path):
    from benchwatch.environments.releases import (
        Resolution,
        read_state,
        record_measured,
        write_state,
    )

    state = tmp_path / "state.json"
    write_state(state, Resolution("https://pypi.org", True, {"fastapi": "0.166.0b1"}))
    record_measured(state, {"fastapi": "0.166.0b1", "anyio": "4.16.0", "evil name": "1"})
    data = json.loads(state.read_text())
    assert data["measured"] == {"anyio": "4.16.0", "fastapi": "0.166.0b1"}
    assert read_state(state) == {"fastapi": "0.166.0b1"}  # what the next night diffs against

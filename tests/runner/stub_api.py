"""A stub of the few GitHub REST endpoints benchwatch's workflows call, on 127.0.0.1.

Every request is recorded (method, path, query, JSON body, Authorization header) so a test can
assert what a workflow sent. State is held in memory: pull requests the test declares, issue
and pull-request comments, issues, commit comments. Anything else answers 404 and is recorded.
Pagination by `page`/`per_page`, as the github-script stand-in asks for it.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

BOT = {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    authorization: str


@dataclass
class StubState:
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    pull_files: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    comments: list[dict[str, Any]] = field(default_factory=list)  # issue and PR comments
    issues: list[dict[str, Any]] = field(default_factory=list)
    commit_comments: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 1000

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id


class StubAPI:
    """Start with `with StubAPI(repo) as api:`; `api.url` is the base URL."""

    def __init__(self, repository: str) -> None:
        self.repository = repository
        self.state = StubState()
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StubAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def calls(self, method: str, pattern: str) -> list[Request]:
        """Recorded requests whose path matches the regular expression `pattern` in full."""
        with self.lock:
            return [
                r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)
            ]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet: the test reads api.requests
                pass

            def _serve(self, method: str) -> None:
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                with api.lock:
                    api.requests.append(
                        Request(
                            method, parts.path, query, body, self.headers.get("Authorization", "")
                        )
                    )
                    status, answer = api._route(method, parts.path, query, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_PATCH(self) -> None:
                self._serve("PATCH")

        return Handler

    def _route(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        prefix = f"/repos/{self.repository}"
        if not path.startswith(prefix + "/"):
            return 404, {"message": f"this stub serves {prefix} only"}
        route = path[len(prefix) :]
        state = self.state
        if m := re.fullmatch(r"/pulls/(\d+)", route):
            pull = state.pulls.get(int(m[1]))
            return (200, pull) if method == "GET" and pull else (404, {"message": "Not Found"})
        if (m := re.fullmatch(r"/pulls/(\d+)/files", route)) and method == "GET":
            return 200, _page(state.pull_files.get(int(m[1]), []), query)
        if m := re.fullmatch(r"/issues/(\d+)/comments", route):
            number = int(m[1])
            if method == "GET":
                return 200, _page([c for c in state.comments if c["issue_number"] == number], query)
            if method == "POST":
                comment = {
                    "id": state.new_id(),
                    "issue_number": number,
                    "user": BOT,
                    "body": body["body"],
                }
                state.comments.append(comment)
                return 201, comment
        if (m := re.fullmatch(r"/issues/comments/(\d+)", route)) and method == "PATCH":
            comment = next((c for c in state.comments if c["id"] == int(m[1])), None)
            if comment is None:
                return 404, {"message": "Not Found"}
            comment["body"] = body["body"]
            return 200, comment
        if route == "/issues" and method == "GET":
            labels = {name for name in query.get("labels", "").split(",") if name}
            wanted = query.get("state", "open")
            found = [
                i
                for i in state.issues
                if (wanted == "all" or i["state"] == wanted)
                and labels <= {label["name"] for label in i["labels"]}
            ]
            return 200, _page(found, query)
        if route == "/issues" and method == "POST":
            number = state.new_id()
            issue = {
                "number": number,
                "title": body["title"],
                "body": body.get("body", ""),
                "state": "open",
                "labels": [{"name": name} for name in body.get("labels", [])],
                "user": BOT,
            }
            state.issues.append(issue)
            return 201, issue
        if (m := re.fullmatch(r"/issues/(\d+)", route)) and method == "PATCH":
            issue = next((i for i in state.issues if i["number"] == int(m[1])), None)
            if issue is None:
                return 404, {"message": "Not Found"}
            issue.update({k: v for k, v in body.items() if k in ("title", "body", "state")})
            return 200, issue
        if (m := re.fullmatch(r"/commits/([0-9a-f]{40})/comments", route)) and method == "POST":
            comment = {"id": state.new_id(), "commit_id": m[1], "user": BOT, "body": body["body"]}
            state.commit_comments.append(comment)
            return 201, comment
        return 404, {"message": f"{method} {path} is not served by this stub"}


def _page(items: list[Any], query: dict[str, str]) -> list[Any]:
    per_page = int(query.get("per_page", 30))
    page = int(query.get("page", 1))
    return items[(page - 1) * per_page : page * per_page]

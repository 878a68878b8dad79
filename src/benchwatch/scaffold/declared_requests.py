"""What init asks of the app, as declared requests: the login of its OAuth2 password flow (the
credentials from `${BENCHWATCH_USER}` and `${BENCHWATCH_PASSWORD}`), every operation as an
endpoint or the reason it is left out, the set-up requests whose saved ids fill path parameters
(found in scaffold/path_params.py), and the endpoints --quick load-tests."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from benchwatch.declarations import app_env
from benchwatch.declarations.requests import Endpoint
from benchwatch.declarations.setup import SetupRequest
from benchwatch.scaffold.schema import Operation, endpoint_names, operations, password_login

USER_VAR = app_env.USER  # the names the app-env secret accepts for them: one list (app_env.py)
PASSWORD_VAR = app_env.PASSWORD
LOGIN = "login"
BEARER = {"Authorization": "Bearer {setup.token}"}
LOGIN_WHY = f"the login: [setup] sends it with ${{{USER_VAR}}} and ${{{PASSWORD_VAR}}}"


@dataclass
class Candidate:
    """One operation of the schema: the request init would declare, or why it cannot."""

    name: str
    operation: Operation
    endpoint: Endpoint | None = None
    why: str = ""  # left out: exactly what it needs
    steps: tuple[str, ...] = ()  # the set-up requests its values come from
    param: str | None = None  # a path parameter still to fill (fill_path_params)
    guess: str = ""  # its path parameter's value was made from the schema: said when it fails
    records: tuple[
        str, ...
    ] = ()  # set-up requests that only give its list a record: it can do without
    unique: tuple[
        str, ...
    ] = ()  # body fields sent as `{unique}`: the app refused them repeated (scaffold/unique)

    @property
    def declared(self) -> bool:
        return self.endpoint is not None and self.param is None and not self.why


@dataclass
class Plan:
    login: SetupRequest | None  # the schema has an OAuth2 password flow
    candidates: list[Candidate]
    sources: list[SetupRequest] = field(default_factory=list)  # set-up requests that give ids

    @property
    def setup_requests(self) -> list[SetupRequest]:
        used = {s for c in self.candidates if c.declared for s in c.steps}
        return [r for r in ([self.login] if self.login else []) + self.sources if r.name in used]


def login_request(path: str) -> SetupRequest:
    return SetupRequest(
        name=LOGIN,
        method="POST",
        path=path,
        form={"username": f"${{{USER_VAR}}}", "password": f"${{{PASSWORD_VAR}}}"},
        save={"token": "access_token"},
    )


def plan(openapi: dict[str, Any], can_login: bool) -> Plan:
    """Every operation as a candidate: parameter-free requests ready to send, path parameters
    pending (fill_path_params decides once the lists have answered), the rest left out."""
    token_path = password_login(openapi)
    found = operations(openapi)
    names = endpoint_names([(o.method, o.path) for o in found])
    login = login_request(token_path) if token_path else None
    return Plan(
        login, [_candidate(n, o, token_path, can_login) for n, o in zip(names, found, strict=True)]
    )


def _candidate(name: str, op: Operation, token_path: str | None, can_login: bool) -> Candidate:
    left = Candidate(name, op)
    if op.method == "POST" and op.path == token_path:
        return replace(left, why=LOGIN_WHY)
    if op.method == "DELETE":
        return replace(
            left, why="a DELETE removes what it is sent to: repeated under load it measures 404s"
        )
    if op.other_needs:
        return replace(left, why="needs " + ", ".join(op.other_needs) + " (no value init can know)")
    if op.body is not None and (
        op.body.example is None or op.body.media_type != "application/json"
    ):
        return replace(left, why="needs " + op.body.need)
    if len(op.path_params) > 1:
        return replace(
            left,
            why=f"needs path parameters {', '.join(op.path_params)}: give `path_params` from "
            "[setup] requests that save them",
        )
    if op.auth and token_path is None:
        return replace(
            left,
            why="needs a login the schema does not describe (no OAuth2 password flow in "
            "securitySchemes): give `headers` and a [setup] request",
        )
    if op.auth and not can_login:
        return replace(
            left,
            why=f"needs the login: set {USER_VAR} and {PASSWORD_VAR} (a user of the app) "
            "and run init again",
        )
    parts: dict[str, Any] = {"name": name, "method": op.method, "path": op.path}
    if op.auth:
        parts["headers"] = dict(BEARER)
    if op.body is not None:
        parts["json"] = op.body.value(name)
    if op.query:
        parts["query"] = op.query
    steps = (LOGIN,) if op.auth else ()
    if op.path_params:  # a placeholder until a source is found
        parts["path_params"] = {op.path_params[0]: "{setup.pending}"}
        return Candidate(
            name, op, Endpoint.model_validate(parts), steps=steps, param=op.path_params[0]
        )
    return Candidate(name, op, Endpoint.model_validate(parts), steps=steps)


def is_empty_list(answer: Any) -> bool:
    """An answer that is a list with no record: `[]`, or `{"data": [], "count": 0}`."""
    if isinstance(answer, list):
        return not answer
    lists = [v for v in answer.values() if isinstance(v, list)] if isinstance(answer, dict) else []
    return bool(lists) and not any(lists)


def without_failed_steps(found: Plan, failed: dict[str, str]) -> None:
    """The set-up requests that failed at init (name -> why): an endpoint that takes a value from
    one is left out saying so; a list that only lost the record one would have given it is kept."""
    for cand in found.candidates:
        cand.steps = tuple(s for s in cand.steps if s not in failed or s not in cand.records)
        missing = [s for s in cand.steps if s in failed]
        if missing and not cand.why:
            cand.why = (
                f"needs set-up request {missing[0]!r}, which failed at init: {failed[missing[0]]}"
            )


def quick_choice(declared: list[Candidate], goldens: dict[str, Any]) -> tuple[list[str], str]:
    """The endpoints --quick load-tests in a PR, and why: the lists behind the login (GETs whose
    answer at init held a list with records: what a signed-in user's pages ask for most), else the GETs behind
    the login, else the parameter-free GETs, else the first endpoint that can be load-tested (no
    `{unique}` in its request)."""

    def is_list(c: Candidate) -> bool:
        body = goldens.get(c.endpoint.expect.json_file or "") if c.endpoint is not None else None
        listing = isinstance(body, list) or (
            isinstance(body, dict) and any(isinstance(v, list) for v in body.values())
        )
        return listing and not is_empty_list(body)

    plain = [c for c in declared if c.operation.method == "GET" and not c.operation.path_params]
    behind_login = [c for c in plain if c.operation.auth]
    for chosen, why in (
        ([c for c in behind_login if is_list(c)], "the GET lists behind the login"),
        (behind_login, "the GETs behind the login"),
        (plain, "the parameter-free GETs"),
    ):
        if chosen:
            return [c.name for c in chosen], why
    timed = [c for c in declared if c.endpoint is None or not c.endpoint.per_request]
    if not timed:
        return [], "nothing (every endpoint's request holds {unique}: counted only)"
    return [timed[0].name], "the first endpoint (no parameter-free GET was declared)"


def in_order(candidates: list[Candidate]) -> list[Candidate]:
    """Reads before writes: a POST sent under load must not change what a GET's golden body saw."""
    return sorted(candidates, key=lambda c: c.operation.method != "GET")

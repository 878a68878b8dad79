"""What init asks of the app, as declared requests: the login of its OAuth2 password flow (the
credentials from `${BENCHWATCH_USER}` and `${BENCHWATCH_PASSWORD}`), every operation as an
endpoint or the reason it is left out, and the set-up requests whose saved ids fill path
parameters (the first record of a list endpoint's answer, or a record the set-up creates)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from benchwatch import app_env
from benchwatch.declarations import Endpoint, Expect, SetupRequest
from benchwatch.scaffold.schema import Operation, endpoint_names, operations, password_login

USER_VAR = app_env.USER  # the names the app-env secret accepts for them: one list (app_env.py)
PASSWORD_VAR = app_env.PASSWORD
LOGIN = "login"
BEARER = {"Authorization": "Bearer {setup.token}"}
_WRITES = ("POST", "PUT", "PATCH")
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
    return SetupRequest(name=LOGIN, method="POST", path=path, form={"username": f"${{{USER_VAR}}}",
                        "password": f"${{{PASSWORD_VAR}}}"}, save={"token": "access_token"})  # fmt: skip


def plan(openapi: dict[str, Any], can_login: bool) -> Plan:
    """Every operation as a candidate: parameter-free requests ready to send, path parameters
    pending (fill_path_params decides once the lists have answered), the rest left out."""
    token_path = password_login(openapi)
    found = operations(openapi)
    names = endpoint_names([(o.method, o.path) for o in found])
    login = login_request(token_path) if token_path else None
    return Plan(login, [_candidate(n, o, token_path, can_login) for n, o in zip(names, found, strict=True)])


def _candidate(name: str, op: Operation, token_path: str | None, can_login: bool) -> Candidate:
    left = Candidate(name, op)
    if op.method == "POST" and op.path == token_path:
        return replace(left, why=LOGIN_WHY)
    if op.method == "DELETE":
        return replace(left, why="a DELETE removes what it is sent to: repeated under load it measures 404s")
    if op.other_needs:
        return replace(left, why="needs " + ", ".join(op.other_needs) + " (no value init can know)")
    if op.body is not None and (op.body.example is None or op.body.media_type != "application/json"):
        return replace(left, why="needs " + op.body.need)
    if len(op.path_params) > 1:
        return replace(left, why=f"needs path parameters {', '.join(op.path_params)}: give `path_params` from "
                                 "[setup] requests that save them")  # fmt: skip
    if op.auth and token_path is None:
        return replace(left, why="needs a login the schema does not describe (no OAuth2 password flow in "
                                 "securitySchemes): give `headers` and a [setup] request")  # fmt: skip
    if op.auth and not can_login:
        return replace(left, why=f"needs the login: set {USER_VAR} and {PASSWORD_VAR} (a user of the app) "
                                 "and run init again")  # fmt: skip
    parts: dict[str, Any] = {"name": name, "method": op.method, "path": op.path}
    if op.auth:
        parts["headers"] = dict(BEARER)
    if op.body is not None:
        parts["json"] = op.body.example
    steps = (LOGIN,) if op.auth else ()
    if op.path_params:  # a placeholder until a source is found
        parts["path_params"] = {op.path_params[0]: "{setup.pending}"}
        return Candidate(name, op, Endpoint.model_validate(parts), steps=steps, param=op.path_params[0])
    return Candidate(name, op, Endpoint.model_validate(parts), steps=steps)


def collection_of(op: Operation) -> str | None:
    """`/api/v1/items/{id}` -> `/api/v1/items`: where the records a path parameter names are listed."""
    match = re.fullmatch(r"(.+)/\{" + re.escape(op.path_params[0]) + r"\}/?", op.path) if op.path_params else None
    return match.group(1) if match else None


def first_record_path(answer: Any, param: str) -> str | None:
    """Where a list's answer holds its first record's id: `0.id`, or `data.0.id` in an object."""
    def key_of(record: Any) -> str | None:
        if isinstance(record, dict):
            return next((k for k in (param, "id") if k in record and isinstance(record[k], str | int)), None)
        return None

    if isinstance(answer, list) and answer and key_of(answer[0]):
        return f"0.{key_of(answer[0])}"
    if isinstance(answer, dict):
        for name, value in answer.items():
            if isinstance(value, list) and value and key_of(value[0]):
                return f"{name}.0.{key_of(value[0])}"
    return None


def fill_path_params(found: Plan, list_answers: dict[str, Any]) -> None:
    """Give each pending path parameter a source: the first record of the collection's list as it
    answered at init (`list_answers`: path -> JSON body), else a record the set-up creates with the
    collection's POST; else say what it needs. A PUT or PATCH gets a record of its own, so what it
    writes is not what a GET of the same path reads."""
    by_key = {(c.operation.method, c.operation.path.rstrip("/")): c for c in found.candidates}
    for cand in [c for c in found.candidates if c.param is not None]:
        assert cand.endpoint is not None and cand.param is not None
        collection = collection_of(cand.operation)
        resource = re.sub(r"[^a-z0-9]+", "_", (collection or "").rsplit("/", 1)[-1].lower()).strip("_") or "record"
        lister, creator = by_key.get(("GET", collection or "")), by_key.get(("POST", collection or ""))
        step: SetupRequest | None = None
        writes = cand.operation.method in _WRITES
        listed = list_answers.get(lister.operation.path) if lister and lister.declared and not writes else None
        dotted = first_record_path(listed, cand.param) if listed is not None else None
        if lister is not None and dotted is not None:
            assert lister.endpoint is not None
            step = SetupRequest(name=f"first_{resource}", path=lister.endpoint.path, headers=lister.endpoint.headers,
                                save={f"{resource}_id": dotted})  # fmt: skip
        elif creator is not None and creator.declared:
            assert creator.endpoint is not None
            key = cand.param if cand.param in creator.operation.answer_keys else "id"
            suffix = f"_for_{cand.name}" if writes else ""
            step = SetupRequest(name=f"new_{resource}{suffix}", method="POST", path=creator.endpoint.path,
                                headers=creator.endpoint.headers, json=creator.endpoint.json_body,
                                save={f"{resource}{suffix}_id": key})  # fmt: skip
        if step is None:
            where = f"GET {collection} answered no record and there is no POST {collection} init could send" \
                if collection else "it is not the last part of the path"
            cand.why = (f"needs path parameter {cand.param}: {where}; give `path_params` from a [setup] request "
                        "that saves an id")  # fmt: skip
            continue
        if step.name not in {s.name for s in found.sources}:
            found.sources.append(step)
        (saved,) = step.save
        cand.endpoint = cand.endpoint.model_copy(update={"path_params": {cand.param: f"{{setup.{saved}}}"}})
        cand.steps = tuple(dict.fromkeys([*([LOGIN] if step.headers else []), *cand.steps, step.name]))
        cand.param = None


def with_expectation(endpoint: Endpoint, status: int, content_type: str, golden: str | None,
                     volatile: list[str]) -> Endpoint:  # fmt: skip
    expect: dict[str, Any] = {"status": status, "content_type": content_type or "application/json"}
    if golden:
        expect["json"] = golden
    if volatile:
        expect["volatile"] = volatile
    return endpoint.model_copy(update={"expect": Expect.model_validate(expect)})


def quick_choice(declared: list[Candidate], goldens: dict[str, Any]) -> tuple[list[str], str]:
    """The endpoints --quick load-tests in a PR, and why: the lists behind the login (GETs whose
    answer at init held a list: what a signed-in user's pages ask for most), else the GETs behind
    the login, else the parameter-free GETs, else the first endpoint."""
    def is_list(c: Candidate) -> bool:
        body = goldens.get(c.endpoint.expect.json_file or "") if c.endpoint is not None else None
        return isinstance(body, list) or (isinstance(body, dict) and any(isinstance(v, list) for v in body.values()))

    plain = [c for c in declared if c.operation.method == "GET" and not c.operation.path_params]
    behind_login = [c for c in plain if c.operation.auth]
    for chosen, why in ([c for c in behind_login if is_list(c)], "the GET lists behind the login"), \
            (behind_login, "the GETs behind the login"), (plain, "the parameter-free GETs"):
        if chosen:
            return [c.name for c in chosen], why
    return [declared[0].name], "the first endpoint (no parameter-free GET was declared)"


def in_order(candidates: list[Candidate]) -> list[Candidate]:
    """Reads before writes: a POST sent under load must not change what a GET's golden body saw."""
    return sorted(candidates, key=lambda c: c.operation.method != "GET")

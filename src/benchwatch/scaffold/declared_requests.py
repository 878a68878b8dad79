"""What init asks of the app, as declared requests: the login of its OAuth2 password flow (the
credentials from `${BENCHWATCH_USER}` and `${BENCHWATCH_PASSWORD}`), every operation as an
endpoint or the reason it is left out, and the set-up requests whose saved ids fill path
parameters (the first record of a list endpoint's answer, or a record the set-up creates)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from benchwatch.declarations import app_env
from benchwatch.declarations.requests import Endpoint, Expect
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


def collection_of(op: Operation) -> str | None:
    """`/api/v1/items/{id}` -> `/api/v1/items`: where the records a path parameter names are listed."""
    match = (
        re.fullmatch(r"(.+)/\{" + re.escape(op.path_params[0]) + r"\}/?", op.path)
        if op.path_params
        else None
    )
    return match.group(1) if match else None


def first_record_path(answer: Any, param: str, keys: tuple[str, ...] | None = None) -> str | None:
    """Where a list's answer holds its first record's value for `param` (its own key, else `id`;
    only those of `keys` when given): `0.id`, or `data.0.id` in an object."""

    def key_of(record: Any) -> str | None:
        if isinstance(record, dict):
            return next(
                (
                    k
                    for k in keys or (param, "id")
                    if k in record and isinstance(record[k], str | int)
                ),
                None,
            )
        return None

    if isinstance(answer, list) and answer and key_of(answer[0]):
        return f"0.{key_of(answer[0])}"
    if isinstance(answer, dict):
        for name, value in answer.items():
            if isinstance(value, list) and value and key_of(value[0]):
                return f"{name}.0.{key_of(value[0])}"
    return None


def is_empty_list(answer: Any) -> bool:
    """An answer that is a list with no record: `[]`, or `{"data": [], "count": 0}`."""
    if isinstance(answer, list):
        return not answer
    lists = [v for v in answer.values() if isinstance(v, list)] if isinstance(answer, dict) else []
    return bool(lists) and not any(lists)


def _resource(collection: str | None) -> str:
    return (
        re.sub(r"[^a-z0-9]+", "_", (collection or "").rsplit("/", 1)[-1].lower()).strip("_")
        or "record"
    )


def _creation(creator: Candidate, name: str, save: dict[str, str]) -> SetupRequest:
    """A set-up request that creates a record with `creator`'s POST (its body's made-up e-mails
    from the step's own name, so they differ from the endpoint's)."""
    assert creator.endpoint is not None
    body = creator.operation.body.value(name) if creator.operation.body is not None else None
    parts: dict[str, Any] = {
        "name": name,
        "method": "POST",
        "path": creator.endpoint.path,
        "headers": creator.endpoint.headers,
        "save": save,
    }
    if creator.endpoint.has_json:
        parts["json"] = body
    return SetupRequest.model_validate(parts)


def _can_create(creator: Candidate | None) -> bool:
    """A POST init can send once per boot: its request is made (its answer is not asked yet)."""
    return (
        creator is not None
        and creator.endpoint is not None
        and creator.param is None
        and not creator.why
    )


def fill_path_params(found: Plan, list_answers: dict[str, Any]) -> None:
    """Give each pending path parameter a source and the lists that answered empty a record:

    - a read takes the first record of the collection's list as it answered at init
      (`list_answers`: path -> JSON body), else a record the set-up creates with the collection's
      POST, else the first record of any list whose records hold a key named like the parameter
      (`email`; not `id`, which every record has);
    - a PUT or PATCH gets a record of its own (the collection's POST), so what it writes is not
      what a GET of the same path reads;
    - else the value the schema gives or that is made from its type, said if it fails;
    - a GET list that answered no record gets one from the set-up (the collection's POST), so a
      load test never measures an empty list."""
    by_key = {(c.operation.method, c.operation.path.rstrip("/")): c for c in found.candidates}

    def use(cand: Candidate, step: SetupRequest) -> None:
        """`step` among the sources, `cand` taking its values: one request per record created or
        list read (the same name, or a GET of the same list), saving every value taken from it."""
        known = next(
            (
                i
                for i, s in enumerate(found.sources)
                if s.name == step.name
                or (
                    s.method == step.method == "GET"
                    and (s.path, s.headers) == (step.path, step.headers)
                )
            ),
            None,
        )
        if known is None:
            found.sources.append(step)
        else:
            saved = {**found.sources[known].save, **step.save}
            found.sources[known] = found.sources[known].model_copy(update={"save": saved})
        name = found.sources[-1 if known is None else known].name
        cand.steps = tuple(dict.fromkeys([*([LOGIN] if step.headers else []), *cand.steps, name]))

    for lister in [
        c
        for c in found.candidates
        if c.declared
        and c.operation.method == "GET"
        and is_empty_list(list_answers.get(c.operation.path))
    ]:
        collection = lister.operation.path.rstrip("/")
        creator = by_key.get(("POST", collection))
        if _can_create(creator):
            assert creator is not None
            resource = _resource(collection)
            key = "id" if "id" in creator.operation.answer_keys else None
            use(
                lister,
                _creation(creator, f"new_{resource}", {f"{resource}_id": key} if key else {}),
            )
            lister.records = (f"new_{resource}",)
    lists = {
        c.operation.path: list_answers[c.operation.path]
        for c in found.candidates
        if c.declared and c.operation.method == "GET" and c.operation.path in list_answers
    }
    for cand in [c for c in found.candidates if c.param is not None]:
        assert cand.endpoint is not None and cand.param is not None
        collection = collection_of(cand.operation)
        resource = _resource(collection)
        lister, creator = (
            by_key.get(("GET", collection or "")),
            by_key.get(("POST", collection or "")),
        )
        writes = cand.operation.method in ("PUT", "PATCH")
        step: SetupRequest | None = None
        listed = (
            list_answers.get(lister.operation.path)
            if lister and lister.declared and not writes
            else None
        )
        dotted = first_record_path(listed, cand.param) if listed is not None else None
        if lister is not None and dotted is not None:
            assert lister.endpoint is not None
            step = SetupRequest(
                name=f"first_{resource}",
                path=lister.endpoint.path,
                headers=lister.endpoint.headers,
                save={f"{resource}_id": dotted},
            )
        elif _can_create(creator):
            assert creator is not None
            key = cand.param if cand.param in creator.operation.answer_keys else "id"
            suffix = f"_for_{cand.name}" if writes else ""
            step = _creation(creator, f"new_{resource}{suffix}", {f"{resource}{suffix}_id": key})
        elif not writes and (other := _list_holding(found, lists, cand.param)) is not None:
            source, dotted = other
            assert source.endpoint is not None
            held = _resource(source.operation.path.rstrip("/"))
            step = SetupRequest(
                name=f"first_{held}_{cand.param}",
                path=source.endpoint.path,
                headers=source.endpoint.headers,
                save={f"{held}_{cand.param}": dotted},
            )
        if step is not None:
            use(cand, step)
            (saved,) = step.save
            value = f"{{setup.{saved}}}"
        elif cand.param in cand.operation.param_values and not writes:
            value = cand.operation.param_values[cand.param]
            cand.guess = (
                f" (path parameter {cand.param} = {value!r}, made from the schema: "
                f"{_no_source(collection, lister, creator)})"
            )
        else:
            cand.why = (
                f"needs path parameter {cand.param}: {_no_source(collection, lister, creator, writes)}; "
                "give `path_params` from a [setup] request that saves it"
            )
            continue
        cand.endpoint = cand.endpoint.model_copy(update={"path_params": {cand.param: value}})
        cand.param = None


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


def _list_holding(found: Plan, lists: dict[str, Any], param: str) -> tuple[Candidate, str] | None:
    """A declared GET list whose first record holds a key named `param` (`email`), and where;
    never for `id`: another collection's id names another kind of record."""
    if param == "id":
        return None
    for cand in found.candidates:
        if cand.operation.path in lists and not cand.operation.path_params:
            dotted = first_record_path(lists[cand.operation.path], param, keys=(param,))
            if dotted is not None:
                return cand, dotted
    return None


def _no_source(
    collection: str | None,
    lister: Candidate | None,
    creator: Candidate | None,
    writes: bool = False,
) -> str:
    """Why no list and no POST gave a path parameter its value, as it is."""
    if collection is None:
        return "it is not the last part of the path, and no list's records hold it"
    if writes:
        said = "a PUT or PATCH gets a record of its own, created by the set-up with "
    else:
        if lister is None:
            said = f"there is no GET {collection}, no list's records hold it"
        elif not lister.declared:
            said = f"GET {collection} is not declared ({lister.why})"
        else:
            said = f"GET {collection} answered no record"
        said += ", and "
    why = creator.why or "its path needs a parameter" if creator is not None else ""
    if writes:
        return (
            said
            + f"POST {collection}, which "
            + (f"cannot be sent: {why}" if why else "the schema does not have")
        )
    return said + (
        f"POST {collection} cannot be sent: {why}" if why else f"there is no POST {collection}"
    )


def with_expectation(
    endpoint: Endpoint, status: int, content_type: str, golden: str | None, volatile: list[str]
) -> Endpoint:
    expect: dict[str, Any] = {"status": status, "content_type": content_type or "application/json"}
    if golden:
        expect["json"] = golden
    if volatile:
        expect["volatile"] = volatile
    return endpoint.model_copy(update={"expect": Expect.model_validate(expect)})


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

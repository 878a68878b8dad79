"""Where a declared request's path parameter gets its value, once the lists have answered at init:
the first record of the collection's list, a record the set-up creates with the collection's POST
(a PUT or PATCH gets one of its own), a list whose records hold a key named like it, else the
value made from the schema; and a record from the set-up for a list that answered none."""

from __future__ import annotations

import re
from typing import Any

from benchwatch.declarations.setup import SetupRequest
from benchwatch.scaffold.declared_requests import LOGIN, Candidate, Plan, is_empty_list
from benchwatch.scaffold.schema import Operation


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
        wanted_collection = collection_of(cand.operation)
        resource = _resource(wanted_collection)
        collection_lister, creator = (
            by_key.get(("GET", wanted_collection or "")),
            by_key.get(("POST", wanted_collection or "")),
        )
        writes = cand.operation.method in ("PUT", "PATCH")
        step: SetupRequest | None = None
        listed = (
            list_answers.get(collection_lister.operation.path)
            if collection_lister and collection_lister.declared and not writes
            else None
        )
        dotted = first_record_path(listed, cand.param) if listed is not None else None
        if collection_lister is not None and dotted is not None:
            assert collection_lister.endpoint is not None
            step = SetupRequest(
                name=f"first_{resource}",
                path=collection_lister.endpoint.path,
                headers=collection_lister.endpoint.headers,
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
                f"{_no_source(wanted_collection, collection_lister, creator)})"
            )
        else:
            cand.why = (
                f"needs path parameter {cand.param}: {_no_source(wanted_collection, collection_lister, creator, writes)}; "
                "give `path_params` from a [setup] request that saves it"
            )
            continue
        cand.endpoint = cand.endpoint.model_copy(update={"path_params": {cand.param: value}})
        cand.param = None


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

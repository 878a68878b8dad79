"""What init sends without examples in the schema: bodies and parameters made from types and
constraints, the records its lists and path parameters read, true reasons for what it leaves
out, and golden bodies that keep secrets as references (verify --record writes them again)."""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime
from pathlib import Path

import pytest

from benchwatch.declarations import placeholders, redaction
from benchwatch.scaffold import declared_requests as plan
from benchwatch.scaffold.expectations import expectations_of, retry_unique
from benchwatch.scaffold.path_params import fill_path_params
from benchwatch.scaffold.schema_values import NOTHING, example_of


def made(node: dict, seed: str = "s") -> tuple[object, list[str]]:
    missing: list[str] = []
    value = example_of({"components": {"schemas": SCHEMAS}}, node, "", missing, seed)
    return value, missing


SCHEMAS = {
    "Owner": {
        "type": "object",
        "required": ["email", "tags"],
        "properties": {
            "email": {"type": "string", "format": "email", "maxLength": 255},
            "tags": {
                "type": "array",
                "minItems": 2,
                "items": {"type": "string", "enum": ["a", "b"]},
            },
            "nickname": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
    },
    "Base": {
        "type": "object",
        "required": ["id"],
        "properties": {"id": {"type": "string", "format": "uuid"}},
    },
}


def test_strings_are_made_to_their_length_and_format() -> None:
    assert (
        made(
            {"type": "string", "minLength": 12, "maxLength": 14},
        )[0]
        == "bodyxxxxxxxx"
    )
    assert made({"type": "string", "maxLength": 3})[0] == "bod"
    email, _ = made({"type": "string", "format": "email"}, seed="post_users")
    assert email == "post_users_body@example.com"
    assert (
        made({"type": "string", "format": "email"}, seed="new_users")[0] != email
    )  # unique per request
    uuid.UUID(str(made({"type": "string", "format": "uuid"})[0]))
    datetime.fromisoformat(
        str(made({"type": "string", "format": "date-time"})[0]).replace("Z", "+00:00")
    )
    assert made({"type": "string", "enum": ["draft", "published"]})[0] == "draft"
    assert made({"type": "string", "pattern": "^[0-9]{4}$"}) == (
        NOTHING,
        ["body: a string matching ^[0-9]{4}$"],
    )
    assert made({"type": "string", "format": "binary"})[1] == ["body: a file (format binary)"]


def test_numbers_are_made_within_their_bounds() -> None:
    assert made({"type": "integer"})[0] == 1
    assert made({"type": "integer", "minimum": 5, "maximum": 9})[0] == 5
    assert made({"type": "integer", "exclusiveMinimum": 5})[0] == 6
    assert made({"type": "integer", "maximum": 0})[0] == 0
    assert made({"type": "integer", "minimum": 3, "multipleOf": 5})[0] == 5
    assert made({"type": "number", "exclusiveMaximum": 1})[0] == 0.5
    assert made({"type": "boolean"})[0] is False


def test_objects_hold_their_required_fields_and_optional_ones_only_with_a_given_value() -> None:
    body, missing = made(
        {
            "type": "object",
            "required": ["owner", "title", "size"],
            "properties": {
                "owner": {"$ref": "#/components/schemas/Owner"},
                "title": {"type": "string", "minLength": 1},
                "size": {"type": ["integer", "null"], "minimum": 10},
                "description": {"anyOf": [{"type": "string", "maxLength": 9}, {"type": "null"}]},
                "priority": {"type": "integer", "default": 3},
            },
        },
        seed="post_items",
    )
    assert missing == []
    assert body == {
        "owner": {"email": "post_items_email@example.com", "tags": ["a", "a"]},
        "title": "title",
        "size": 10,
        "priority": 3,
    }
    merged, _ = made(
        {
            "allOf": [
                {"$ref": "#/components/schemas/Base"},
                {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
            ]
        }
    )
    assert set(merged) == {"id", "n"}  # type: ignore[arg-type]
    _, missing = made(
        {
            "type": "object",
            "required": ["file", "code"],
            "properties": {
                "file": {"type": "string", "format": "binary"},
                "code": {"type": "string", "pattern": "^x{3}$"},
            },
        }
    )
    assert missing == ["file: a file (format binary)", "code: a string matching ^x{3}$"]


def _schema(paths: dict) -> dict:
    return {
        "openapi": "3.1.0",
        "paths": paths,
        "components": {
            "schemas": {
                "Item": {
                    "type": "object",
                    "required": ["title"],
                    "properties": {"title": {"type": "string"}},
                },
                "ItemOut": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
                },
                "UserIn": {
                    "type": "object",
                    "required": ["email"],
                    "properties": {"email": {"type": "string", "format": "email"}},
                },
                "UserOut": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "email": {"type": "string"}},
                },
            }
        },
    }


def _op(body: str | None = None, out: str | None = None, params: list | None = None) -> dict:
    op: dict = {
        "responses": {
            "200": {
                "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{out}"}}}
            }
        }
        if out
        else {"200": {}}
    }
    if body:
        op["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}},
        }
    if params:
        op["parameters"] = params
    return op


def _path(name: str, fmt: str | None = None) -> dict:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "string", **({"format": fmt} if fmt else {})},
    }


API = _schema(
    {
        "/items/": {"get": _op(), "post": _op("Item", "ItemOut")},
        "/items/{id}": {
            "get": _op(params=[_path("id", "uuid")]),
            "put": _op("Item", "ItemOut", [_path("id", "uuid")]),
        },
        "/users/": {"get": _op(), "post": _op("UserIn", "UserOut")},
        "/users/{user_id}": {"patch": _op("UserIn", "UserOut", [_path("user_id", "uuid")])},
        "/recover/{email}": {"post": _op(params=[_path("email")])},
        "/notes/{note_id}": {
            "get": _op(params=[_path("note_id", "uuid")]),
            "patch": _op(params=[_path("note_id")]),
        },
        "/mail/": {
            "post": _op(
                params=[
                    {
                        "name": "to",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string", "format": "email"},
                    },
                    {
                        "name": "X-Key",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string"},
                    },
                ]
            )
        },
        "/search": {
            "get": _op(
                params=[
                    {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}}
                ]
            )
        },
    }
)


def test_path_parameters_come_from_lists_created_records_or_the_schema_and_every_reason_is_true() -> (
    None
):
    found = plan.plan(API, can_login=True)
    lists = {
        "/items/": {"data": [], "count": 0},
        "/users/": [{"id": "u1", "email": "admin@example.com"}],
    }
    fill_path_params(found, lists)
    by = {c.name: c for c in found.candidates}
    # an empty list gets a record from the set-up, and the read of one record takes its id
    assert by["items"].steps == ("new_items",) and by["items_id"].endpoint.path_params == {
        "id": "{setup.items_id}"
    }
    # a write gets a record of its own, its made-up e-mail unlike the endpoint's
    patch = by["patch_users_user_id"]
    assert patch.declared and patch.endpoint.path_params == {
        "user_id": "{setup.users_for_patch_users_user_id_id}"
    }
    sources = {s.name: s for s in found.sources}
    assert (
        sources["new_users_for_patch_users_user_id"].json_body["email"]
        != by["post_users"].endpoint.json_body["email"]
    )
    # no GET /recover: a list whose records hold an `email` gives it (never said to be "no record")
    recover = by["post_recover_email"]
    assert recover.declared and recover.endpoint.path_params == {"email": "{setup.users_email}"}
    assert sources["first_users_email"].save == {"users_email": "0.email"}
    # nothing gives note_id: a read tries the schema's value and says so if it fails; a write is left out
    assert by["notes_note_id"].declared and by["notes_note_id"].guess.startswith(
        " (path parameter note_id = '3fa85f64-5717-4562-b3fc-2c963f66afa6', made from the schema: there is no GET /notes"
    )
    assert by["patch_notes_note_id"].why == (
        "needs path parameter note_id: a PUT or PATCH gets a record of its own, created by the set-up with "
        "POST /notes, which the schema does not have; give `path_params` from a [setup] request that saves it"
    )
    # a required query parameter is made; a header parameter is no value init can know
    assert by["search"].endpoint.query == {"q": "q"}
    assert by["post_mail"].why == "needs header parameter X-Key (no value init can know)"
    assert [s.name for s in found.setup_requests] == [
        "new_items",
        "new_items_for_put_items_id",
        "new_users_for_patch_users_user_id",
        "first_users_email",
    ]


def test_a_list_that_answered_records_gives_its_first_and_no_record_is_created() -> None:
    found = plan.plan(API, can_login=True)
    fill_path_params(found, {"/items/": {"data": [{"id": "i1"}], "count": 1}, "/users/": []})
    by = {c.name: c for c in found.candidates}
    assert by["items"].steps == () and by["items_id"].steps == ("first_items",)
    assert by["post_recover_email"].guess.endswith(
        "made from the schema: there is no GET /recover, no list's records hold it, and there is no POST /recover)"
    )


def test_a_golden_body_keeps_secrets_as_references_and_volatile_values_masked(monkeypatch) -> None:
    from benchwatch.measure.verify import golden_text

    redaction.forget_all()
    monkeypatch.setenv("BENCHWATCH_USER", "admin@example.com")
    placeholders.value_of(placeholders.Ref("env", "BENCHWATCH_USER"), placeholders.Context())
    body = {
        "email": "admin@example.com",
        "note": "hi admin@example.com, ${HOME} {tmp}",
        "token": "eyJ.secret",
        "items": [{"id": "1", "owner": "admin@example.com"}],
    }
    text = golden_text(body, {"token", "id"})
    assert "admin@example.com" not in text and "eyJ.secret" not in text
    stored = json.loads(text)
    assert stored["email"] == "${BENCHWATCH_USER}" and stored["token"] == "<str>"
    assert stored["note"] == "hi ${BENCHWATCH_USER}, $${HOME} {{tmp}}"
    # verify compares with this boot's values: another user than init's
    other = placeholders.Context(environ={"BENCHWATCH_USER": "ci-user@example.org"})
    back = placeholders.resolve_tree(stored, other)
    assert (
        back["email"] == "ci-user@example.org"
        and back["note"] == "hi ci-user@example.org, ${HOME} {tmp}"
    )
    assert back["items"][0] == {"id": "<str>", "owner": "ci-user@example.org"}
    redaction.forget_all()


def test_the_volatile_line_is_set_in_place_and_nothing_else_changes() -> None:
    from benchwatch.scaffold.record import with_volatile

    text = (
        'name = "app"\n\n[[endpoints]]\nname = "a"\npath = "/a"\n[endpoints.expect]\njson = "expected/a.json"\n'
        '\n[[endpoints]]\nname = "b"\npath = "/b"\n[endpoints.expect]\nvolatile = ["id"]  # kept?\n'
    )
    changed = with_volatile(text, {"a": ["at"], "b": ["id", "ts"]})
    assert changed is not None
    assert 'json = "expected/a.json"' in changed and changed.count("volatile = ") == 2
    import tomllib

    loaded = tomllib.loads(changed)
    assert [e["expect"]["volatile"] for e in loaded["endpoints"]] == [["at"], ["id", "ts"]]
    assert with_volatile(text, {"c": ["x"]}) is None  # no such endpoint: nothing is guessed
    inline = 'name = "app"\n[[endpoints]]\nname = "a"\npath = "/a"\nexpect = { json = "e.json" }\n'
    assert with_volatile(inline, {"a": ["x"]}) is None


@pytest.mark.parametrize(
    "text", ["${HOME}", "{tmp}", "$${x}", "{{setup.token}}", "{database_url} and ${A}", "plain"]
)
def test_escape_gives_the_text_back_when_resolved(text: str) -> None:
    context = placeholders.Context(
        environ={}, tmp="/t", setup={"token": "T"}, database={"url": "U"}
    )
    assert placeholders.resolve(placeholders.escape(text), context) == text


def test_record_on_a_declaration_without_goldens_is_bad_input(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "benchwatch.toml").write_text('[benchwatch]\napps = ["app"]\n')
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "benchwatch-app.toml").write_text(
        'name = "app"\nroot = "."\napp = "main:app"\nstacks = ["latest"]\n[[endpoints]]\nname = "a"\npath = "/a"\n'
    )
    done = cli("verify", "--record", root=tmp_path)
    assert (
        done.returncode == 3
        and "no endpoint of the variants selected has a golden body" in done.stderr
    )


class _Srv:
    """What probe.ask reads of a server: alive, and its log lines (none here)."""

    def alive(self) -> bool:
        return True

    def stderr_tail(self, lines: int = 12) -> str:
        return ""


def test_a_write_that_fails_when_sent_again_is_left_out_saying_what_it_answered() -> None:
    import httpx

    from benchwatch.measure.request import Prepared
    from benchwatch.scaffold.probe import ask

    seen: list[str] = []

    def app(request: httpx.Request) -> httpx.Response:
        seen.append(request.content.decode())
        if len(seen) > 1:
            return httpx.Response(400, json={"detail": "The user with this email already exists"})
        return httpx.Response(200, json={"id": "u1", "email": "a@example.com"})

    with httpx.Client(transport=httpx.MockTransport(app), base_url="http://test") as client:
        answer = ask(
            client,
            _Srv(),
            Prepared("POST", "/users/", (), b'{"email": "a@example.com"}', "application/json"),
        )
    assert len(seen) == 2 and answer.status == 200
    assert answer.again == '400: "The user with this email already exists"'
    found = plan.plan(API, can_login=True)
    users = next(c for c in found.candidates if c.name == "post_users")
    assert users.declared
    expectations_of([users], [{"post_users": answer}, {"post_users": answer}])
    assert not users.declared and users.why == (
        'answered 200 at init, then 400: "The user with this email already exists" when sent again: repeated under '
        "load it measures errors"
    )


def test_a_left_out_endpoint_init_could_send_is_written_with_the_values_it_sent() -> None:
    from benchwatch.scaffold import declare

    found = plan.plan(API, can_login=True)
    fill_path_params(found, {"/users/": [{"id": "u1", "email": "admin@example.com"}]})
    users = next(c for c in found.candidates if c.name == "post_users")
    users.why = "answered 200 at init, then 400 when sent again"
    text = declare.app_text(
        declare.AppText(
            name="api",
            import_string="main:app",
            root="..",
            requirements=None,
            python=None,
            declared=[],
            left_out=[users],
            env_names=[],
            migrations=[],
        )
    )
    assert (
        "# [[endpoints]]   # POST /users/: answered 200 at init, then 400 when sent again" in text
    )
    assert '# json = { email = "post_users_email@example.com" }' in text.replace(
        "  # from the schema: its examples, else made from its types", ""
    )


def test_a_write_whose_post_cannot_be_sent_says_why() -> None:
    api = _schema(
        {
            "/tags/": {
                "post": _op(
                    params=[
                        {
                            "name": "X-Key",
                            "in": "header",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ]
                )
            },
            "/tags/{tag_id}": {"put": _op("Item", None, [_path("tag_id")])},
        }
    )
    found = plan.plan(api, can_login=True)
    fill_path_params(found, {})
    put = next(c for c in found.candidates if c.name == "put_tags_tag_id")
    assert put.why == (
        "needs path parameter tag_id: a PUT or PATCH gets a record of its own, created by the set-up "
        "with POST /tags, which cannot be sent: needs header parameter X-Key (no value init can know); "
        "give `path_params` from a [setup] request that saves it"
    )


def test_one_created_record_gives_every_value_asked_of_it() -> None:
    api = _schema(
        {
            "/things/": {"get": _op(), "post": _op("Item", None)},
            "/things/{id}": {"get": _op(params=[_path("id")])},
        }
    )
    found = plan.plan(api, can_login=True)
    fill_path_params(
        found, {"/things/": []}
    )  # its POST's answer names no `id`: the list's step saves nothing
    (step,) = found.sources
    assert step.name == "new_things" and step.save == {
        "things_id": "id"
    }  # the read's value is saved all the same


def test_a_list_whose_record_could_not_be_created_is_still_declared() -> None:
    """The set-up step that gives an empty list a record failed at init: the list is kept (quick
    will not pick it), the read of one record, which needs the step's id, is left out."""
    found = plan.plan(API, can_login=True)
    fill_path_params(found, {"/items/": []})
    by = {c.name: c for c in found.candidates}
    assert by["items"].records == ("new_items",) and "new_items" in by["items_id"].steps
    plan.without_failed_steps(found, {"new_items": "answered 422"})
    assert by["items"].declared and by["items"].steps == ()
    assert (
        by["items_id"].why == "needs set-up request 'new_items', which failed at init: answered 422"
    )


def test_one_read_of_a_list_gives_every_value_taken_from_it() -> None:
    api = _schema(
        {
            "/users/": {"get": _op()},
            "/users/{user_id}": {"get": _op(params=[_path("user_id", "uuid")])},
            "/recover/{email}": {"post": _op(params=[_path("email")])},
        }
    )
    found = plan.plan(api, can_login=True)
    fill_path_params(found, {"/users/": {"data": [{"id": "u1", "email": "a@example.com"}]}})
    (step,) = found.sources
    assert step.save == {"users_id": "data.0.id", "users_email": "data.0.email"}
    assert {
        c.name: c.endpoint.path_params for c in found.candidates if c.operation.path_params
    } == {
        "users_user_id": {"user_id": "{setup.users_id}"},
        "post_recover_email": {"email": "{setup.users_email}"},
    }
    assert all(c.steps == (step.name,) for c in found.candidates if c.operation.path_params)


def _refusing(repeated: str):  # type: ignore[no-untyped-def]
    """An app that answers 400 to a POST whose `repeated` field it has seen before, and the bodies it got."""
    import httpx

    seen: list[dict] = []

    def app(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        known = [b[repeated] for b in seen]
        seen.append(body)
        if body[repeated] in known:
            return httpx.Response(
                400, json={"detail": f"The user with this {repeated} already exists"}
            )
        return httpx.Response(200, json={"id": str(uuid.uuid4()), **body})

    return app, seen


def _ask_users(make_app) -> tuple[plan.Candidate, dict, list]:  # type: ignore[no-untyped-def]
    """init's two checking boots of POST /users/ (each boot a fresh app); what the first got."""
    import httpx

    from benchwatch.declarations.apps import AppDeclaration
    from benchwatch.project.apps import App
    from benchwatch.scaffold.probe import ask_endpoint

    found = plan.plan(API, can_login=True)
    users = next(c for c in found.candidates if c.name == "post_users")
    assert users.endpoint is not None and users.endpoint.json_body == {
        "email": "post_users_email@example.com"
    }
    declared = App(
        AppDeclaration(name="api", app="main:app", endpoints=[users.endpoint]), Path.cwd()
    )
    context = placeholders.Context(environ={})
    answers, seen = [], []
    for boot in range(2):
        app, got = make_app()
        seen.append(got)
        with httpx.Client(transport=httpx.MockTransport(app), base_url="http://test") as client:

            def send(endpoint):  # type: ignore[no-untyped-def]
                return ask_endpoint(client, _Srv(), declared, endpoint, context)

            answers.append({"post_users": send(users.endpoint)})
            if boot == 0:
                retry_unique([users], answers[0], send)
    expectations_of([users], answers)
    return users, answers[0], seen[0] + seen[1]


def test_a_write_refused_when_repeated_is_declared_with_its_email_unique_per_request() -> None:
    from benchwatch.scaffold import declare

    users, asked, seen = _ask_users(lambda: _refusing("email"))
    # twice as init made it (200, then 400), twice with {unique} (200, 200), twice in the next boot
    assert [b["email"] for b in seen[:2]] == ["post_users_email@example.com"] * 2
    fresh = [b["email"] for b in seen[2:]]
    assert len(set(fresh)) == 4 and all(
        re.fullmatch(r"u[0-9a-f]{32}@example\.com", e) for e in fresh
    )
    assert users.declared and users.unique == ("email",) and users.endpoint.per_request
    assert users.endpoint.json_body == {"email": "u{unique}@example.com"}
    assert asked["post_users"].status == 200 and not asked["post_users"].again
    assert users.endpoint.expect.volatile == ["email", "id"]  # the echoed e-mail differs: masked
    text = declare.app_text(
        declare.AppText(
            name="api",
            import_string="main:app",
            root="..",
            requirements=None,
            python=None,
            declared=[users],
            left_out=[],
            env_names=[],
            migrations=[],
        )
    )
    assert (
        "[[endpoints]]\n# email: {unique}, fresh per request (the app refused a repeated one at init); "
        'counted, not load-tested\nname = "post_users"'
    ) in text
    assert declaration_of(text).endpoints[0].per_request


def declaration_of(text: str):  # type: ignore[no-untyped-def]
    import tomllib

    from benchwatch.declarations.apps import AppDeclaration

    return AppDeclaration(**tomllib.loads(text))


def test_a_write_refused_for_another_field_keeps_its_first_answer_and_true_reason() -> None:
    def refuses_any_repeat():  # type: ignore[no-untyped-def]
        import httpx

        app, seen = _refusing("email")

        def answer(request):  # type: ignore[no-untyped-def]
            if seen:  # everything after the first: no field made unique helps
                seen.append(json.loads(request.content))
                return httpx.Response(409, json={"detail": "conflict"})
            return app(request)

        return answer, seen

    users, _, seen = _ask_users(refuses_any_repeat)
    assert (
        len(seen) == 5
    )  # init's two, the retry refused (an error is asked once), the next boot's two
    assert not users.declared and users.unique == () and not users.endpoint.per_request
    assert (
        users.why
        == 'answered 200 at init, then 409: "conflict" when sent again: repeated under load it measures errors'
    )


@pytest.mark.parametrize(
    ("body", "fields", "after"),
    [
        (
            {"email": "a@b.org", "full_name": "A", "password": "p"},
            ("email",),
            {"email": "u{unique}@b.org", "full_name": "A", "password": "p"},
        ),
        (
            {
                "user_name": "x",
                "title": "t",
                "owner": {"contact": "c@d.io"},
                "tags": [{"slug": "s"}],
            },
            ("user_name", "owner.contact", "tags[0].slug"),
            {
                "user_name": "u{unique}",
                "title": "t",
                "owner": {"contact": "u{unique}@d.io"},
                "tags": [{"slug": "u{unique}"}],
            },
        ),
        ({"title": "t", "count": 1}, None, None),
    ],
)
def test_the_unique_key_rule(body: dict, fields: tuple | None, after: dict | None) -> None:
    from benchwatch.declarations.requests import Endpoint
    from benchwatch.scaffold.unique import made_unique

    made = made_unique(Endpoint(name="w", method="POST", path="/w", json=body))
    if fields is None:
        assert made is None
    else:
        assert (
            made is not None
            and made[1] == fields
            and made[0].json_body == after
            and made[0].per_request
        )

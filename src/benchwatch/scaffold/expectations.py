"""What each declared endpoint expects, from what init's two checking boots answered: its status,
content type and golden body, and the keys whose values differed (`volatile`); a write refused
when sent again retried with `{unique}` values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchwatch.declarations.requests import Endpoint, Expect
from benchwatch.scaffold.declared_requests import Candidate
from benchwatch.scaffold.probe import Answer
from benchwatch.scaffold.unique import made_unique


def retry_unique(
    declared: list[Candidate], asked: dict[str, Answer], send: Callable[[Endpoint], Answer]
) -> None:
    """A write that answered 2xx, then an error when sent again (a user whose e-mail exists now):
    sent again (twice) with its body's unique-key strings as `{unique}` (scaffold/unique.py's
    rule); when both sends answer 2xx, it is declared so, else it keeps its first answer (and reason)."""
    for cand in declared:
        answer = asked[cand.name]
        if not answer.again or cand.endpoint is None:
            continue
        made = made_unique(cand.endpoint)
        if made is None:
            continue
        retried = send(made[0])
        if 200 <= retried.status < 300 and not retried.again:
            cand.endpoint, cand.unique = made
            asked[cand.name] = retried


def expectations_of(
    declared: list[Candidate], answers: list[dict[str, Answer]]
) -> dict[str, tuple[object, set[str]]]:
    """Each declared endpoint's expectation from what the two checking boots answered (both 2xx,
    the same status): its status and type, a GET's golden body; keys that differed within a boot
    or between the two are `volatile`. One that did not answer alike is left out, saying so."""
    goldens: dict[str, tuple[object, set[str]]] = {}
    first, second = answers
    for cand in declared:
        assert cand.endpoint is not None
        one, two = first[cand.name], second[cand.name]
        if not 200 <= one.status < 300 or one.status != two.status:
            cand.why = (one.said() if not 200 <= one.status < 300 else two.said()) + cand.guess
            continue
        if one.again or two.again:
            cand.why = (
                f"answered {one.status} at init, then {one.again or two.again} when sent again: "
                "repeated under load it measures errors"
            )
            continue
        golden = None
        volatile: set[str] = set()
        if one.content_type == "application/json" and cand.operation.method == "GET":
            golden = f"expected/{cand.name}.json"
            volatile = differing_keys(one.first, one.second) | differing_keys(one.first, two.first)
            goldens[golden] = (one.first, volatile)
        elif one.content_type == "application/json":
            volatile = differing_keys(one.first, two.first) | differing_keys(one.first, one.second)
        cand.endpoint = with_expectation(
            cand.endpoint, one.status, one.content_type, golden, sorted(volatile)
        )
    return goldens


def differing_keys(first: Any, second: Any) -> set[str]:
    """Keys whose values differ between two bodies of the same endpoint: init marks them volatile."""
    keys: set[str] = set()
    if isinstance(first, dict) and isinstance(second, dict):
        for key in first.keys() & second.keys():
            if isinstance(first[key], dict | list):
                keys |= differing_keys(first[key], second[key])
            elif first[key] != second[key]:
                keys.add(key)
    elif isinstance(first, list) and isinstance(second, list):
        for a, b in zip(first, second, strict=False):
            keys |= differing_keys(a, b)
    return keys


def with_expectation(
    endpoint: Endpoint, status: int, content_type: str, golden: str | None, volatile: list[str]
) -> Endpoint:
    expect: dict[str, Any] = {"status": status, "content_type": content_type or "application/json"}
    if golden:
        expect["json"] = golden
    if volatile:
        expect["volatile"] = volatile
    return endpoint.model_copy(update={"expect": Expect.model_validate(expect)})

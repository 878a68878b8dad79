"""The test-only fault injection behind one seam (measure/inject.py): armed by the command of
the --inject-head-* flags, asked by side where it applies, and said in the result files."""

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchwatch.declarations.placeholders import Context
from benchwatch.errors import UserError
from benchwatch.measure import inject, server_command
from benchwatch.measure.inject import Faults, Injection
from benchwatch.project.loading import load_project

REPO = Path(__file__).resolve().parents[1]


def test_nothing_is_injected_unless_armed() -> None:
    assert not inject.active()
    assert inject.for_side("head") == inject.for_side("base") == inject.NO_INJECTION
    assert inject.active().recorded() is None
    assert inject.active().micro_environ() == {"base": None, "head": None}


def test_head_burns_base_carries_the_bare_layer_and_a_lone_server_nothing() -> None:
    head = Injection(slowdown=0.2)
    with inject.armed(Faults(head=head)):
        assert inject.for_side("head") == head
        assert inject.for_side("base") == inject.LAYER_ONLY
        assert inject.for_side(None) == inject.NO_INJECTION
    assert inject.for_side("head") == inject.NO_INJECTION  # disarmed on the way out


def test_what_compare_json_says_of_an_injection() -> None:
    assert Faults(head=Injection(slowdown=0.2)).recorded() == {
        "slowdown": 0.2,
        "cpu_us_per_request": 0.0,
    }
    assert Faults(head=Injection(cpu_us=5, loops=3), head_micro=0.05).recorded() == {
        "slowdown": 0.0,
        "cpu_us_per_request": 5,
        "loops": 3.0,
        "micro_calls": 0.05,
    }
    assert Faults(head_micro=0.02).micro_environ() == {
        "base": {"BENCHWATCH_MICRO_INJECT": "0"},
        "head": {"BENCHWATCH_MICRO_INJECT": "0.02"},
    }
    assert (
        inject.said(0.0, 0.1) == "TEST ONLY: 10% of the server's own CPU CPU injected per request"
    )
    assert inject.said(0.0, 0.0) == ""


@pytest.mark.parametrize(
    "faults",
    [
        Faults(head=Injection(cpu_us=-1)),
        Faults(head=Injection(loops=-1)),
        Faults(head=Injection(slowdown=10)),
        Faults(head_micro=1.0),
    ],
)
def test_a_negative_or_too_large_amount_is_bad_input(faults: Faults) -> None:
    with pytest.raises(UserError, match="--inject-head-"):
        faults.check()


def test_a_servers_environment_carries_its_sides_injection(monkeypatch) -> None:
    variant = load_project(REPO).select("hello@latest")[0]
    env = SimpleNamespace(path=Path(sys.prefix))
    monkeypatch.setenv("BENCHWATCH_INJECT_CPU_US", "99")  # never inherited from ours
    alone = server_command.server_environment(variant, env, Context())
    assert not set(alone) & set(inject.INJECT_ENVS)
    with inject.armed(Faults(head=Injection(cpu_us=250, loops=7))):
        head = server_command.server_environment(variant, env, Context(), "head")
        base = server_command.server_environment(variant, env, Context(), "base")
    assert {k: head[k] for k in inject.INJECT_ENVS if k in head} == {
        "BENCHWATCH_INJECT_CPU_US": "250",
        "BENCHWATCH_INJECT_LOOPS": "7",
    }
    assert {k: base[k] for k in inject.INJECT_ENVS if k in base} == {
        "BENCHWATCH_INJECT_SLOWDOWN": "0"
    }

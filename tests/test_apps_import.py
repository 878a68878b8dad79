"""The app folders on their own: no pipeline imports, deterministic inputs, opt-in CPU cost,
and every app module importable under Pydantic v1 and v2 stacks."""

from __future__ import annotations

import ast
import json
import subprocess
import time

import pytest
from conftest import REPO

APPS = REPO / "apps"


@pytest.fixture(autouse=True)
def _repo_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO))


def test_apps_import_nothing_from_benchwatch() -> None:
    offenders = []
    for source in APPS.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            offenders += [
                f"{source.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] == "benchwatch"
            ]
    assert offenders == []


def test_payloads_are_deterministic_and_near_their_sizes() -> None:
    from apps.payloads.data import TARGET_BYTES, PayloadSize, compact_size, generate, payload

    for size in PayloadSize:
        target = TARGET_BYTES[size]
        assert 0.85 * target <= compact_size(payload(size)) <= target, size
    again = generate(TARGET_BYTES[PayloadSize.kb10])
    assert json.dumps(again) == json.dumps(payload(PayloadSize.kb10))
    assert json.dumps(generate(10_000, seed=1)) != json.dumps(again)
    assert json.loads((APPS / "payloads/expected/10kb.json").read_text()) == again


def test_services_serves_twenty_and_posts_rows_are_fixed() -> None:
    from apps.posts.data import ROW_COUNT, post_rows
    from apps.services.data import raw_services

    assert [s["service_id"] for s in raw_services()] == list(range(1, 21))
    rows = post_rows()
    assert len(rows) == ROW_COUNT and rows == post_rows()
    assert all(
        r["published_at"].microsecond == 0 and r["published_at"].tzinfo is None for r in rows
    )


def test_injected_cpu_is_off_by_default_and_wraps_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from apps import _inject

    def app(scope, receive, send):  # pragma: no cover - never called
        raise AssertionError

    monkeypatch.delenv(_inject.ENV_VAR, raising=False)
    monkeypatch.delenv(_inject.SLOWDOWN_ENV_VAR, raising=False)
    assert _inject.with_injected_cpu(app) is app
    settings = [  # variable, good value, attribute it sets, bad value, the error's words
        (
            _inject.SLOWDOWN_ENV_VAR,
            "0.1",
            "slowdown",
            "-1",
            "BENCHWATCH_INJECT_SLOWDOWN='-1': must not be negative",
        ),
        (_inject.ENV_VAR, "250", "microseconds", "fast", "BENCHWATCH_INJECT_CPU_US='fast'"),
    ]
    for variable, good, attribute, bad, error in settings:
        monkeypatch.setenv(variable, good)
        wrapped = _inject.with_injected_cpu(app)
        assert isinstance(wrapped, _inject.InjectedCpu) and getattr(wrapped, attribute) == float(
            good
        )
        monkeypatch.setenv(variable, bad)
        with pytest.raises(ValueError, match=error):
            _inject.with_injected_cpu(app)
        monkeypatch.delenv(variable)


def test_spin_cpu_burns_at_least_the_requested_thread_time() -> None:
    from apps._inject import spin_cpu

    before = time.thread_time()
    spin_cpu(3000)
    assert time.thread_time() - before >= 0.003


def test_injected_slowdown_spins_that_fraction_of_the_work_done_between_requests() -> None:
    import asyncio

    from apps._inject import InjectedCpu, spin_cpu

    async def work(scope, receive, send):
        spin_cpu(2000)  # the "real" cost of one request: 2 ms of CPU

    middleware = InjectedCpu(work, slowdown=0.5)
    before = time.process_time()
    for _ in range(20):
        asyncio.run(middleware({"type": "http"}, None, None))
    spent = time.process_time() - before
    # 19 requests' work is owed by the 20th request's start: 0.5 x ~38 ms spun, one request behind
    assert middleware._spun_for_slowdown == pytest.approx(
        0.5 * (spent - middleware._spun - 0.002), rel=0.2
    )
    assert middleware._spun_for_slowdown >= 0.5 * 19 * 0.002


_IMPORT_EVERY_APP = """
import importlib, json, pydantic
from apps._pydantic import PYDANTIC_V2
modules = ["apps.services.app", "apps.github_user.app", "apps.payloads.app", "apps.posts.app",
           "apps.hello.app", "apps.hello.falcon_app", "apps.hello.starlette_app", "apps.hello.asgi_app"]
for name in modules:
    importlib.import_module(name)
from apps.github_user.data import raw_user
from apps.github_user.models import UserResponseB

def boom(*args, **kwargs):
    raise RuntimeError("the configured serializer was called")

if PYDANTIC_V2:
    class Probe(UserResponseB):
        model_config = pydantic.ConfigDict(json_serializer=boom)
    dump = lambda model: model.model_dump_json()
else:
    class Probe(UserResponseB):
        class Config:
            json_dumps = boom
    dump = lambda model: model.json()
try:
    dump(Probe(**raw_user()))
    inert = True
except RuntimeError:
    inert = False
print(json.dumps({"v2": PYDANTIC_V2, "major": pydantic.VERSION[0], "serializer_config_inert": inert}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("stack_name", ["seed-v1", "seed-v2", "latest"])
def test_every_app_module_imports_on_the_stack(stack_name: str) -> None:
    from benchwatch.environments import envs
    from benchwatch.project.stacks import load_stacks

    env = envs.ensure(load_stacks(REPO)[stack_name])
    done = subprocess.run(
        [str(env.python), "-W", "error::SyntaxWarning", "-c", _IMPORT_EVERY_APP],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "POSTS_DATABASE_URL": "sqlite:///:memory:"},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["v2"] is (report["major"] != "1")
    # seed 001's claim, checked: v2 ignores `json_serializer`; v1's `json_dumps` is really used
    assert report["serializer_config_inert"] is report["v2"]

"""The app-env secret: what init asks for is what scripts/app_env.sh accepts (one list of names,
src/benchwatch/declarations/app_env.py), the names others own stay refused, and every value is masked as the
runner reads its commands (`%`, CR and LF escaped)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchwatch.declarations import app_env
from benchwatch.errors import EXIT_BAD_INPUT as BAD_INPUT
from benchwatch.scaffold import declared_requests as plan

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "app_env.sh"
TEMPLATE_NAMES = [
    "APP_SECRET_KEY",
    plan.PASSWORD_VAR,
    plan.USER_VAR,
]  # what init declared on the template


def sourced(app_env_text: str) -> subprocess.CompletedProcess:
    """app_env.sh sourced as the workflows' compare step does, then the names it exported."""
    script = f"source {SCRIPT}\nenv -0"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        timeout=30,
        env={"PATH": os.environ["PATH"], "APP_ENV": app_env_text},
    )
    # bytes: text mode would turn a CR into a line end
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def exported(done: subprocess.CompletedProcess) -> dict[str, str]:
    text = done.stdout[
        done.stdout.rfind("\n", 0, done.stdout.find("\0")) + 1 :
    ]  # after the mask lines
    return dict(item.split("=", 1) for item in text.split("\0") if "=" in item)


def runner_unescape(data: str) -> str:
    """How the Actions runner reads a command's data (ActionCommand.Unescape): %0D, %0A, then %25."""
    return data.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def test_the_script_holds_the_names_of_the_one_list() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "app_env_names.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert app_env.shell_case() in SCRIPT.read_text()


def test_the_secret_init_asks_for_is_accepted_by_the_workflows() -> None:
    """init's printed instruction, read as a user would: one NAME=value line for each name it lists."""
    (line,) = app_env.instruction(TEMPLATE_NAMES)
    assert line.startswith(
        f"init: create the repository secret {app_env.SECRET} with one NAME=value line for each of "
    )
    names = re.search(r"for each of (.*) \(Settings", line).group(1).split(", ")
    assert (
        names == TEMPLATE_NAMES
    )  # the login's names included: every app with a login needs them on GitHub
    values = {name: f"value-{i}-{name.lower()}" for i, name in enumerate(names)}
    done = sourced("".join(f"{name}={value}\n" for name, value in values.items()))
    assert done.returncode == 0, done.stdout + done.stderr
    assert {k: v for k, v in exported(done).items() if k in values} == values
    assert [m for m in done.stdout.splitlines() if m.startswith("::add-mask::")] == [
        f"::add-mask::{v}" for v in values.values()
    ]


def _one_of(pattern: str) -> str:
    return pattern.replace("*", "_X")


OWNED = [(_one_of(p), who) for who, patterns in app_env.OWNED for p in patterns]


@pytest.mark.parametrize("name, who", OWNED, ids=[n for n, _ in OWNED])
def test_a_name_someone_else_owns_stays_refused_by_the_script_and_by_init(
    name: str, who: str
) -> None:
    assert name not in app_env.ALLOWED
    assert app_env.refusal(name) == f"{name} belongs to {who}"
    done = sourced(f"APP_SECRET_KEY=fine-value\n{name}=planted-value\n")
    assert done.returncode == BAD_INPUT
    assert f"::error::app-env secret, line 2: {name} belongs to {who}" in done.stdout
    assert "planted-value" not in done.stdout + done.stderr
    said = app_env.instruction(["APP_SECRET_KEY", name])
    assert said[0].endswith("each of APP_SECRET_KEY (Settings > Secrets and variables > Actions)")
    assert said[1].startswith(
        f"init: ${{{name}}} cannot come from {app_env.SECRET} ({name} belongs to {who})"
    )


def test_benchwatch_s_own_settings_stay_refused_beside_the_login() -> None:
    for name in (
        "BENCHWATCH_PYTHONS",
        "BENCHWATCH_ROOT",
        "BENCHWATCH_INJECT_SLOWDOWN",
        "BENCHWATCH_CACHE",
    ):
        assert app_env.refusal(name) == f"{name} belongs to benchwatch"
        assert sourced(f"{name}=/tmp/x\n").returncode == BAD_INPUT


@pytest.mark.parametrize("value", ["k%25ey-1234", "50%-off-9876", "a%0Ab-5555", "cr\rinside-4321"])
def test_a_value_is_masked_as_the_runner_reads_it(value: str) -> None:
    """F7: `::add-mask::k%25ey-1234` would mask `k%ey-1234`, leaving the real value in the log."""
    done = sourced(f"APP_SECRET_KEY={value}\n")
    assert done.returncode == 0, done.stderr
    (mask,) = [m for m in done.stdout.split("\n") if m.startswith("::add-mask::")]
    data = mask.removeprefix("::add-mask::")
    assert "\r" not in data and runner_unescape(data) == value
    assert exported(done)["APP_SECRET_KEY"] == value


def test_the_script_names_its_lines_so_benchwatch_redacts_their_values() -> None:
    """An app-env line no `${NAME}` reads still reaches the servers (they inherit the step's
    environment): BENCHWATCH_SECRET_NAMES lists every name, and benchwatch remembers their values."""
    from benchwatch.declarations import redaction

    done = sourced("APP_SECRET_KEY=k-8f7e6d5c4b\nSMTP_PASSWORD=smtp-pw-9911\nEMPTY=\n")
    assert done.returncode == 0, done.stderr
    environ = exported(done)
    assert environ[redaction.SECRET_NAMES_ENV] == "APP_SECRET_KEY SMTP_PASSWORD EMPTY"
    redaction.forget_all()
    try:
        redaction.remember_environment(environ)
        assert (
            redaction.redact("the server said smtp-pw-9911") == "the server said ${SMTP_PASSWORD}"
        )
    finally:
        redaction.forget_all()
    assert app_env.ALLOWED == redaction.LOGIN_NAMES  # the login: one list

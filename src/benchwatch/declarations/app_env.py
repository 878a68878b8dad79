"""The names the reusable workflows' `app-env` secret may set: one list that `init` (its login
variables and the secret it asks for) and scripts/app_env.sh (the `case` block written from
`shell_case()`, checked by tests/test_app_env.py) both use.

A name is refused when something else owns it (the runner, the shell, the loader, Python, uv or
benchwatch itself): a secret setting PATH, LD_PRELOAD or BENCHWATCH_PYTHONS would change what runs,
not what the apps read. The login init declares is benchwatch's name space on purpose
(`${BENCHWATCH_USER}`, `${BENCHWATCH_PASSWORD}`) and is the one exception."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

SECRET = "BENCHWATCH_APP_ENV"  # the repository secret the callers init writes pass as `app-env`
USER = "BENCHWATCH_USER"  # the login init declares ([setup] sends them): a user of the app
PASSWORD = "BENCHWATCH_PASSWORD"
ALLOWED = (USER, PASSWORD)  # accepted although a refused pattern below matches them
NAME = re.compile(r"[A-Z_][A-Z0-9_]*")

# (who owns them, shell `case` patterns): fnmatch's `*` is the shell's
OWNED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the runner", ("GITHUB_*", "RUNNER_*", "ACTIONS_*", "CI")),
    (
        "the shell",
        ("BASH*", "PATH", "HOME", "USER", "SHELL", "PWD", "OLDPWD", "IFS", "PS4", "ENV", "TMPDIR"),
    ),
    ("the loader, Python or uv", ("LD_*", "PYTHON*", "VIRTUAL_ENV", "UV_*")),
    ("benchwatch", ("BENCHWATCH_*", "APP_ENV")),
)


def owner(name: str) -> str | None:
    """Who owns `name` (the secret may not set it), or None when the secret may."""
    if name in ALLOWED:
        return None
    return next(
        (who for who, patterns in OWNED if any(fnmatchcase(name, p) for p in patterns)), None
    )


def refusal(name: str) -> str | None:
    """Why app_env.sh refuses a line setting `name`, or None."""
    if not NAME.fullmatch(name):
        return "the name is not ^[A-Z_][A-Z0-9_]*$"
    who = owner(name)
    return None if who is None else f"{name} belongs to {who}"


def instruction(names: list[str]) -> list[str]:
    """What init prints about the secret for the `${NAME}`s its declaration reads: the names the
    secret can carry, and those it cannot (the workflows' own environment has them, or nothing)."""
    given = [n for n in names if refusal(n) is None]
    lines = []
    if given:
        lines.append(
            f"init: create the repository secret {SECRET} with one NAME=value line for each of "
            f"{', '.join(given)} (Settings > Secrets and variables > Actions)"
        )
    for name in names:
        if name not in given:
            lines.append(
                f"init: ${{{name}}} cannot come from {SECRET} ({refusal(name)}): on GitHub only the runner's "
                "own value can fill it; rename the variable in the declaration to give it there"
            )
    return lines


SHELL_BEGIN = "    # --- the names: written from src/benchwatch/declarations/app_env.py by scripts/app_env_names.py ---\n"
SHELL_END = "    # --- end of the names ---\n"


def shell_case() -> str:
    """The `case` block of scripts/app_env.sh (between SHELL_BEGIN and SHELL_END) for this list."""
    arms = [f"      {' | '.join(ALLOWED)}) ;;  # init's login: the app's user\n"]
    for who, patterns in OWNED:
        arms.append(
            f"      {' | '.join(patterns)})\n"
            f'        _app_env_refuse "$number" "$name belongs to {who}" ;;\n'
        )
    return SHELL_BEGIN + '    case "$name" in\n' + "".join(arms) + "    esac\n" + SHELL_END

"""asv micro-benchmarks per stack: one uv env per stack, `asv run --environment existing:...`,
rounds interleaved across stacks, results read back with asv's own API as Figures."""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchwatch.declarations.stacks import Stack
from benchwatch.errors import UserError
from benchwatch.figures.figure_key import variant_id
from benchwatch.micro.figures import figures_from_results
from benchwatch.results.schema import Figure, Problem

ASV_RUNNER_VERSION = "0.3.2"
ASV_TIMEOUT_S = 1800
TRACK_PATTERN = (
    r"\.track_"  # asv's track_ benchmarks: the installed versions, checked against the pins
)


def quick_patterns(root: Path, *, track: bool = True) -> list[str]:
    """The asv benchmarks `--quick` runs: benchwatch.toml's `micro_quick` (regexes; empty: every
    one), plus the track_ benchmarks that check the installed versions (`track`)."""
    from benchwatch.project.files import PROJECT_FILE
    from benchwatch.project.loading import load_project

    chosen = (
        list(load_project(root).settings.micro_quick) if (root / PROJECT_FILE).is_file() else []
    )
    return [*chosen, TRACK_PATTERN] if chosen and track else chosen


QUICK_REPEAT = "(3, 5, 1.0)"


@dataclass(frozen=True)
class StackRun:
    stack: Stack
    python: Path


def has_benchmarks(root: Path) -> bool:
    """A project's asv micro-benchmarks live in its benchmarks/ folder (benchwatch's own
    repository has one; a user's repository usually does not, and the wheel carries none)."""
    return (root / "benchmarks").is_dir()


def run_micro(
    stacks: Sequence[Stack],
    pattern: str | None,
    quick: bool,
    out_dir: Path,
    *,
    root: Path,
    benchmark_dir: Path | None = None,
    repo: Path | None = None,
    rounds: int | None = None,
    machine: str | None = None,
    publish: bool = True,
    log: Callable[[str], None] | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> tuple[list[Figure], list[Problem]]:
    """Runs the asv benchmarks matching `pattern` (a regex, asv's --bench) on every stack;
    returns the valid figures and every problem (env build, failing benchmark, missing result)."""
    from benchwatch.environments.envs import EnvError, ensure

    say = log or (lambda line: print(line, file=sys.stderr, flush=True))
    repo = (repo or root).resolve()
    commit = _head_commit(repo)
    work = (out_dir / "asv").resolve()
    shutil.rmtree(work / "results", ignore_errors=True)  # never report a previous run's figures
    work.mkdir(parents=True, exist_ok=True)
    machine = machine or os.environ.get("BENCHWATCH_MACHINE") or _default_machine()
    config = _write_run_config(
        work, repo, (benchmark_dir or root / "benchmarks").resolve(), out_dir
    )
    asv_env = {**_asv_environment(work), **(extra_env or {})}
    _asv(["machine", "--yes", "--machine", machine, "--config", str(config)], asv_env, say)

    problems: list[Problem] = []
    ready: list[StackRun] = []
    for stack in stacks:
        say(f"micro: environment for {stack.name}")
        try:
            ready.append(StackRun(stack, ensure(stack).python))
        except EnvError as exc:
            problems.append(
                Problem(variant=variant_id("micro", stack.name), phase="env", reason=str(exc))
            )

    bench = [pattern] if pattern else (quick_patterns(root) if quick else [])
    outputs: dict[str, str] = {s.stack.name: "" for s in ready}
    total_rounds = rounds or (1 if quick else 2)
    for round_index in range(total_rounds):
        for run in list(ready):
            say(f"micro: round {round_index + 1}/{total_rounds} on {run.stack.name}")
            argv = _run_argv(config, run.python, machine, commit, bench, quick, round_index)
            try:
                output = _asv(argv, asv_env, say, check=False)
            except UserError as exc:  # a stack that hangs: reported, the others go on
                problems.append(
                    Problem(
                        variant=variant_id("micro", run.stack.name), phase="micro", reason=str(exc)
                    )
                )
                ready.remove(run)
                continue
            if "No benchmarks selected" in output:
                chosen = " ".join(bench)
                raise UserError(
                    f"-k {chosen}: no benchmark matches (asv --bench regex, see benchmarks/)"
                )
            outputs[run.stack.name] += output

    figures: list[Figure] = []
    for run in ready:
        found, trouble = figures_from_results(
            results_dir=work / "results",
            machine=machine,
            commit=commit,
            python=run.python,
            stack=run.stack,
            output=outputs[run.stack.name],
        )
        figures += found
        problems += trouble
    if publish and figures:
        _publish(config, asv_env, problems, say)
    return figures, problems


def _run_argv(
    config: Path, python: Path, machine: str, commit: str, bench: list[str], quick: bool, index: int
) -> list[str]:
    argv = [
        "run",
        "--config",
        str(config),
        "--environment",
        f"existing:{python}",
        "--machine",
        machine,
        "--set-commit-hash",
        commit,
        "--show-stderr",
        "--launch-method",
        "forkserver",  # inputs are built once per run, at import (common.py)
    ]
    for regex in bench:
        argv += ["--bench", regex]
    # one asv round per call: benchwatch interleaves the rounds across stacks itself
    argv += ["-a", "rounds=1", "--record-samples"]
    if quick:
        argv += ["-a", f"repeat={QUICK_REPEAT}", "-a", "warmup_time=0.05"]
    if index > 0:
        argv += ["--append-samples"]
    return argv


def _head_commit(repo: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "HEAD"], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise UserError(f"{repo}: no git commit yet; asv records results per commit, commit once")
    return done.stdout.strip()


def _default_machine() -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", platform.node() or "machine")


def _write_run_config(work: Path, repo: Path, benchmark_dir: Path, out_dir: Path) -> Path:
    if not benchmark_dir.is_dir():
        raise UserError(f"{benchmark_dir}: no benchmark directory there")
    branch = _current_branch(repo)
    config = {
        "version": 1,
        "project": "benchwatch",
        "project_url": "#",
        "repo": str(repo),
        "branches": [branch],
        "dvcs": "git",
        "environment_type": "existing",
        "benchmark_dir": str(benchmark_dir),
        "results_dir": str(work / "results"),
        "html_dir": str((out_dir / "asv-html").resolve()),
        "env_dir": str(work / "env"),
        "build_command": [],
        "install_command": [],
        "uninstall_command": [],
    }
    path = work / "asv.conf.json"
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def _current_branch(repo: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "symbolic-ref", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else "HEAD"  # detached (CI checkouts)


def _asv_environment(work: Path) -> dict[str, str]:
    """asv_runner reaches each stack's env through PYTHONPATH rather than being installed in it:
    the stacks' `exclude_newer` dates predate asv_runner 0.3.2, and the load tests then share
    the very same environments. HOME is private so asv's machine file stays in the run."""
    runner = work / f"asv_runner-{ASV_RUNNER_VERSION}"
    if not (runner / "asv_runner" / "__init__.py").is_file():
        installed = importlib.metadata.version("asv_runner")
        if installed != ASV_RUNNER_VERSION:
            raise UserError(
                f"asv_runner {installed} installed; reinstall benchwatch (needs {ASV_RUNNER_VERSION})"
            )
        import asv_runner

        shutil.copytree(
            Path(asv_runner.__file__).parent,
            runner / "asv_runner",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    home = work / "home"
    home.mkdir(exist_ok=True)
    from benchwatch.declarations.placeholders import app_environ

    env = app_environ()  # asv runs the benchmarks/ a pull request may have changed
    env.update(PYTHONPATH=str(runner), HOME=str(home), PYTHONHASHSEED="0")
    return env


def _asv(
    argv: list[str], env: dict[str, str], say: Callable[[str], None], check: bool = True
) -> str:
    command = [sys.executable, "-m", "asv", *argv]
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=ASV_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise UserError(
            f"`asv {argv[0]}` took longer than {ASV_TIMEOUT_S} s; narrow it with -k"
        ) from None
    output = done.stdout + done.stderr
    if check and done.returncode != 0:
        tail = " | ".join(output.strip().splitlines()[-3:])
        raise UserError(f"`asv {argv[0]}` failed: {tail}")
    return output


def _publish(
    config: Path, env: dict[str, str], problems: list[Problem], say: Callable[[str], None]
) -> None:
    say("micro: asv publish")
    try:
        _asv(["publish", "--config", str(config), "--no-pull"], env, say)
    except UserError as exc:
        problems.append(Problem(variant="micro", phase="micro", reason=f"asv publish: {exc}"))

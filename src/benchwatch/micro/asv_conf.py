"""asv.conf.json, generated from stacks.toml: every pinned stack as one exact-pin matrix entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchwatch.declarations.stacks import Stack

ASV_CONF_FILE = "asv.conf.json"
ASV_DIR = ".asv"


def asv_conf(stacks: dict[str, Stack]) -> dict[str, Any]:
    """The committed asv configuration. `next` (resolved at run time) has no exact pins, so it
    is left out; `benchwatch micro` measures it through its uv environment instead."""
    pinned = [s for s in stacks.values() if not s.resolved_at_run_time]
    return {
        "version": 1,
        "project": "benchwatch",
        "project_url": "https://github.com/benchwatch/benchwatch",
        "repo": ".",
        "branches": ["main"],
        "dvcs": "git",
        "environment_type": "virtualenv",
        "pythons": sorted({s.python for s in pinned}),
        "benchmark_dir": "benchmarks",
        "results_dir": f"{ASV_DIR}/results",
        "html_dir": f"{ASV_DIR}/html",
        "env_dir": f"{ASV_DIR}/env",
        "build_command": [],
        "install_command": [],
        "uninstall_command": [],
        "matrix": {},
        "exclude": [{"python": ".*"}],
        "include": [{"python": s.python, "req": dict(s.pins)} for s in pinned],
    }


def render(stacks: dict[str, Stack]) -> str:
    return json.dumps(asv_conf(stacks), indent=2) + "\n"


def write(root: Path, stacks: dict[str, Stack]) -> Path:
    path = root / ASV_CONF_FILE
    path.write_text(render(stacks))
    return path

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchwatch.commands import add_shared_options, stack_names

if TYPE_CHECKING:  # annotations only: a command imports what it runs when it runs (start-up time)
    from benchwatch.project.variants import Project, Variant

HELP = "List scenarios, flavors, stacks, variants and endpoints"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_shared_options(parser, stacks=True)
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    from benchwatch.project.loading import load_project

    project = load_project()
    variants = project.select(args.patterns, stack_names(args))
    if args.json:
        print(json.dumps(_as_data(project, variants), indent=1))
        return 0
    print("stacks:")
    for stack in project.stacks.values():
        pins = ", ".join(f"{p} {v}" for p, v in stack.pins.items() if p in ("fastapi", "pydantic"))
        default = " (default)" if stack.name in project.default_stacks else ""
        print(f"  {stack.name:<12} {pins or 'resolved at run time'}{default} — {stack.description}")
    print("scenarios:")
    for app in project.apps:
        seed = f" [seed {app.declaration.seed}]" if app.declaration.seed else ""
        print(f"  {app.name}{seed}: {app.declaration.description}")
        for flavor, decl in app.declaration.flavors.items():
            print(f"    flavor {flavor}: {decl.description}")
        quick = {e.name for v in variants if v.app is app for e in v.quick_endpoints}
        for endpoint in app.declaration.endpoints:
            mark = (
                " (quick)"
                if endpoint.name in quick
                else " (counted only: {unique})"
                if endpoint.per_request
                else ""
            )
            print(f"    {endpoint.name:<28} {endpoint.label}{mark}")
    print(f"variants ({len(variants)}):")
    for variant in variants:
        print(f"  {variant.id}")
    if project.questions:
        print("questions (answered side by side by `run`):")
    for question in project.questions:
        lanes = ", ".join(lane.label for lane in question.lanes)
        published = (
            f"; {len(question.published)} published figure(s) beside it"
            if question.published
            else ""
        )
        print(f"  {question.name}: {lanes}{published}")
    return 0


def _as_data(project: Project, variants: Sequence[Variant]) -> dict:
    return {
        "stacks": {name: stack.model_dump(mode="json") for name, stack in project.stacks.items()},
        "default_stacks": project.default_stacks,
        "reference_stack": project.reference_stack,
        "questions": [q.model_dump(mode="json") for q in project.questions],
        "scenarios": [
            {
                "name": app.name,
                "description": app.declaration.description,
                "seed": app.declaration.seed,
                "flavors": list(app.declaration.flavors),
                "endpoints": [
                    e.model_dump(mode="json", by_alias=True) for e in app.declaration.endpoints
                ],
            }
            for app in project.apps
        ],
        "variants": [
            {
                "id": v.id,
                "scenario": v.scenario,
                "app": v.app.name,
                "flavor": v.flavor,
                "stack": v.stack.name,
                "import": v.import_string,
                "endpoints": [e.name for e in v.endpoints],
                "quick_endpoints": [e.name for e in v.quick_endpoints],
            }
            for v in variants
        ],
    }

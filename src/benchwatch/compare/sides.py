"""The two sides of a compare: a stack name, a git ref (checked out in a temporary worktree), or
one variant (`github_user@latest`), optionally narrowed to one endpoint
(`payloads@latest:model_model_default_1kb`; ':' cannot occur in a variant id)."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from benchwatch.compare.borrow import borrow_declarations
from benchwatch.declarations.requests import Endpoint
from benchwatch.errors import UserError
from benchwatch.project.apps import OWN_REQUIREMENTS_STACK, is_own_stack
from benchwatch.project.files import PROJECT_FILE
from benchwatch.project.loading import load_project
from benchwatch.project.variants import Project, Variant, matches
from benchwatch.results.schema import Figure

REF_DEFAULT_PATTERNS = "*@latest"
ENDPOINT_SEPARATOR = ":"
NAMED_ENDPOINT_STEP = "the named endpoint"  # the step both sides' named endpoints share

Kind = Literal["stack", "ref", "variant"]


@dataclass
class Side:
    role: Literal["base", "head"]
    spec: str
    kind: Kind
    project: Project
    variants: list[Variant]
    commit: str | None = None
    endpoint: Endpoint | None = None  # a variant side narrowed to one endpoint
    declarations_from: str | None = None  # set when this side had none and borrows the other's

    def key(self, variant: Variant) -> str:
        """What a variant is paired on: the scenario for stacks, the variant id for refs;
        a variant side has one variant, paired with the other side's one."""
        if self.kind == "variant":
            return "the named variant"
        return variant.scenario if self.kind == "stack" else variant.id

    def steps(self) -> dict[str, str]:
        """Track.steps: a named endpoint is loaded at the same moment as the other side's."""
        return {self.endpoint.label: NAMED_ENDPOINT_STEP} if self.endpoint is not None else {}


def pair_key(base: Side, head: Side) -> Callable[[Figure], tuple]:
    """What figures of the two sides pair on: what they measure, without the stack or checkout;
    for variant sides also without the scenario, and without the endpoint when endpoints were named."""
    variant = base.kind == "variant"
    named = base.endpoint is not None
    return lambda figure: figure.pair_key(scenario=not variant, endpoint=not named)


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=120
    )


def ref_commit(root: Path, ref: str) -> str | None:
    if ref.startswith("-"):
        return None
    done = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return done.stdout.strip() if done.returncode == 0 else None


def kind_of(project: Project, spec: str) -> Kind:
    if spec in project.stacks or (project.own_stacks and is_own_stack(spec)):
        return "stack"
    if find_variant(project, spec.partition(ENDPOINT_SEPARATOR)[0]) is not None:
        return "variant"
    if ref_commit(project.root, spec):
        return "ref"
    if "@" in spec and not spec.startswith("@"):
        raise UserError(
            f"{spec!r} names no variant (see `benchwatch list`), and is no git ref of {project.root}"
        )
    raise UserError(
        f"{spec!r} is neither a stack ({', '.join(project.stacks)}), a variant (scenario@stack[:endpoint]) "
        f"nor a git ref of {project.root}"
    )


def find_variant(project: Project, variant_id: str) -> Variant | None:
    named = variant_id.partition("@")[2]  # own-next+PACKAGE is made when asked for
    extra = [named] if project.own_stacks and is_own_stack(named) else []
    every = project.variants(list(dict.fromkeys([*project.stacks, *project.own_stacks, *extra])))
    return next((v for v in every if v.id == variant_id), None)


def variant_side(project: Project, role: Literal["base", "head"], spec: str) -> Side:
    """A side naming one variant, narrowed to `:endpoint` (its name in `benchwatch list`) if given."""
    variant_id, _, endpoint_name = spec.partition(ENDPOINT_SEPARATOR)
    variant = find_variant(project, variant_id)
    assert variant is not None, "kind_of found it"
    if not endpoint_name:
        return Side(role, spec, "variant", project, [variant])
    endpoint = next((e for e in variant.endpoints if e.name == endpoint_name), None)
    if endpoint is None:
        names = ", ".join(e.name for e in variant.endpoints)
        raise UserError(
            f"--{role} {spec}: {variant_id} has no endpoint {endpoint_name!r}; its endpoints: {names}"
        )
    narrowed = dataclasses.replace(variant, endpoints=(endpoint,), quick_endpoints=(endpoint,))
    return Side(role, spec, "variant", project, [narrowed], endpoint=endpoint)


@contextmanager
def worktree(root: Path, ref: str) -> Iterator[Path]:
    """A detached checkout of `ref` in a temporary directory, removed afterwards."""
    parent = Path(tempfile.mkdtemp(prefix="benchwatch-ref-"))
    path = parent / "checkout"
    done = _git(root, "worktree", "add", "--detach", "--quiet", str(path), ref)
    if done.returncode != 0:
        shutil.rmtree(parent, ignore_errors=True)
        raise UserError(f"cannot check out {ref!r} in a worktree: {done.stderr.strip()[-200:]}")
    try:
        yield path
    finally:
        _git(root, "worktree", "remove", "--force", str(path))
        shutil.rmtree(parent, ignore_errors=True)
        _git(root, "worktree", "prune")


@contextmanager
def resolve(
    project: Project, base_spec: str, head_spec: str, patterns: str | None
) -> Iterator[tuple[Side, Side]]:
    kinds = (kind_of(project, base_spec), kind_of(project, head_spec))
    if kinds[0] != kinds[1]:
        raise UserError(
            "--base and --head must both be stacks, both git refs or both variants "
            f"(got a {kinds[0]} and a {kinds[1]})"
        )
    if kinds[0] == "variant":
        if patterns:
            raise UserError("-k does not apply when --base and --head name variants; drop it")
        base, head = (
            variant_side(project, "base", base_spec),
            variant_side(project, "head", head_spec),
        )
        if (base.endpoint is None) != (head.endpoint is None):
            raise UserError("name an endpoint on both sides (VARIANT:ENDPOINT) or on neither")
        yield base, head
        return
    if kinds[0] == "stack":
        chosen = project.select(patterns, list(dict.fromkeys([base_spec, head_spec])))
        base = Side(
            "base",
            base_spec,
            "stack",
            project,
            [v for v in chosen if v.stack.name == base_spec],
        )
        head = Side(
            "head",
            head_spec,
            "stack",
            project,
            [v for v in chosen if v.stack.name == head_spec],
        )
        yield base, head
        return
    inside = _inside_repository(project.root)
    with (
        worktree(project.root, base_spec) as base_top,
        worktree(project.root, head_spec) as head_top,
    ):
        base_root, head_root = base_top / inside, head_top / inside
        borrowed = None
        if not (base_root / PROJECT_FILE).is_file() and (head_root / PROJECT_FILE).is_file():
            borrow_declarations(head_root, base_root)  # the pull request that adds benchwatch
            borrowed = head_spec
        sides = []
        checkouts: tuple[tuple[Literal["base", "head"], str, Path], ...] = (
            ("base", base_spec, base_root),
            ("head", head_spec, head_root),
        )
        for role, spec, root in checkouts:
            try:
                checked_out = load_project(root)
            except UserError as exc:
                raise UserError(f"{role} {spec}: {exc}") from None
            variants = ref_variants(checked_out, patterns)
            sides.append(
                Side(
                    role, spec, "ref", checked_out, variants, commit=ref_commit(project.root, spec)
                )
            )
        sides[0].declarations_from = borrowed
        yield sides[0], sides[1]


def ref_variants(project: Project, patterns: str | None) -> list[Variant]:
    """The variants a compare of two git refs measures on a side: -k's, else _ref_default's."""
    return project.select(patterns) if patterns else _ref_default(project)


def _ref_default(project: Project) -> list[Variant]:
    """Without -k a ref compare measures the `latest` stack and every app's own requirements
    (a user's repository often has only those); failing both, every default variant."""
    variants = project.variants()
    chosen = [
        v
        for v in variants
        if matches(v.id, [REF_DEFAULT_PATTERNS]) or v.stack.name == OWN_REQUIREMENTS_STACK
    ]
    return chosen or variants


def _inside_repository(root: Path) -> Path:
    """Where the project sits inside its git repository (a worktree checks out the top level)."""
    done = _git(root, "rev-parse", "--show-prefix")
    return Path(done.stdout.strip()) if done.returncode == 0 else Path()


def pairs(base: Side, head: Side) -> tuple[list[tuple[Variant, Variant]], list[str]]:
    """(variant pairs to measure, variants present on one side only)."""
    head_by_key = {head.key(v): v for v in head.variants}
    base_keys = {base.key(v) for v in base.variants}
    matched = [(v, head_by_key[base.key(v)]) for v in base.variants if base.key(v) in head_by_key]
    alone = [f"{v.id} (base only)" for v in base.variants if base.key(v) not in head_by_key]
    alone += [f"{v.id} (head only)" for v in head.variants if head.key(v) not in base_keys]
    return matched, alone

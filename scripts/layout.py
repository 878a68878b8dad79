"""The package layout, checked against its rules and written out as docs/layout.md.

The packages of src/benchwatch form one pipeline, bottom to top (LAYERS): a module may import
only from its own package, from a package below it, or from the root's few modules. The rules:
no import (at the top of a file or inside a function) goes up or sideways, no module is over
MAX_LINES lines, the root holds at most MAX_ROOT_MODULES modules, every package says what it is
in its docstring, and docs/layout.md is what `--write` makes of the tree now.

    python scripts/layout.py --check    # exit 0, or one line per broken rule and exit 1
    python scripts/layout.py --write    # docs/layout.md from the tree
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "benchwatch"
LAYOUT_DOC = REPO / "docs" / "layout.md"
MAX_LINES = 400
MAX_ROOT_MODULES = 6

# bottom to top; packages on one line are side by side and may not import each other
LAYERS: list[tuple[str, ...]] = [
    ("figures",),
    ("declarations",),
    ("environments",),
    ("project",),
    ("results",),
    ("measure",),
    ("micro", "counts"),
    ("profiling",),
    ("judge",),
    ("trend",),
    ("report",),
    ("compare",),
    ("attribute",),
    ("publish",),
    ("scaffold",),
    ("pipeline",),
    ("commands",),
]

# "where is X", for the stages a newcomer looks for: each must name a module that exists
STAGES: dict[str, str] = {
    "environments": "environments/envs.py",
    "boot": "measure/boot.py",
    "verify": "measure/verify.py",
    "load": "measure/load.py",
    "count": "counts/all_targets.py",
    "judge": "judge/verdict.py",
    "compare": "compare/compare.py",
    "comment": "report/comment.py",
    "publish": "publish/site.py",
    "attribute": "attribute/attribute.py",
    "init": "scaffold/init.py",
}


@dataclass(frozen=True)
class Module:
    name: str  # dotted, under benchwatch: "measure.boot", "cli", "counts" (a package's __init__)
    path: Path
    doc: str  # the docstring's first sentence-line, "" when none


def modules(package: Path = PACKAGE) -> list[Module]:
    found = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(package).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        text = path.read_text()
        try:
            doc = ast.get_docstring(ast.parse(text)) or ""
        except SyntaxError:
            doc = ""
        found.append(Module(".".join(parts), path, doc.split("\n\n")[0].replace("\n", " ")))
    return found


def package_of(path: Path, package: Path = PACKAGE) -> str | None:
    rel = path.relative_to(package)
    return rel.parts[0] if len(rel.parts) > 1 else None


def imports(path: Path, top: str = "benchwatch") -> list[tuple[int, str]]:
    """(line, dotted module or name) of every import of `top` in the file, wherever it is."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == top:
                found += [(node.lineno, f"{top}.{a.name}") for a in node.names]
            elif node.module.startswith(top + "."):
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith(top + ".")]
    return found


def layer_of(layers: list[tuple[str, ...]]) -> dict[str, int]:
    return {name: level for level, names in enumerate(layers) for name in names}


def broken_rules(
    package: Path = PACKAGE,
    layers: list[tuple[str, ...]] = LAYERS,
    max_lines: int = MAX_LINES,
    max_root: int = MAX_ROOT_MODULES,
) -> list[str]:
    """One line per broken rule, none when the tree keeps them all."""
    top = package.name
    level = layer_of(layers)
    problems = []
    root_modules = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        where = path.relative_to(package.parent)
        lines = path.read_text().count("\n")
        if lines > max_lines:
            problems.append(f"{where}: {lines} lines, over {max_lines}: split it along a seam")
        own = package_of(path, package)
        if own is None:
            if path.name not in ("__init__.py", "__main__.py"):
                root_modules.append(path.name)
            continue
        if own not in level:
            problems.append(f"{where}: package {own!r} is in no layer: add it to LAYERS")
            continue
        if path.name == "__init__.py" and not ast.get_docstring(ast.parse(path.read_text())):
            problems.append(f"{where}: the package says nothing of itself: give it a docstring")
        for line, target in imports(path, top):
            parts = target.split(".")
            other = parts[1] if len(parts) > 1 and (package / parts[1]).is_dir() else None
            if other is None or other == own:
                continue
            if other not in level:
                problems.append(f"{where}:{line}: imports {target}, whose package is in no layer")
            elif level[other] >= level[own]:
                side = "sideways" if level[other] == level[own] else "up"
                problems.append(
                    f"{where}:{line}: imports {target} {side} ({own} may use only packages below it)"
                )
    if len(root_modules) > max_root:
        problems.append(
            f"{package.name}/: {len(root_modules)} root modules ({', '.join(root_modules)}), over {max_root}"
        )
    for stage, rel in STAGES.items() if package == PACKAGE else ():
        if not (package / rel).is_file():
            problems.append(f"STAGES[{stage!r}] = {rel}: no such module")
    return problems


def layout_markdown(package: Path = PACKAGE) -> str:
    """docs/layout.md: the stages, then each package bottom to top with its modules."""
    by_package: dict[str | None, list[Module]] = {}
    for module in modules(package):
        key = module.name.split(".")[0] if (package / module.name.split(".")[0]).is_dir() else None
        by_package.setdefault(key, []).append(module)
    out = [
        "# Layout of `src/benchwatch/`",
        "",
        "Generated by `python scripts/layout.py --write` from the tree and its docstrings; "
        "`tests/test_layout.py` fails when it is stale or when a rule is broken. The rules "
        f"(scripts/layout.py): a module imports only its own package, packages below it and the "
        f"root's modules; no module over {MAX_LINES} lines; at most {MAX_ROOT_MODULES} modules at the root.",
        "",
        "## Where is …",
        "",
        "| stage | module |",
        "|---|---|",
    ]
    out += [f"| {stage} | `{rel}` |" for stage, rel in STAGES.items()]
    out += [
        "",
        "## Packages, bottom to top",
        "",
        "| layer | package | what it holds |",
        "|---|---|---|",
    ]
    docs = {m.name: m.doc for m in modules(package)}
    for number, names in enumerate(LAYERS):
        for name in names:
            out.append(f"| {number} | `{name}/` | {docs.get(name, '')} |")
    out += ["", "## Modules", ""]
    root = by_package.pop(None, [])
    out += ["### the root", "", "| module | what it holds |", "|---|---|"]
    out += [f"| `{m.path.name}` | {m.doc} |" for m in root if m.name]
    for names in LAYERS:
        for name in names:
            out += ["", f"### `{name}/`", "", "| module | what it holds |", "|---|---|"]
            for m in by_package.get(name, []):
                if m.name == name:
                    continue
                out.append(f"| `{m.path.relative_to(package / name)}` | {m.doc} |")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        LAYOUT_DOC.write_text(layout_markdown())
        print(LAYOUT_DOC)
        return 0
    if argv == ["--check"]:
        problems = broken_rules()
        if LAYOUT_DOC.read_text() != layout_markdown():
            problems.append(
                f"{LAYOUT_DOC.relative_to(REPO)} is stale: run python scripts/layout.py --write"
            )
        for line in problems:
            print(line)
        return 1 if problems else 0
    print("usage: python scripts/layout.py --check | --write", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

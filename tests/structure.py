"""The shape of the `cardarena` package, read from its source with `ast`: its modules, what each
imports of the others, and its functions' sizes.

    python -m tests.structure        # the ten longest functions and those with most parameters

Used by tests/test_structure.py (layers, no cycles) and kept for the size figures issue reviews ask
for ("no function over 60 lines or with more than 8 parameters").
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: source folder -> the import name it installs as (pyproject.toml's package-dir)
SOURCE_PACKAGES = {"runner": "cardarena", "protocol": "cardarena.protocol"}


@dataclass(frozen=True)
class Function:
    module: str
    name: str
    lines: int
    parameters: int  # self and cls not counted
    is_click_command: bool  # its signature is the command line's, so its parameter count is the CLI's


def modules() -> dict[str, Path]:
    """Every module of the package by import name, with its source file."""
    found = {}
    for folder, package in SOURCE_PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [part for part in path.relative_to(ROOT / folder).with_suffix("").parts if part != "__init__"]
            found[".".join([package, *parts])] = path
    return found


def imports() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (an imported name that is a module counts as it)."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "cardarena":
                for alias in node.names:
                    child = f"{node.module}.{alias.name}"
                    targets.add(child if child in known else node.module)
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names if alias.name.split(".")[0] == "cardarena"}
        graph[name] = targets - {name}
    return graph


def functions() -> list[Function]:
    """Every function and method of the package."""
    found = []
    for module, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                count = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
                count += bool(args.vararg) + bool(args.kwarg)
                if args.args and args.args[0].arg in ("self", "cls"):
                    count -= 1
                click = any("command" in ast.unparse(decorator) for decorator in node.decorator_list)
                found.append(Function(module, node.name, node.end_lineno - node.lineno + 1, count, click))
    return found


def main() -> None:
    every = functions()
    print("longest functions:")
    for function in sorted(every, key=lambda f: -f.lines)[:10]:
        print(f"  {function.lines:4d} lines  {function.module}.{function.name}")
    print("most parameters (click commands marked *):")
    for function in sorted(every, key=lambda f: -f.parameters)[:10]:
        print(f"  {function.parameters:4d}{'*' if function.is_click_command else ' '}       {function.module}.{function.name}")


if __name__ == "__main__":
    main()

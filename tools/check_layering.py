"""Fail if a Spio package imports one above it: dims <- jit <- kernels <- perfmodel <- torch.

Scans every module under packages/*/src/spio/ with `ast` (nothing is imported), including
imports inside functions, and reports each offending import with file and line.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Lowest first. spio-torch ships two import packages: spio.torch and spio.functional.
LAYERS: dict[str, int] = {
    "dims": 0,
    "jit": 1,
    "kernels": 2,
    "perfmodel": 3,
    "torch": 4,
    "functional": 4,
}
# spio-jit must not depend on spio-dims either: it is usable on its own (callers pass
# their headers in), so it may import nothing of Spio but itself.
ISOLATED = {"jit"}


def imported_spio_packages(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Yield (spio subpackage, line) for every import of spio.<name> in a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "spio" and len(parts) > 1:
                    yield parts[1], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != "spio":
                continue
            if len(parts) > 1:
                yield parts[1], node.lineno
            else:
                for alias in node.names:
                    yield alias.name, node.lineno


def violations(root: Path = ROOT) -> list[str]:
    """Return one message per import that breaks the layering."""
    problems = []
    for source in sorted(root.glob("packages/*/src/spio/*/**/*.py")):
        owner = source.relative_to(root).parts[4]
        if owner not in LAYERS:
            problems.append(f"{source}: unknown spio package '{owner}'")
            continue
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
        for imported, line in imported_spio_packages(tree):
            if imported == owner or imported not in LAYERS:
                continue
            if owner in ISOLATED or LAYERS[imported] > LAYERS[owner]:
                problems.append(
                    f"{source.relative_to(root)}:{line}: spio.{owner} imports spio.{imported}, "
                    f"which it must not (allowed direction: dims <- jit <- kernels <- "
                    f"perfmodel <- torch; spio.jit imports no other spio package)"
                )
    return problems


def main() -> int:
    problems = violations()
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("layering ok: dims <- jit <- kernels <- perfmodel <- torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())

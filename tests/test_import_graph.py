"""The import graph of ``appliance/`` against the floors in CONTRACTS.md: a module imports
only its own floor or lower, no two packages import each other, and the features on
floor 5 (forms, werewolf) do not import each other. Read from the source (AST), every
import counted, the ones inside functions included."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import appliance

ROOT = Path(appliance.__file__).parent

#: CONTRACTS.md "Floors"
FLOORS = {
    "protocol": 1,
    "judge": 1,
    "errors": 1,
    "heap": 1,
    "config": 2,
    "models": 2,
    "chromium": 2,
    "llm": 3,
    "bus": 3,
    "voice": 4,
    "computer_agent": 4,
    "phone_agent": 4,
    "demo": 4,
    "forms": 5,
    "werewolf": 5,
    "simulate": 6,
    "bench": 7,
    "cli": 8,
}


def _imports(path: Path) -> set[str]:
    """The ``appliance.X`` names (X a top-level package or module) that ``path`` imports."""
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    package = parts[:-1]  # a module's package; for an __init__.py, its own
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *([node.module] if node.module else [])])
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        else:
            continue
        for name in names:
            bits = name.split(".")
            if bits[0] == "appliance" and len(bits) > 1 and bits[1] in FLOORS:
                found.add(bits[1])
    return found


def _graph() -> dict[str, dict[str, list[str]]]:
    """package → imported package → the files of the first that import it."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        src = rel.parts[0].removesuffix(".py")
        if src == "__init__":
            continue
        assert src in FLOORS, f"appliance/{rel}: {src} has no floor in CONTRACTS.md"
        for dst in _imports(path) - {src}:
            graph[src][dst].append(str(rel))
    return graph


def test_every_package_has_a_floor_and_the_reader_sees_imports():
    graph = _graph()
    assert "bus" in graph["cli"] and "judge" in graph["werewolf"]  # the reader finds real imports
    assert {p.name.removesuffix(".py") for p in ROOT.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()} - {
        "__init__"
    } <= set(FLOORS)


def test_no_import_reaches_a_higher_floor():
    graph = _graph()
    up = [
        f"{src} (floor {FLOORS[src]}) imports {dst} (floor {FLOORS[dst]}) in {', '.join(files)}"
        for src, dsts in graph.items()
        for dst, files in dsts.items()
        if FLOORS[dst] > FLOORS[src]
    ]
    assert up == []


def test_no_two_packages_import_each_other_and_the_features_stay_apart():
    graph = _graph()
    pairs = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if a in graph.get(b, {})})
    assert pairs == []
    assert "werewolf" not in graph["forms"] and "forms" not in graph["werewolf"]

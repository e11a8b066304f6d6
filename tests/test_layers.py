"""The import graph of python/ssdlab has no cycle.

Every `import` and `from ... import` statement counts, at module level or inside a function: a
function-local import hides a cycle from the interpreter, not from a reader. `from pkg import
name` is an edge to the submodule `pkg.name` when there is one, else to `pkg` (its __init__).

Run as a script to print the graph's cycles: python tests/test_layers.py [PACKAGE_DIR]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "ssdlab"


def modules(package: Path) -> dict[str, Path]:
    """{dotted module name: file} of every .py file under a package directory, and of every
    extension module that has a .pyi stub (ssdlab._core)."""
    out = {}
    for path in sorted([*package.rglob("*.py"), *package.rglob("*.pyi")]):
        parts = [package.name, *path.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out.setdefault(".".join(parts), path)
    return out


def import_graph(package: Path) -> dict[str, set[str]]:
    """{module: the package's modules it imports}."""
    mods = modules(package)
    graph: dict[str, set[str]] = {name: set() for name in mods}

    def target(name: str) -> str | None:
        """The package module `name` is, or lives in (a.b.c -> a.b when a.b.c is no module)."""
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        here = name if is_pkg else name.rpartition(".")[0]
        if path.suffix != ".py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found = [target(a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                found = [target(f"{origin}.{a.name}") if f"{origin}.{a.name}" in mods else target(origin)
                         for a in node.names]  # fmt: skip
            else:
                continue
            graph[name].update(m for m in found if m and m != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a list of modules, first == last) per strongly connected component that has one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(comp)

    for v in sorted(graph):
        if v not in index:
            connect(v)

    out = []
    for comp in components:
        members = set(comp)
        start = min(comp)
        # the shortest way back to `start` inside the component (breadth first)
        prev: dict[str, str] = {}
        frontier, seen = [start], {start}
        while frontier and start not in prev:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v] & members):
                    if w == start and start not in prev:
                        prev[start] = v
                    elif w not in seen:
                        seen.add(w)
                        prev[w] = v
                        nxt.append(w)
            frontier = nxt
        path, v = [start], prev[start]
        while v != start:
            path.append(v)
            v = prev[v]
        path.append(start)
        out.append(path[::-1])
    return sorted(out)


def describe(found: list[list[str]]) -> str:
    return "\n".join(" -> ".join(c) for c in found)


def test_ssdlab_has_no_import_cycle():
    graph = import_graph(PACKAGE)
    assert "ssdlab.sweep" in graph and "ssdlab.report.html" in graph  # the graph is the real one
    found = cycles(graph)
    assert not found, f"import cycles in python/ssdlab:\n{describe(found)}"


def test_report_does_not_import_studies():
    """The report renders any results directory; the registered studies build on it, not the reverse."""
    graph = import_graph(PACKAGE)
    report = [m for m in graph if m == "ssdlab.report" or m.startswith("ssdlab.report.")]
    assert report
    for m in report:
        assert not any(t == "ssdlab.studies" or t.startswith("ssdlab.studies.") for t in graph[m]), m


def test_the_check_finds_cycles(tmp_path):
    """A cycle through a function-local import, a relative `from . import` and a package __init__."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("import os\n\ndef f():\n    from .sub import b\n    return b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .. import c\n")
    (pkg / "c.py").write_text("from pkg.a import f\n")
    (pkg / "d.py").write_text("from . import f\n")  # the package itself: pkg -> a -> ... no way back
    graph = import_graph(pkg)
    assert graph["pkg.sub.b"] == {"pkg.c"} and graph["pkg.d"] == {"pkg"} and graph["pkg.a"] == {"pkg.sub.b"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]
    (pkg / "c.py").write_text("X = 1\n")
    assert cycles(import_graph(pkg)) == []
    (pkg / "c.py").write_text("def g():\n    from . import d\n")  # c -> d -> pkg -> a -> b -> c
    assert cycles(import_graph(pkg)) == [["pkg", "pkg.a", "pkg.sub.b", "pkg.c", "pkg.d", "pkg"]]


if __name__ == "__main__":
    found = cycles(import_graph(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE))
    print(describe(found) if found else "no import cycle")
    sys.exit(1 if found else 0)

"""The import graphs of python/ssdlab and of the engine crate's files have no cycle.

Python: every `import` and `from ... import` statement counts, at module level or inside a
function: a function-local import hides a cycle from the interpreter, not from a reader. `from pkg
import name` is an edge to the submodule `pkg.name` when there is one, else to `pkg` (its __init__).

Rust (crates/ssdlab-core/src): every path a file names through `use` or in its code (`crate::…`,
`super::…`, `self::…`, a child module's name) is an edge to the deepest module file it reaches.
A module's own ancestors are its context, not an import (a child uses what its parent declares),
and `#[cfg(test)]` modules are left out: tests may reach anywhere.

Run as a script to print the cycles: python tests/test_layers.py [PACKAGE_DIR | CRATE_SRC_DIR]
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "ssdlab"
CRATE_SRC = ROOT / "crates" / "ssdlab-core" / "src"


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


def rust_modules(src: Path) -> dict[str, Path]:
    """{module path (crate::a::b): file} of every .rs file under a crate's src directory."""
    out = {}
    for path in sorted(src.rglob("*.rs")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] in ("mod", "lib", "main"):
            parts.pop()
        out["::".join(["crate", *parts])] = path
    return out


_TEST_MODULE = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")
_USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.M)
_PATH = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_]\w*)+)")


def _without_tests(text: str) -> str:
    """The text less its `#[cfg(test)] mod … { … }` blocks (braces matched) and comments."""
    text = re.sub(r"//[^\n]*", "", text)
    while m := _TEST_MODULE.search(text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        text = text[: m.start()] + text[i:]
    return text


def _use_paths(tree: str) -> list[str]:
    """The paths of one `use` tree (`a::{b, c::{d as e}}` -> a::b, a::c::d)."""
    tree = re.sub(r"\s+", " ", tree).strip()
    if "{" not in tree:
        return [tree.split(" as ")[0].strip()]
    head, body = tree.split("{", 1)
    body = body[: body.rindex("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    parts.append(cur)
    return [p for part in parts if part.strip() for p in _use_paths(head + part.strip())]


def rust_import_graph(src: Path) -> dict[str, set[str]]:
    """{module: the crate's modules it uses}, ancestors left out."""
    mods = rust_modules(src)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        text = _without_tests(path.read_text())
        paths = [p for u in _USE.findall(text) for p in _use_paths(u)] + _PATH.findall(_USE.sub("", text))
        for p in paths:
            segs = [s for s in p.split("::") if s]
            if not segs:
                continue
            if segs[0] == "crate":
                full = segs
            elif segs[0] in ("super", "self"):
                full = name.split("::")
                while segs and segs[0] == "super":
                    full, segs = full[:-1], segs[1:]
                full = full + [s for s in segs if s != "self"]
            elif f"{name}::{segs[0]}" in mods:  # a child module named plainly
                full = name.split("::") + segs
            else:  # another crate, std, or an item in scope
                continue
            while full and "::".join(full) not in mods:
                full = full[:-1]
            target = "::".join(full)
            if target and target != name and not name.startswith(target + "::"):
                graph[name].add(target)
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


def test_engine_crate_has_no_import_cycle():
    graph = rust_import_graph(CRATE_SRC)
    # the graph is the real one: the pipeline's steps and the layers below them
    assert {"crate::engine::source", "crate::engine::sim"} <= graph["crate::engine::replay"]
    assert {"crate::engine::plan", "crate::engine::replay"} <= graph["crate::engine::flows"]
    assert "crate::buffer::clc" in graph["crate::buffer::integrated"]
    found = cycles(graph)
    assert not found, f"import cycles in {CRATE_SRC}:\n{describe(found)}"


def test_the_rust_check_finds_cycles(tmp_path):
    """Cycles through `use` trees, `super::`, a plain child name and a qualified path in code;
    ancestors and test modules are no edges."""
    src = tmp_path / "src"
    (src / "eng").mkdir(parents=True)
    (src / "lib.rs").write_text("mod eng;\npub mod util;\npub struct Shared;\n")
    (src / "util.rs").write_text("pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::eng::a::A;\n}\n")
    (src / "eng" / "mod.rs").write_text("mod a;\nmod b;\nuse a::A;\npub struct Ctx;\n")
    (src / "eng" / "a.rs").write_text("use super::{b::{B, C as D}, Ctx};\nuse crate::{util, Shared};\npub struct A;\n")
    (src / "eng" / "b.rs").write_text("pub struct B;\npub struct C;\n// crate::eng::a::A in a comment\n")
    graph = rust_import_graph(src)
    assert graph["crate::eng::a"] == {"crate::eng::b", "crate::util"}
    assert graph["crate::eng"] == {"crate::eng::a"} and graph["crate::util"] == set()
    assert cycles(graph) == []
    (src / "eng" / "b.rs").write_text("pub fn g() -> u32 { crate::eng::a::h() }\n")
    assert cycles(rust_import_graph(src)) == [["crate::eng::a", "crate::eng::b", "crate::eng::a"]]


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
    dirs = [Path(a) for a in sys.argv[1:]] or [PACKAGE, CRATE_SRC]
    found = [c for d in dirs for c in cycles(rust_import_graph(d) if any(d.glob("*.rs")) else import_graph(d))]
    print(describe(found) if found else "no import cycle")
    sys.exit(1 if found else 0)

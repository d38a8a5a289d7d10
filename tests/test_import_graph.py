"""The import graph, read statically (``ast``): the oracles share no code with the algorithms.

An oracle (``maxmargin.formulations``) and a candidate (``maxmargin.algorithms``) may share only
validation, the kernel engine, the judge (the certificate), the tolerances, the exceptions and the
result containers: a defect in shared numerical code would move the reference and the answer
together and no cross-check would see it. So the transitive closure of the oracles' imports
inside ``maxmargin`` -- every import statement anywhere in a module, lazy ones in functions
included, and every parent package an import runs -- must not contain ``maxmargin.algorithms``.
The package's module-level imports must also be free of cycles.

Run alone: ``python -m pytest tests/test_import_graph.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "maxmargin"
FORBIDDEN = "maxmargin.algorithms"


#: The packages that stand for a source folder of their own (setup.py's ``ROOTS``); the
#: others are found below them.
ROOT_PACKAGES = ("maxmargin", "maxmargin.formulations", "maxmargin.algorithms",
                 "maxmargin.verification")


def _package_dirs() -> dict[str, Path]:
    """Dotted package name -> the folder its modules are imported from (this checkout's
    folders in an editable install, site-packages' for a wheel); found by the import system,
    which imports nothing else of the package."""
    import importlib.util

    return {name: Path(importlib.util.find_spec(name).origin).parent for name in ROOT_PACKAGES}


def _modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file (packages by their ``__init__``)."""
    modules: dict[str, Path] = {}
    for package, directory in _package_dirs().items():
        for path in directory.rglob("*.py"):
            parts = path.relative_to(directory).with_suffix("").parts
            if "__pycache__" in parts:
                continue
            modules[".".join([package, *(p for p in parts if p != "__init__")])] = path
    return modules


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.Module, top_level: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements: all of them but those of a module-level ``__getattr__`` (PEP 562: run
    only when that attribute is asked for, e.g. ``maxmargin.MaxMarginClassifier``), or
    (``top_level``) those run when the module loads -- not in functions, not under
    ``if TYPE_CHECKING``."""
    stack = [node for node in tree.body
             if not (isinstance(node, ast.FunctionDef) and node.name == "__getattr__")]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if top_level and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if top_level and isinstance(node, ast.If) and _type_checking_only(node):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _resolve(name: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The package's modules that ``node`` (in module ``name``) imports, parents excluded."""
    targets: set[str] = set()
    if isinstance(node, ast.Import):
        candidates = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            here = name if _is_package(name) else name.rpartition(".")[0]
            for _ in range(node.level - 1):
                here = here.rpartition(".")[0]
            base = f"{here}.{base}" if base else here
        # ``from pkg import sub`` imports the module pkg.sub when it is one
        candidates = [base] + [f"{base}.{alias.name}" for alias in node.names]
    for candidate in candidates:
        while candidate and candidate not in MODULES:
            candidate = candidate.rpartition(".")[0]  # ``import a.b.attr`` -> a.b
        if candidate:
            targets.add(candidate)
    return targets


def _with_parents(name: str) -> set[str]:
    """``name`` and every package above it (importing a module runs their ``__init__``)."""
    parts = name.split(".")
    return {".".join(parts[:k]) for k in range(1, len(parts) + 1)} & MODULES.keys()


def import_graph(top_level: bool) -> dict[str, set[str]]:
    """Module -> the package's modules its import statements name (``top_level`` as in
    :func:`_import_nodes`)."""
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges: set[str] = set()
        for node in _import_nodes(tree, top_level):
            edges |= _resolve(name, node)
        edges.discard(name)
        graph[name] = edges
    return graph


def closure(graph: dict[str, set[str]], start: set[str]) -> dict[str, str | None]:
    """Every module reachable from ``start`` (parents' ``__init__`` included), each with the
    module that first imported it (None for a start)."""
    via: dict[str, str | None] = {}
    frontier = [(m, None) for s in start for m in sorted(_with_parents(s))]
    while frontier:
        name, parent = frontier.pop()
        if name in via:
            continue
        via[name] = parent
        for target in sorted(graph[name]):
            frontier.extend((m, name) for m in sorted(_with_parents(target)) if m not in via)
    return via


def _chain(via: dict[str, str | None], name: str) -> str:
    path = [name]
    while via[path[-1]] is not None:
        path.append(via[path[-1]])  # type: ignore[arg-type]
    return " <- ".join(path)


def test_the_graph_sees_the_package():
    assert {"maxmargin", "maxmargin.formulations._common", "maxmargin.algorithms.smo",
            "maxmargin.certificate", "maxmargin.kernels.base"} <= MODULES.keys()
    graph = import_graph(top_level=False)
    # the walker finds a known edge, and a known path into the algorithms
    assert "maxmargin.certificate" in graph["maxmargin.formulations._common"]
    assert FORBIDDEN in closure(graph, {"maxmargin.methods"})
    assert FORBIDDEN in closure(graph, {"maxmargin.estimators"})


def test_oracles_import_nothing_from_the_algorithms():
    graph = import_graph(top_level=False)
    oracles = {name for name in MODULES if name.startswith("maxmargin.formulations")}
    via = closure(graph, oracles)
    leaks = sorted(name for name in via if name == FORBIDDEN or name.startswith(FORBIDDEN + "."))
    assert not leaks, "the oracles reach the algorithms: " + "; ".join(
        _chain(via, name) for name in leaks)


def test_solving_oracles_loads_no_algorithm():
    """The same, at run time: a fresh interpreter solves with every oracle family and has not
    loaded a module of ``maxmargin.algorithms``."""
    script = textwrap.dedent("""
        import sys
        import numpy as np
        from maxmargin.formulations import hinge_loss, hull_distance, svm_dual, oracle_consensus
        X = np.array([[0.0, 0.0], [1.0, 0.2], [2.0, 2.0], [3.0, 1.5], [0.5, 1.0]])
        y = np.array([-1.0, -1.0, 1.0, 1.0, 1.0])
        svm_dual(X, y, 1.0, kernel="rbf").solve()
        hinge_loss(X, y, 10.0).solve()
        hull_distance(X[y < 0], X[y > 0]).solve()
        oracle_consensus(lambda: svm_dual(X, y, 2.0))
        print(sorted(m for m in sys.modules if m.startswith("maxmargin.algorithms")))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    for root in sorted(graph):
        if root in state:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        state[root] = 1
        while stack:
            node, edges = stack[-1]
            nxt = next(edges, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                names = [n for n, _ in stack]
                return names[names.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(sorted(graph[nxt]))))
    return None


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycles():
    graph = import_graph(top_level=True)
    # a package importing its own sub-modules at load is the usual re-export, not a cycle
    # back into it; sub-modules importing their parent package are counted
    for name in graph:
        if _is_package(name):
            graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])

"""Sphinx extension: the API reference and the command help, generated before each build.

API reference: one page per public module (``docs/api/<module>.rst``), listing every name of
the module's ``__all__``, so a name added to an ``__all__`` appears without editing the docs.
The public modules are :data:`SUBPACKAGES`, the package itself and every module of
``maxmargin/`` with an ``__all__`` whose name does not start with ``_`` (a new
``maxmargin/methods.py`` is picked up), except :data:`EXCLUDE`.

Each object is documented once, on the page of its *home*: the listed module its
``__module__`` falls under (``maxmargin.formulations.dual.svm_dual`` lives on the
``maxmargin.formulations`` page), or for constants the first module, leaf modules first, that
exports it. The other modules that export it link to that page (``maxmargin.SVMSolution`` ->
``maxmargin.results.SVMSolution``). Functions and classes get a page each
(``docs/api/generated/``; autodoc reads them, numpydoc renders their docstrings), listed on the
module page with the first paragraph of their docstring; constants are ``py:data`` entries with
their ``#:`` comment from the source.

References to a re-exported name (``maxmargin.SVMSolution``) or to a name under its defining
module (``maxmargin.algorithms.smo.smo``) link to its home page.

Command help: ``docs/api/commands.inc.md`` holds ``maxmargin --help`` and every command's
``--help`` (a command added to the CLI appears there), included by the commands page.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import pkgutil
import shutil
import sys
from pathlib import Path
from typing import Any

from sphinx.pycode import ModuleAnalyzer

PACKAGE = "maxmargin"
#: Subpackages installed from their own folders (``pkgutil`` on ``maxmargin/`` cannot see them).
SUBPACKAGES = ("maxmargin.formulations", "maxmargin.algorithms", "maxmargin.verification")
#: Documented elsewhere: the command line has its own page (from ``--help``).
EXCLUDE = {"maxmargin.cli"}
#: Longest constant value shown in full.
MAX_VALUE = 70


def public_modules() -> list[str]:
    """Leaf modules (sorted), then the subpackages, then the package itself."""
    package = importlib.import_module(PACKAGE)
    leaves = []
    for info in pkgutil.iter_modules(package.__path__, PACKAGE + "."):
        if info.name.rsplit(".", 1)[1].startswith("_") or info.name in EXCLUDE:
            continue
        if hasattr(importlib.import_module(info.name), "__all__"):
            leaves.append(info.name)
    return sorted(leaves) + list(SUBPACKAGES) + [PACKAGE]


def homes(modules: list[str]) -> dict[int, tuple[str, str]]:
    """``id(object) -> (home module, name)`` for every exported object."""
    found: dict[int, tuple[str, str]] = {}
    listed = set(modules)
    # functions and classes: the listed module their __module__ falls under
    for module in modules:
        for name in importlib.import_module(module).__all__:
            obj = getattr(importlib.import_module(module), name)
            origin = getattr(obj, "__module__", None)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or origin is None:
                continue
            parts = origin.split(".")
            owner = next((".".join(parts[:k]) for k in range(len(parts), 0, -1)
                          if ".".join(parts[:k]) in listed), None)
            if owner is not None and name in importlib.import_module(owner).__all__:
                found.setdefault(id(obj), (owner, name))
    # everything else: the first module (leaves first) that exports it
    for module in modules:
        for name in importlib.import_module(module).__all__:
            found.setdefault(id(getattr(importlib.import_module(module), name)), (module, name))
    return found


def kind(obj: Any) -> str:
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return "function"
    return "data"


def comment_doc(module: str, name: str) -> list[str]:
    """The ``#:`` comment of ``name`` in ``module`` or one of its submodules."""
    for candidate in sorted(m for m in sys.modules if m == module or m.startswith(module + ".")):
        with contextlib.suppress(Exception):
            docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
            if ("", name) in docs and getattr(sys.modules[candidate], name, None) is getattr(
                sys.modules[module], name
            ):
                return [line for line in docs[("", name)] if line.strip()]
    return []


SECTIONS = (("function", "Functions"), ("class", "Classes"),
            ("exception", "Warnings and exceptions"))


def summary(obj: Any) -> str:
    """The first paragraph of the docstring, on one line (whole: a first *sentence* cut at
    ``x . z`` would split an inline literal)."""
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split())


def stub_page(module: str, name: str, what: str) -> str:
    """The page of one function or class (numpydoc renders its docstring)."""
    title = f"``{module}.{name}``"
    out = [title, "=" * len(title), "", f".. currentmodule:: {module}", ""]
    if what == "function":
        out.append(f".. autofunction:: {name}")
    else:
        out += [f".. autoclass:: {name}", "   :members:", "   :special-members: __call__",
                "   :show-inheritance:"]
    return "\n".join(out) + "\n"


def module_page(module: str, home: dict[int, tuple[str, str]], folder: Path) -> str:
    """The page of ``module`` (its docstring, a table per kind of name, the constants, links
    to re-exported names); writes the stub pages of its functions and classes into
    ``folder``."""
    mod = importlib.import_module(module)
    title = f"``{module}``"
    out = [title, "=" * len(title), "", f".. automodule:: {module}", "   :no-members:", "",
           f".. currentmodule:: {module}", ""]
    here: dict[str, list[str]] = {}
    elsewhere = []
    for name in sorted(mod.__all__, key=str.lower):
        obj = getattr(mod, name)
        where = home[id(obj)]
        if where[0] == module:
            here.setdefault(kind(obj), []).append(name)
        else:
            elsewhere.append((name, f"{where[0]}.{where[1]}"))
    stubs = []
    for key, heading in SECTIONS:
        if key not in here:
            continue
        out += [heading, "-" * len(heading), "", ".. list-table::", "   :widths: 30 70", ""]
        for name in here[key]:
            text = summary(getattr(mod, name)) or "(no docstring)"
            out += [f"   * - :py:obj:`{name}`", f"     - {text}"]
            stub = f"{module}.{name}"
            (folder / f"{stub}.rst").write_text(
                stub_page(module, name, "function" if key == "function" else "class"))
            stubs.append(stub)
        out.append("")
    if "data" in here:
        out += ["Constants", "---------", ""]
        for name in here["data"]:
            value = repr(getattr(mod, name))
            out.append(f".. py:data:: {name}")
            if len(value) <= MAX_VALUE:
                out.append(f"   :value: {value}")
            else:
                out.append(f"   :type: {type(getattr(mod, name)).__name__}")
            out += [""] + [f"   {line}" for line in comment_doc(module, name)] + [""]
    if elsewhere:
        heading = "Also exported here"
        out += [heading, "-" * len(heading), "",
                "Names this module re-exports; each is documented on its home page.", ""]
        out += [f"- ``{module}.{name}``: :py:obj:`{target}`" for name, target in elsewhere]
        out.append("")
    if stubs:
        out += [".. toctree::", "   :hidden:", ""] + [f"   generated/{s}" for s in stubs] + [""]
    return "\n".join(out)


def command_help(folder: Path) -> None:
    """``commands.inc.md``: ``maxmargin --help`` and each command's ``--help``, as Markdown
    sections for the commands page to include."""
    from maxmargin.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = ["## `maxmargin --help`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for command, subparser in sub.choices.items():
        out += [f"## `maxmargin {command}`", "", "```text", subparser.format_help().rstrip(),
                "```", ""]
    (folder / "commands.inc.md").write_text("\n".join(out))


#: ``id(object) -> (home module, name)`` of the last generation (for :func:`resolve_alias`).
HOMES: dict[int, tuple[str, str]] = {}


def lookup(path: str) -> Any:
    """The object a dotted path names (``maxmargin.SVMSolution``,
    ``maxmargin.algorithms.smo.smo``), or None."""
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attr in parts[split:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def resolve_alias(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """A Python reference to a name documented under another path (a re-export such as
    ``maxmargin.SVMSolution``, or a defining module such as ``maxmargin.algorithms.smo.smo``)
    links to the name's home page."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    module = node.get("py:module")
    candidates = [target] + ([f"{module}.{target}"] if module else [])
    for path in candidates:
        obj = lookup(path) if path.startswith(PACKAGE) else None
        if obj is None or id(obj) not in HOMES:
            continue
        home = ".".join(HOMES[id(obj)])
        if home == path:
            return None
        return env.domains["py"].resolve_xref(env, node["refdoc"], app.builder, "obj", home,
                                              node, contnode)
    return None


def generate(app: Any, config: Any) -> None:
    """Write ``docs/api/`` afresh (its stubs included): run at ``config-inited``, before
    Sphinx looks for source files."""
    folder = Path(app.srcdir) / "api"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    modules = public_modules()
    home = homes(modules)
    HOMES.clear()
    HOMES.update(home)
    (folder / "generated").mkdir()
    for module in modules:
        page = module_page(module, home, folder / "generated")
        (folder / f"{module}.rst").write_text(page)
    with contextlib.redirect_stdout(io.StringIO()):
        command_help(folder)


def skip_member(app: Any, what: str, name: str, obj: Any, skip: bool, options: Any) -> Any:
    """Leave out scikit-learn's generated metadata-routing methods (``set_fit_request``, ...):
    their docstrings point into scikit-learn's own documentation."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", generate)
    app.connect("autodoc-skip-member", skip_member)
    app.connect("missing-reference", resolve_alias)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

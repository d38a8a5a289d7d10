"""Packaging: every module of the source folders is in the package setup.py builds, and every
module of the package imports, whether it runs from this checkout or from an installed wheel
(CI runs this file both ways)."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.resources
import importlib.util
import pkgutil
from pathlib import Path

import maxmargin

ROOT = Path(__file__).resolve().parent.parent
SOURCE_TREE = (ROOT / "setup.py").is_file() and (ROOT / "algorithms").is_dir()


#: The installed packages that stand for a source folder of their own (setup.py's ``ROOTS``):
#: an editable install maps them by an import hook that ``pkgutil`` does not walk into.
ROOT_PACKAGES = ("maxmargin", "maxmargin.formulations", "maxmargin.algorithms",
                 "maxmargin.verification")


def package_modules() -> list[str]:
    """Every module and package below ``maxmargin``, as the import system finds them."""
    names = set()
    for root in ROOT_PACKAGES:
        package = importlib.import_module(root)
        names.add(root)
        names.update(m.name for m in pkgutil.walk_packages(package.__path__, root + "."))
    return sorted(names)


def test_every_module_of_the_package_imports():
    names = package_modules()
    for name in names:
        importlib.import_module(name)
    for sub in ("kernels", "formulations", "algorithms", "algorithms.smo", "verification"):
        assert f"maxmargin.{sub}" in names
    assert (importlib.resources.files("maxmargin") / "data" / "heart_scale").is_file()


def source_modules() -> set[str]:
    """Module names of the ``.py`` files below the source folders of setup.py's ``ROOTS``."""
    spec = importlib.util.spec_from_file_location("maxmargin_setup", ROOT / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)  # its `setup()` call is behind `__main__`
    packages, folders = setup.discover()
    found = set()
    for name, folder in folders.items():
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            package = ".".join([name, *rel.parts[:-1]])
            assert package in packages, f"{path} is in no package setup.py finds"
            found.add(".".join([name, *parts]))
    return found


def test_setup_finds_every_source_module_or_the_wheel_holds_them():
    if SOURCE_TREE:  # this checkout: setup.py's discovery leaves nothing out
        modules = source_modules()
        assert modules == set(package_modules())
    else:  # an installed wheel: its record lists every module, and the data files
        files = {str(f) for f in importlib.metadata.files("maxmargin")}
        for name in package_modules():
            stem = name.replace(".", "/")
            assert f"{stem}.py" in files or f"{stem}/__init__.py" in files, name
        assert "maxmargin/data/heart_scale" in files
        assert not Path(maxmargin.__file__).resolve().is_relative_to(ROOT)


def test_the_citation_names_the_installed_version():
    text = (ROOT / "CITATION.cff").read_text()
    assert text.startswith("cff-version: 1.2.0\n")
    version = next(line.split(":", 1)[1].strip() for line in text.splitlines()
                   if line.startswith("version:"))
    assert version == importlib.metadata.version("maxmargin") == maxmargin.__version__
    for key in ("title:", "authors:", "license: BSD-3-Clause", "message:"):
        assert f"\n{key}" in text

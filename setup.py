"""Package discovery for setuptools: every package below each source folder, found, not listed.

The package ``maxmargin`` is assembled from four folders of this repository (the mapping is
:data:`ROOTS`); setuptools' own discovery cannot rename folders, so each folder's packages are
found with ``find_namespace_packages`` and prefixed with the name it is installed under. A new
subpackage is therefore part of every wheel without a change here; ``tests/test_packaging.py``
checks that no module is left out. The rest of the metadata is in
``pyproject.toml``.
"""

from __future__ import annotations

from setuptools import find_namespace_packages, setup

#: Installed package name -> the folder of this repository that holds it.
ROOTS = {
    "maxmargin": "maxmargin",
    "maxmargin.formulations": "formulations",
    "maxmargin.algorithms": "algorithms",
    "maxmargin.verification": "verification",
}


def discover(roots: dict[str, str] = ROOTS) -> tuple[list[str], dict[str, str]]:
    """Every package below each root (``find_namespace_packages``: data folders such as
    ``maxmargin/data`` count too), and the folder mapping setuptools needs for them."""
    packages: list[str] = []
    for name, folder in roots.items():
        packages.append(name)
        subs = find_namespace_packages(folder, exclude=["__pycache__", "*.__pycache__"])
        packages.extend(f"{name}.{sub}" for sub in subs)
    return sorted(set(packages)), dict(roots)


if __name__ == "__main__":
    found, package_dir = discover()
    setup(packages=found, package_dir=package_dir)

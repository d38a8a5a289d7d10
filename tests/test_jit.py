"""The cold-cache test and the first-compile notice, on a module compiled in a fresh folder."""

from __future__ import annotations

import importlib.util
import json
import logging
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from maxmargin import _jit

_SOURCE = """
from numba import njit


@njit(cache={cache})
def twice(x):
    return 2 * x
"""


def _fresh_module(tmp_path: Path, name: str, cache: bool = True) -> ModuleType:
    """A module with one compiled function, in a folder no cache has seen."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(_SOURCE.format(cache=cache)))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_cache_is_cold_until_the_first_compile(tmp_path: Path) -> None:
    module = _fresh_module(tmp_path, "mm_jit_probe_cold")
    assert _jit.cache_is_cold(module.twice)
    assert module.twice(3) == 6
    assert not _jit.cache_is_cold(module.twice)  # the index is on disk now
    uncached = _fresh_module(tmp_path, "mm_jit_probe_uncached", cache=False)
    assert not _jit.cache_is_cold(uncached.twice)  # no on-disk cache: nothing to announce


def test_first_compile_is_announced_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    module = _fresh_module(tmp_path, "mm_jit_probe_notice")
    quiet = _fresh_module(tmp_path, "mm_jit_probe_quiet")
    with caplog.at_level(logging.WARNING, logger="maxmargin"):
        _jit.note_compile(module.twice, "the probe", "no time at all")
        module.twice(1)
        _jit.note_compile(module.twice, "the probe", "no time at all")
        with _jit.notices_off():
            _jit.note_compile(quiet.twice, "the quiet probe", "no time at all")
        _jit.note_compile(quiet.twice, "the quiet probe", "no time at all")  # once, after
    messages = [r.getMessage() for r in caplog.records if r.name == "maxmargin"]
    assert len(messages) == 2
    assert messages[0].startswith("compiling the probe into Numba's on-disk cache")
    assert "no time at all" in messages[0] and "maxmargin compile" in messages[0]
    assert messages[1].startswith("compiling the quiet probe")


def test_smo_and_the_nearest_point_methods_announce_their_drivers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from maxmargin.algorithms import gilbert_svm, smo, wolfe

    solver = sys.modules["maxmargin.algorithms.smo.solver"]  # where SMO's loops are called
    loops = sys.modules["maxmargin.algorithms.smo.loops"]
    nearest = sys.modules["maxmargin.algorithms._nearest_point"]
    seen: list[object] = []
    for module in (solver, nearest):
        monkeypatch.setattr(module, "note_compile", lambda d, what, about: seen.append(d))
    X = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 1.0], [4.0, 1.0]])
    y = np.array([-1.0, -1.0, 1.0, 1.0])
    smo(X, y)
    smo(X, y, working_set="platt")
    gilbert_svm(X, y, method="wolfe")
    assert seen[:1] == [loops.solve_pairs]
    assert loops.solve_platt in seen and wolfe.wolfe_loop in seen


_SNAPSHOT = """
import json, sys
import numba
from numba.core import codegen, compiler, config, targetconfig, typed_passes


def snapshot():
    classes = (targetconfig.TargetConfig, compiler.Flags, codegen.JITCodeLibrary,
               typed_passes.NativeLowering, numba.core.dispatcher.Dispatcher)
    return {
        "config": {k: repr(v) for k, v in vars(config).items() if k.isupper()},
        "classes": {c.__name__: {k: id(v) for k, v in vars(c).items()} for c in classes},
        "values": id(targetconfig.TargetConfig.values),
        "options": sorted(compiler.Flags.options),
    }


before = snapshot()
import importlib, pkgutil
import maxmargin
import maxmargin.algorithms
for package in (maxmargin, maxmargin.algorithms):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
import numpy as np
from maxmargin.algorithms import smo
X = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 1.0], [4.0, 1.0]])
smo(X, np.array([-1.0, -1.0, 1.0, 1.0]), kernel="rbf")
after = snapshot()
print(json.dumps({"same": before == after, "modules": len(sys.modules)}))
"""


def test_the_package_leaves_numbas_configuration_as_it_found_it() -> None:
    """Importing every module of the package and running a solver changes no option of
    ``numba.config``, no attribute of Numba's compile-flag, code-library, lowering and
    dispatcher classes (a fresh process, compared before and after)."""
    out = subprocess.run([sys.executable, "-c", _SNAPSHOT], capture_output=True, text=True,
                         check=True, timeout=600).stdout
    assert json.loads(out.strip().splitlines()[-1])["same"] is True


#: The only Numba modules the package imports: its public API and the documented extension
#: API (``numba.core.cgutils`` and ``AttributeTemplate`` as Numba's extension examples use).
_NUMBA_IMPORTS = {
    "import numba",
    "from numba import njit",
    "from numba import prange",
    "from numba import types",
    "from numba.core import cgutils",
    "from numba.core.typing.templates import AttributeTemplate",
    "from numba.extending import",
}
#: Names of Numba's internals, and ``jit`` options its documentation does not list.
_PRIVATE = re.compile(
    r"_dynfunc|numba\.core\.(caching|codegen|compiler|targetconfig|typed_passes|imputils)"
    r"|numba\.np\.|numba\._|pipeline_class|no_cpython_wrapper|no_cfunc_wrapper|forceinline"
    r"|\b_nrt\b|_reload_init|\._cache\b"
)


def test_the_package_uses_numbas_public_api_only() -> None:
    import importlib.util

    # the folders the package is imported from (this checkout, or an installed wheel)
    folders = [Path(importlib.util.find_spec(name).origin).parent
               for name in ("maxmargin", "maxmargin.algorithms", "maxmargin.formulations",
                            "maxmargin.verification")]
    sources = sorted({p for folder in folders for p in folder.rglob("*.py")})
    assert len(sources) > 20
    for path in sources:
        text = path.read_text()
        for line in text.splitlines():
            stripped = line.strip()
            if re.match(r"(from|import) numba\b", stripped):
                assert any(stripped.startswith(ok) for ok in _NUMBA_IMPORTS), (path, line)
        assert not _PRIVATE.search(text), (path, _PRIVATE.search(text))


_LITERALS = """
import gc, warnings
import numpy as np, scipy.sparse as sp
from numba.core.registry import CPUDispatcher
import maxmargin.algorithms as A
from maxmargin.verification.warmup import warm_up
warnings.simplefilter("ignore")
warm_up()
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3)); y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
for method in ("gilbert", "mdm", "wolfe"):
    A.gilbert_svm(X, y, nu=0.3, method=method, kernel="rbf")
    A.one_class_hull(X, 0.3, method=method, kernel="rbf")
A.nu_smo(X, y, 0.05, kernel="linear")
A.dcd(sp.csr_matrix(X), y, C=1.0)
A.dcd_svc(X, y, C=1.0)
for o in gc.get_objects():
    if isinstance(o, CPUDispatcher) and o.py_func.__module__.startswith("maxmargin"):
        for sig in o.signatures:
            bad = [str(a) for a in sig if "Literal" in str(a) or "Omitted" in str(a)]
            if bad:
                print(o.py_func.__module__ + "." + o.py_func.__qualname__, bad)
"""


def test_no_compiled_function_is_specialised_on_a_literal_argument() -> None:
    # A constant argument (``f(x, 0)``, or a counter that starts at a literal 0) is typed as a
    # literal, and Numba compiles the callee once more for it: the same machine code twice.
    out = subprocess.run([sys.executable, "-c", _LITERALS], capture_output=True, text=True,
                         check=True).stdout
    assert out == ""

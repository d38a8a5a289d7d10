"""The ``maxmargin`` command line.

============================================  ==================================================
``maxmargin verify [--suite quick|full]``     run the verification suite, print the table and a
``[--case PATTERN] [--json FILE|-] [--list]`` summary; exit 0 when every check passes, 1 when
``[--data PATH ...]``                         one fails, 2 on a usage error
``maxmargin report [--out DIR] [--force]``    run the suite and regenerate the validation report
``[--suite quick|full] [--case PATTERN]``     (Markdown, figures, results.json/csv), default
                                              ``reports/``; exit 0/1/2 like ``verify``
``maxmargin audit --solver NAME``             judge a third-party solver's answers
``[--suite ...|--data PATH] [--json FILE]``   (:mod:`maxmargin.verification.audit`); exit 1 on
                                              a wrong answer
``maxmargin --version``                       the installed version
============================================  ==================================================

Each command is one ``_add_<name>(subparsers)`` function that registers its arguments and the
function to run (``set_defaults(run=...)``); adding a command is adding one such function to
:data:`COMMANDS`. The benchmarks are not a command of the installed package: they live in the
repository's ``benchmarks/`` (``python -m benchmarks``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

__all__ = ["build_parser", "main", "COMMANDS"]


def _suite_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--suite", choices=("quick", "full", "random", "conditioned"),
                        default="quick",
                        help="which cases to run: the catalogue (quick, full), the random "
                        "adversarial campaign (random, with --count/--seed) or its "
                        "ill-conditioned family (conditioned: C max K_ii from 1e3 to 1e7, "
                        "judged against an outside solver); default: quick")
    parser.add_argument("--case", metavar="PATTERN", default=None, action="append",
                        help="only the cases whose name matches PATTERN (glob or substring); "
                        "repeat it or separate patterns with commas")
    parser.add_argument("--count", type=int, default=None, metavar="N",
                        help="random suite: number of cases (required with --suite random)")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="random suite: campaign seed (default 0); same seed, same cases")
    parser.add_argument("--start", type=int, default=0, metavar="I",
                        help="random suite: index of the first case (default 0); "
                        "--start I --count 1 reruns exactly case I")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="wall-clock guard per (case x method): a method running longer "
                        "becomes a failed row (default 120, and with --data one second per "
                        "100,000 stored entries of the data if that is more; 0 runs "
                        "unguarded in-process)")
    sweep = parser.add_argument_group(
        "sweeps (Dask; pip install -e \".[distributed]\")",
        "Each case is one task; the rows are the same as a serial run's.")
    sweep.add_argument("--workers", type=int, default=None, metavar="N",
                       help="run on a new local Dask cluster of N one-thread processes")
    sweep.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run on an existing Dask cluster (e.g. tcp://host:8786)")
    sweep.add_argument("--resume", default=None, metavar="FILE",
                       help="skip the (case, method) rows already in FILE (a --json results "
                       "file) and keep them; results are streamed to FILE unless --json names "
                       "another file")
    data = parser.add_argument_group(
        "your own data (instead of the catalogue)",
        "A LIBSVM/svmlight file (zero- or one-based), a CSV file or an .npz file (arrays X, y). "
        "Two classes are mapped to -1/+1 (+1 = the label that sorts last); more classes give "
        "one problem per pair (one-vs-one), or --positive LABEL against the rest.")
    data.add_argument("--data", metavar="PATH", default=None, help="the data file")
    data.add_argument("--label-column", metavar="NAME|INDEX", default=None,
                      help="CSV: the label column (default: the last one)")
    data.add_argument("--positive", metavar="LABEL", default=None,
                      help="one class (+1) against the rest (-1)")
    data.add_argument("--kernel", choices=("linear", "rbf", "poly"), default="linear",
                      help="kernel (default linear)")
    data.add_argument("--C", type=float, default=1.0, help="box bound C (default 1)")
    data.add_argument("--gamma", default="scale",
                      help="rbf/poly gamma: a number, 'scale' (default) or 'auto'")
    data.add_argument("--degree", type=int, default=3, help="poly degree (default 3)")
    data.add_argument("--coef0", type=float, default=0.0, help="poly coef0 (default 0)")
    data.add_argument("--methods", default=None, metavar="M1,M2",
                      help="which methods run (comma-separated; default "
                      "oracle, smo, primal/certified (linear); also smo/tight, smo/platt/certified")


def _gamma(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def _data_cases(args: argparse.Namespace) -> Any:
    from pathlib import Path

    from maxmargin.datasets import load_data
    from maxmargin.verification.cases import data_cases

    X, labels = load_data(args.data, label_column=args.label_column)
    methods = None if args.methods is None else tuple(
        m.strip() for m in args.methods.split(",") if m.strip())
    params: dict[str, Any] = {}
    if args.kernel != "linear":
        params["gamma"] = _gamma(args.gamma)
    if args.kernel == "poly":
        params.update(degree=args.degree, coef0=args.coef0)
    return data_cases(X, labels, name=Path(args.data).stem, C=args.C, kernel=args.kernel,
                      methods=methods, positive=args.positive, **params)


def _run(args: argparse.Namespace) -> Any:
    from pathlib import Path

    from maxmargin._jit import notices_off
    from maxmargin.verification.suite import numba_cache_is_cold, run_suite

    if args.suite in ("random", "conditioned") and args.count is None:
        raise ValueError(f"--suite {args.suite} needs --count N (and optionally --seed S).")
    patterns = None
    if args.case:
        patterns = [p for item in args.case for p in item.split(",") if p]
    cases = None
    from maxmargin.verification.case import DATA_ENTRIES_PER_S, DEFAULT_TIMEOUT_S

    timeout = DEFAULT_TIMEOUT_S if args.timeout is None else args.timeout
    if args.data is not None:
        cases = _data_cases(args)
        for case in cases:
            n, d = case.X.shape
            nnz = f", {case.X.nnz} non-zeros (sparse)" if hasattr(case.X, "nnz") else ""
            print(f"{case.name}: {case.tags[0]}; {n} rows x {d} features{nnz}; {case.tags[1]}",
                  file=sys.stderr)
            if args.timeout is None:  # the guard grows with the data (a reference's passes)
                entries = case.X.nnz if hasattr(case.X, "nnz") else n * d
                timeout = max(timeout, entries / DATA_ENTRIES_PER_S)
    ahead: Any = contextlib.nullcontext()
    if args.scheduler is None and numba_cache_is_cold():
        # an empty cache: compile on every core (as `maxmargin compile`) while the guarded
        # cases run, each waiting for its pieces (warmup.compiling_ahead); unguarded cases or
        # the local Dask workers (--workers: one cache) load the compiled code afterwards;
        # SMO's driver for wide data only for a data file (no catalogue problem selects it)
        jobs = _default_jobs()
        if not args.quiet:
            print(f"compiling the Numba loops on {jobs} core{'s' if jobs > 1 else ''} (first "
                  f"run only; {COMPILE_NOTICE}) ...", file=sys.stderr, flush=True)
        from maxmargin.verification.warmup import compile_all, compiling_ahead

        if args.workers is None and timeout > 0:
            ahead = compiling_ahead(jobs, large=args.data is not None)
        else:
            compile_all(jobs, large=args.data is not None)
    resume = None
    if args.resume is not None and Path(args.resume).exists():
        from maxmargin.verification.table import load_rows

        resume = load_rows(args.resume)
    stream = getattr(args, "json", None)
    stream = args.resume if stream is None else (None if stream == "-" else stream)
    with ahead, _client(args) as client, notices_off():  # said above, once
        return run_suite("data" if cases is not None else args.suite, patterns,
                         progress=sys.stderr if not args.quiet else None, cases=cases,
                         count=args.count, seed=args.seed, start=args.start,
                         timeout=timeout if timeout > 0 else None,
                         client=client, resume=resume, stream=stream)


@contextlib.contextmanager
def _client(args: argparse.Namespace) -> Iterator[Any]:
    """The Dask client of ``--workers`` / ``--scheduler`` (None: serial), closed at the end."""
    if args.workers is None and args.scheduler is None:
        yield None
        return
    if args.workers is not None and args.scheduler is not None:
        raise ValueError("--workers and --scheduler exclude each other: give one.")
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        raise ValueError("--workers/--scheduler need Dask: pip install -e \".[distributed]\"."
                         ) from None
    if args.workers is not None:
        if args.workers < 1:
            raise ValueError(f"--workers must be >= 1; got {args.workers}.")
        from maxmargin.verification.sweep import local_client

        client = local_client(args.workers)
    else:
        from dask.distributed import Client

        try:
            client = Client(args.scheduler, timeout=30)
        except OSError as exc:
            raise ValueError(f"--scheduler {args.scheduler!r}: cannot connect ({exc}).") from None
    try:
        yield client
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None:
            cluster.close()


def _writable(path: str, what: str) -> None:
    """Fail before any work when ``path`` cannot be written (exit code 2): the file is opened
    for appending (created when missing, then removed again), so that a path the permission
    bits allow but the file system refuses (``/sys``, a read-only mount) is caught too."""
    import os
    from pathlib import Path

    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise ValueError(f"{what} {path!r} is a directory; give a file name.")
    if not parent.is_dir():
        raise ValueError(f"{what} {path!r}: the directory {str(parent)!r} does not exist.")
    existed = target.exists()
    try:
        with open(target, "a"):
            pass
    except OSError as exc:
        raise ValueError(f"{what} {path!r} is not writable ({exc.strerror or exc}).") from None
    if not existed:
        with contextlib.suppress(OSError):
            os.unlink(target)


def _print_table(run: Any, out: TextIO) -> None:
    header = f"{'case':28s} {'method':14s} {'status':11s} {'tol':7s} {'obj err':>9s} " \
             f"{'w err':>9s} {'b err':>9s} {'alpha err':>9s} {'KKT':>9s}  verdict"
    print(header, file=out)
    print("-" * len(header), file=out)

    def num(x: float) -> str:
        return f"{x:9.1e}" if x == x else f"{'-':>9s}"

    for r in run.rows:
        print(f"{r.case:28s} {r.method:14s} {r.status:11s} {r.tolerances:7s} "
              f"{num(r.objective_error)} {num(r.w_error)} {num(r.b_error)} "
              f"{num(r.alpha_error)} {num(r.kkt_max)}  {r.verdict}", file=out)
        for b in r.bounds:
            print(f"{'':28s}   {b.name}: {b.value:.4g} <= {b.bound:.4g} "
                  f"{'holds' if b.holds else 'VIOLATED'}", file=out)
        if r.reasons:
            print(f"{'':28s}   why: {r.reasons}", file=out)


def _summary(run: Any, out: TextIO) -> None:
    failed = [r for r in run.rows if not r.passed]
    print(f"\n{len(run.rows)} checks on {len({r.case for r in run.rows})} cases "
          f"({run.suite} suite) in {run.elapsed:.1f} s: {len(run.rows) - len(failed)} pass, "
          f"{len(failed)} fail", file=out)
    for r in failed:
        print(f"  FAIL {r.case} / {r.method}: {r.reasons}", file=out)


def _verify(args: argparse.Namespace) -> int:
    if args.list:
        return _list(args)
    if args.json is not None and args.json != "-":
        _writable(args.json, "--json")
    if args.resume is not None:
        _writable(args.resume, "--resume")
    run = _run(args)  # a --json FILE (or --resume FILE) is written as rows arrive
    table = sys.stderr if args.json == "-" else sys.stdout
    _print_table(run, table)
    _summary(run, table)
    if args.json == "-":
        from maxmargin.verification.table import rows_document

        json.dump(rows_document(run.rows, run.suite, run.pattern), sys.stdout, indent=1)
        sys.stdout.write("\n")
    return 0 if run.passed else 1


def _list(args: argparse.Namespace) -> int:
    """One line per case: name, area, kernel, C, size, and whether it is in the quick suite."""
    from maxmargin.verification.campaign import random_cases
    from maxmargin.verification.cases import catalogue

    if args.data is not None:
        cases = _data_cases(args)
    elif args.suite in ("random", "conditioned"):
        if args.count is None:
            raise ValueError(f"--suite {args.suite} needs --count N (and optionally --seed S).")
        cases = random_cases(args.count, args.seed, args.start, args.suite)
    else:
        cases = catalogue(args.suite)
    for c in cases:
        C = (f"nu={c.nu:.3g}" if c.problem != "c_svc" else
             "hard" if c.C is None else f"C={c.C:.3g}")
        print(f"{c.name:34s} {c.area:11s} {c.kernel_name:6s} {C:10s} n={c.X.shape[0]:<5d} "
              f"d={c.X.shape[1] if c.X.ndim == 2 else '-':<4} {' '.join(c.methods)}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from maxmargin.verification.report import write_report

    out = Path(args.out if args.out is not None else "reports")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file; give a directory.")
    if args.out is None and (out / "validation.md").exists() and not args.force:
        raise ValueError(
            f"{str(out / 'validation.md')!r} already exists: name it with --out {out} (or pass "
            "--force) to overwrite it, or give another --out DIR."
        )
    if not out.parent.is_dir():
        raise ValueError(f"--out {str(out)!r}: the directory {str(out.parent)!r} does not exist.")
    run = _run(args)
    path = write_report(run, str(out))
    _summary(run, sys.stdout)
    print(f"report written to {path}", file=sys.stdout)
    return 0 if run.passed else 1


def _add_verify(sub: Any) -> None:
    p = sub.add_parser("verify", help="run the verification suite and print the results table",
                       description="Cross-check every algorithm against the CVXPY oracles and "
                       "the theorems, on the catalogue, a random campaign or your own data "
                       "(--data); exit 0 when every check passes, 1 when one fails, 2 on a "
                       "usage error.")
    _suite_arguments(p)
    p.add_argument("--list", action="store_true",
                   help="list the cases (name, area, kernel, C, size, methods) and exit")
    p.add_argument("--json", metavar="FILE", default=None,
                   help="also write the results table as JSON to FILE ('-': to stdout, and the "
                   "table to stderr)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=_verify)


def _add_report(sub: Any) -> None:
    p = sub.add_parser("report", help="regenerate the validation report (Markdown, figures, "
                       "results.json/csv)",
                       description="Run the suite and rewrite the report directory atomically. "
                       "An existing reports/ is only overwritten when --out names it or with "
                       "--force.")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="output directory (default: reports/, which must not hold a report yet)")
    p.add_argument("--force", action="store_true",
                   help="overwrite the report in the default reports/")
    _suite_arguments(p)
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=_report)


def _jobs(text: str) -> int:
    """``--jobs``: a positive number of processes."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be at least 1, got {value}")
    return value


#: What the first run's compile costs, in words (the measurements: the `compile` family of the
#: benchmark report and docs/development/performance-notes.md).
COMPILE_NOTICE = "a minute or two on 2 cores, longer when they are busy"


def _default_jobs() -> int:
    """One process per available core, at most one per task."""
    import os

    from maxmargin.verification.warmup import COMPILE_TASKS

    return min(len(os.sched_getaffinity(0)), len(COMPILE_TASKS))


def _compile(args: argparse.Namespace) -> int:
    import time

    import numba

    from maxmargin.verification.suite import numba_cache_is_cold
    from maxmargin.verification.warmup import compile_all

    cold = numba_cache_is_cold()
    where = numba.config.CACHE_DIR or "the package's __pycache__ folders"
    jobs = args.jobs or _default_jobs()
    procs = f"{jobs} process{'es' if jobs > 1 else ''}"
    if not args.quiet:
        print(("compiling" if cold else "loading") + f" the Numba loops (cache: {where}; "
              f"{procs}) ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    done = compile_all(jobs, every=True)
    if not args.quiet:
        for piece, wall, cpu in done:
            print(f"  {piece}: {wall:.1f} s ({cpu:.1f} s CPU)", file=sys.stderr)
    print(f"every compiled loop is in Numba's on-disk cache ({where}): "
          f"{'compiled' if cold else 'loaded'} in {time.perf_counter() - start:.1f} s "
          f"({sum(c for _, _, c in done):.1f} s CPU, {procs}); first calls in new "
          "processes now load it instead of compiling.")
    return 0


def _add_compile(sub: Any) -> None:
    p = sub.add_parser("compile", help="compile every Numba loop into the on-disk cache "
                       "(once, after an install)",
                       description="Compile (ahead of use) every specialisation the algorithms "
                       "use into Numba's on-disk cache, so that no later first call compiles; "
                       "the independent entry points (SMO, its driver for wide data, Platt's "
                       "SMO, the nearest-point methods, the perceptrons) compile in parallel "
                       "processes. maxmargin "
                       "verify warms up each case's loops before the case (on an empty cache "
                       "its first cases compile them).")
    p.add_argument("--jobs", type=_jobs, default=0,
                   help="processes compiling at once (default: one per available core, at "
                   "most 2: SMO's and the nearest-point methods' code)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=_compile)


def _audit(args: argparse.Namespace) -> int:
    from types import SimpleNamespace

    from maxmargin._jit import notices_off
    from maxmargin.verification.audit_cli import main as audit_main

    helpers = SimpleNamespace(client=_client, data_cases=_data_cases, writable=_writable)
    with notices_off():
        return audit_main(args, helpers)


def _add_audit(sub: Any) -> None:
    p = sub.add_parser("audit", help="judge another SVM solver's answers by the certificate "
                       "and the oracle",
                       description="Run a third-party solver (libsvm, liblinear, "
                       "liblinear-hinge, sklearnex, thundersvm, cuml, or MODULE:CALLABLE) on the "
                       "catalogue, a random campaign or your data; judge every answer by its "
                       "float64 certificate and weak duality against the CVXPY oracle. Exit 1 "
                       "when the solver called an answer converged that the certificate "
                       "refutes (a wrong answer), 0 otherwise, 2 on a usage error.")
    p.add_argument("--solver", action="append", required=True, metavar="NAME",
                   help="a built-in solver or MODULE:CALLABLE, a function f(X, y, C, "
                   "kernel=, gamma=, degree=, coef0=) -> (alpha, b[, converged]); repeat it or "
                   "separate names with commas")
    p.add_argument("--preset", choices=("loose", "tight", "all"), default="all",
                   help="tolerance presets: loose (1e-3), tight (1e-6) or all (default)")
    p.add_argument("--problem", default="c-svc", metavar="PROBLEM",
                   help="c-svc (default: SVC, LinearSVC), nu-svc (NuSVC) or one-class "
                   "(OneClassSVM) on a grid of nu per case; a callable is then f(X, y, nu, "
                   "kernel=, ...) -> (alpha, b, rho[, converged]), one-class f(X, nu, "
                   "kernel=, ...) -> (alpha, rho[, converged])")
    _suite_arguments(p)
    p.add_argument("--json", metavar="FILE", default=None,
                   help="also write the rows and the summary as JSON to FILE ('-': stdout)")
    p.add_argument("--report", metavar="DIR", default=None,
                   help="run the full catalogue and a --count (default 1000) campaign and "
                   "write DIR/audit.md and DIR/audit.json")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=_audit)


#: One function per command: each adds its subparser.
COMMANDS: tuple[Callable[[Any], None], ...] = (_add_verify, _add_report, _add_compile, _add_audit)


def build_parser() -> argparse.ArgumentParser:
    from maxmargin import __version__

    parser = argparse.ArgumentParser(
        prog="maxmargin",
        description="Max-margin classifiers: CVXPY oracles, hand-written algorithms, verification.",
    )
    parser.add_argument("--version", action="version", version=f"maxmargin {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return int(args.run(args))
    except BrokenPipeError:  # `maxmargin verify --list | head`: the reader left; stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ValueError as exc:  # bad input (e.g. a --case pattern matching nothing): exit 2
        parser.exit(2, f"maxmargin {args.command}: error: {exc}\n")
    except KeyboardInterrupt as exc:  # Ctrl-C: one line, exit 130 (128 + SIGINT)
        kept = ""
        rows, stream = getattr(exc, "rows", None), getattr(exc, "stream", None)
        if rows is not None:
            kept = f"; {len(rows)} finished rows" + (f" kept in {stream}" if stream else "")
        print(f"maxmargin {args.command}: interrupted{kept}", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``maxmargin`` command line.

============================================  ==================================================
``maxmargin verify [--suite quick|full]``     run the verification suite, print the table and a
``[--case PATTERN] [--json FILE]``            summary; exit 0 when every check passes, else 1
``maxmargin report [--out DIR]``              run the suite and regenerate the validation report
``[--suite quick|full] [--case PATTERN]``     (Markdown, figures, results.json/csv), default
                                              ``reports/``; exit 0/1 like ``verify``
``maxmargin bench ...``                       the benchmarks, when :mod:`maxmargin.bench` exists
============================================  ==================================================

Each command is one ``_add_<name>(subparsers)`` function that registers its arguments and the
function to run (``set_defaults(run=...)``); adding a command is adding one such function to
:data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

__all__ = ["build_parser", "main", "COMMANDS"]


def _suite_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--suite", choices=("quick", "full", "random"), default="quick",
                        help="which cases to run: the catalogue (quick, full) or the random "
                        "adversarial campaign (random, with --count/--seed; default: quick)")
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
    parser.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                        help="wall-clock guard per (case x method): a method running longer "
                        "becomes a failed row (default 120; 0 runs unguarded in-process)")


def _run(args: argparse.Namespace) -> Any:
    from maxmargin.verification.suite import run_suite

    if args.suite == "random" and args.count is None:
        raise ValueError("--suite random needs --count N (and optionally --seed S).")
    patterns = None
    if args.case:
        patterns = [p for item in args.case for p in item.split(",") if p]
    return run_suite(args.suite, patterns, progress=sys.stderr if not args.quiet else None,
                     count=args.count, seed=args.seed, start=args.start,
                     timeout=args.timeout if args.timeout and args.timeout > 0 else None)


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
    run = _run(args)
    _print_table(run, sys.stdout)
    _summary(run, sys.stdout)
    if args.json is not None:
        from maxmargin.verification.suite import COLUMNS

        payload = {"schema": [{"name": n, "description": d} for n, d in COLUMNS],
                   "suite": run.suite, "pattern": run.pattern,
                   "rows": [r.to_dict() for r in run.rows]}
        with open(args.json, "w") as fh:
            json.dump(payload, fh, indent=1)
            fh.write("\n")
    return 0 if run.passed else 1


def _report(args: argparse.Namespace) -> int:
    from maxmargin.verification.report import write_report

    run = _run(args)
    path = write_report(run, args.out)
    _summary(run, sys.stdout)
    print(f"report written to {path}", file=sys.stdout)
    return 0 if run.passed else 1


def _add_verify(sub: Any) -> None:
    p = sub.add_parser("verify", help="run the verification suite and print the results table",
                       description="Cross-check every algorithm against the CVXPY oracles and "
                       "the theorems; exit 0 when every check passes, 1 otherwise.")
    _suite_arguments(p)
    p.add_argument("--json", metavar="FILE", default=None,
                   help="also write the results table as JSON to FILE")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=_verify)


def _add_report(sub: Any) -> None:
    p = sub.add_parser("report", help="regenerate the validation report (Markdown, figures, "
                       "results.json/csv)",
                       description="Run the suite and rewrite the report directory atomically.")
    p.add_argument("--out", metavar="DIR", default="reports",
                   help="output directory (default: reports/)")
    _suite_arguments(p)
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=_report)


def _add_bench(sub: Any) -> None:
    """``maxmargin bench`` delegates to ``maxmargin.bench.main(args)`` when that module exists;
    it may define ``add_arguments(parser)`` for its options."""
    try:
        bench = importlib.import_module("maxmargin.bench")
    except ModuleNotFoundError as exc:
        if exc.name != "maxmargin.bench":
            raise
        return
    p = sub.add_parser("bench", help="time maxmargin against its peers (LIBSVM, ...)")
    if hasattr(bench, "add_arguments"):
        bench.add_arguments(p)
    p.set_defaults(run=lambda args: int(bench.main(args) or 0))


#: One function per command: each adds its subparser.
COMMANDS: tuple[Callable[[Any], None], ...] = (_add_verify, _add_report, _add_bench)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="maxmargin",
        description="Max-margin classifiers: CVXPY oracles, hand-written algorithms, verification.",
    )
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
    except ValueError as exc:  # bad input (e.g. a --case pattern matching nothing): exit 2
        parser.exit(2, f"maxmargin {args.command}: error: {exc}\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

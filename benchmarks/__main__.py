"""``python -m benchmarks``: run a suite (or rebuild its report from JSON)."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import report, suites
from benchmarks.harness import merge_results
from maxmargin._validation import check_choice


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the benchmark options to ``parser``."""
    parser.add_argument(
        "--suite",
        default="standard",
        choices=suites.SUITES,
        help="smoke: tiny, < 60 s; standard: the README numbers; scale: adds "
        "RBF n = 50,000 and 100,000 (default: standard)",
    )
    parser.add_argument(
        "--only",
        default=None,
        metavar="NAME[,NAME]",
        help=f"run only these benchmark families: {', '.join(suites.FAMILIES)}",
    )
    parser.add_argument(
        "--out",
        default="reports",
        metavar="DIR",
        help="output folder for benchmarks.json/.md and figures (default: reports)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        metavar="K",
        help="best of K timed calls (default 1 for smoke, 5 otherwise)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="thread count for Numba and BLAS in the benchmark processes",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the rows of families not run from an existing benchmarks.json",
    )
    parser.add_argument(
        "--from-json",
        default=None,
        metavar="FILE",
        help="do not run anything: rebuild the Markdown and figures from FILE",
    )
    return parser


def _parse_only(only: Any) -> list[str] | None:
    """``--only``: comma-separated family names, each checked."""
    if only is None:
        return None
    names = [s.strip() for s in str(only).split(",") if s.strip()]
    if not names:
        raise ValueError(
            f"`only` must name at least one of {', '.join(suites.FAMILIES)}; got {only!r}.")
    return [check_choice(s, "only", suites.FAMILIES) for s in names]


def main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """Run ``python -m benchmarks``; 0, or 1 when a benchmark errored, crashed or timed out."""
    if args is None or not isinstance(args, argparse.Namespace):
        parser = add_arguments(argparse.ArgumentParser(prog="python -m benchmarks"))
        args = parser.parse_args(None if args is None else list(args))
    out_dir = Path(args.out)
    if args.from_json is not None:
        results = json.loads(Path(args.from_json).read_text())
    else:
        suite = check_choice(args.suite, "suite", suites.SUITES)
        only = _parse_only(args.only)
        results = suites.run_suite(suite, only, repeats=args.repeats, threads=args.threads)
        previous = out_dir / "benchmarks.json"
        if args.merge and previous.exists():
            results = merge_results(json.loads(previous.read_text()), results,
                                    suites.cases_kept(suite, only))
    paths = report.write_outputs(results, out_dir)
    print(
        f"wrote {paths['markdown']}, {paths['json']}" + "".join(f", {f}" for f in paths["figures"])
    )
    for t in report.evaluate_targets(results["rows"]):
        verdict = {True: "MET", False: "NOT MET", None: "NOT MEASURED"}[t["met"]]
        print(f"{verdict:>12}: {t['target']} - {t['detail']}")
    bad = [r for r in results["rows"] if r["status"] in ("error", "timeout", "crashed")]
    for r in bad:
        print(
            f"{r['status']}: {r['benchmark']} / {r['case']} / {r['method']}: {r['message']}",
            file=sys.stderr,
        )
    return 1 if bad else 0



if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))

"""The command line of ``maxmargin audit`` (:mod:`.audit`, ``--problem nu-svc|one-class``:
:mod:`.audit_nu`): the table, the summary, JSON.

``maxmargin/cli.py`` declares the subcommand's arguments and calls :func:`main` with its shared
helpers (the Dask client, ``--data`` cases, the writable-file check).
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from maxmargin.verification.audit import (
    PRESETS,
    AuditRun,
    Peer,
    resolve_peers,
    run_audit,
    summarise,
)
from maxmargin.verification.audit_nu import PROBLEMS, resolve_nu_peers, run_nu_audit
from maxmargin.verification.audit_report import payload, summary_table, write_report
from maxmargin.verification.campaign import random_cases
from maxmargin.verification.case import DEFAULT_TIMEOUT_S, Case, select
from maxmargin.verification.cases import catalogue

__all__ = ["main", "payload", "print_summary", "print_table", "summary_table"]


def print_table(run: AuditRun, out: Any) -> None:
    """The suite's table with the solver's claim beside the certificate's verdict."""
    header = (f"{'case':30s} {'solver/preset':24s} {'claim':10s} {'certificate':11s} "
              f"{'test':10s} {'obj err':>9s} {'m-M|gap':>9s} {'seconds':>8s}  verdict")
    print(header, file=out)
    print("-" * len(header), file=out)

    def num(x: float, width: int = 9) -> str:
        return f"{x:{width}.1e}" if x == x else f"{'-':>{width}s}"

    for r in run.rows:
        measure = r.duality_gap if r.tolerances.startswith("gap") else r.kkt_max
        print(f"{r.case:30s} {r.method:24s} {r.status:10s} {r.expected_status or '-':11s} "
              f"{r.tolerances or '-':10s} {num(r.objective_error)} {num(measure)} "
              f"{num(r.runtime, 8)}  {r.verdict}", file=out)
        if r.reasons and r.verdict != "skip":
            print(f"{'':30s}   why: {r.reasons}", file=out)


def print_summary(run: AuditRun, out: Any, seed: int = 0) -> None:
    skipped = sum(r.verdict == "skip" for r in run.rows)
    print(f"\n{len(run.rows)} rows on {len({r.case for r in run.rows})} cases ({run.suite}) in "
          f"{run.elapsed:.1f} s: {len(run.wrong)} wrong answers, "
          f"{sum(r.verdict == 'error' for r in run.rows)} errors, {skipped} skipped\n",
          file=out)
    for line in summary_table(summarise(run), run.reference):
        print(line, file=out)
    problem = "" if run.problem == "c-svc" else f" --problem {run.problem}"
    for r in run.wrong:
        print(f"  WRONG {r.case} / {r.method}: {r.reasons}", file=out)
        index = re.match(r"random_s\d+_i(\d+)", r.case)
        if r.area == "random" and index:
            print(f"        reproduce: maxmargin audit --solver {r.method.rsplit('/', 1)[0]}"
                  f"{problem} --suite random --seed {seed} --start {index[1]} --count 1",
                  file=out)


def _cases(args: Any, helpers: Any, suite: str | None = None) -> tuple[str, list[Case]]:
    suite = args.suite if suite is None else suite
    if args.data is not None:
        return "data", list(helpers.data_cases(args))
    if suite == "random":
        if args.count is None:
            raise ValueError("--suite random needs --count N (and optionally --seed S).")
        return "random", list(random_cases(args.count, args.seed, args.start))

    cases = list(catalogue(suite))
    if args.case:
        patterns = [p for item in args.case for p in item.split(",") if p]
        cases = [c for c in cases if any(c in select((c,), p) for p in patterns)]
        if not cases:
            raise ValueError(f"--case {','.join(patterns)} matches no case of the "
                             f"{suite} suite.")
    return suite, cases


def main(args: Any, helpers: Any) -> int:
    """``maxmargin audit`` (the handler; ``helpers`` carries the CLI's ``client``,
    ``data_cases`` and ``writable``). Exit 1 when a row is a wrong answer, else 0."""
    import json

    problem = getattr(args, "problem", "c-svc")
    if problem not in ("c-svc", *PROBLEMS):
        raise ValueError(f"--problem {problem!r}: one of c-svc, {', '.join(PROBLEMS)}.")
    names = [n.strip() for item in args.solver for n in item.split(",") if n.strip()]
    # bad names, or a solver without this problem: exit 2 before any work
    peers = resolve_peers(names) if problem == "c-svc" else resolve_nu_peers(names, problem)
    presets = tuple(PRESETS) if args.preset == "all" else (args.preset,)
    if args.json is not None and args.json != "-":
        helpers.writable(args.json, "--json")
    if args.report is not None:
        return _report(args, helpers, peers, presets, problem)
    suite, cases = _cases(args, helpers)
    resume = None
    if args.resume is not None:
        helpers.writable(args.resume, "--resume")
        if os.path.exists(args.resume):
            from maxmargin.verification.table import load_rows

            resume = [r for r in load_rows(args.resume) if r.verdict != "skip"]
    stream = args.resume if args.json in (None, "-") else args.json
    with helpers.client(args) as client:
        run = _run(problem, peers, cases, suite=suite, presets=presets, seed=args.seed,
                   progress=None if args.quiet else sys.stderr, timeout=_guard(args.timeout),
                   client=client, resume=resume, stream=stream)
    table = sys.stderr if args.json == "-" else sys.stdout
    print_table(run, table)
    print_summary(run, table, args.seed)
    document = payload(run)
    if args.json == "-":
        json.dump(document, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif stream is not None:
        with open(stream, "w") as fh:
            json.dump(document, fh, indent=1)
            fh.write("\n")
    return 1 if run.wrong else 0


def _run(problem: str, peers: list[Peer], cases: list[Case], **options: Any) -> AuditRun:
    """The audit of ``problem`` (``c-svc``: :func:`.audit.run_audit`; else
    :func:`.audit_nu.run_nu_audit` on each case's grid of ``nu``)."""
    if problem == "c-svc":
        return run_audit(peers, cases, **options)
    return run_nu_audit(peers, cases, problem, **options)


def _report(args: Any, helpers: Any, peers: list[Peer], presets: tuple[str, ...],
            problem: str = "c-svc") -> int:
    """``--report DIR``: the full catalogue (the cases matching ``--case``, if given) and a
    ``--count`` (default 1,000) campaign, written to ``DIR/audit.md`` and ``DIR/audit.json``
    (another ``problem``: its section of ``DIR/audit.md`` and ``DIR/audit-PROBLEM.json``)."""

    if not os.path.isdir(args.report):
        raise ValueError(f"--report {args.report!r} is not a directory.")
    if args.data is not None:
        raise ValueError("--report runs the catalogue and a campaign; it takes no --data.")
    count = 1000 if args.count is None else args.count
    runs = []
    with helpers.client(args) as client:
        for suite, cases in (_cases(args, helpers, "full"),
                             ("random", list(random_cases(count, args.seed, args.start)))):
            runs.append(_run(problem, peers, cases, suite=suite, presets=presets,
                             seed=args.seed, progress=None if args.quiet else sys.stderr,
                             timeout=_guard(args.timeout), client=client))
    for run in runs:
        print_summary(run, sys.stdout, args.seed)
    path = write_report(args.report, runs, command=" ".join(["maxmargin", *sys.argv[1:]]),
                        seed=args.seed, count=count, problem=problem)
    print(f"report written to {path}")
    return 1 if any(run.wrong for run in runs) else 0


def _guard(timeout: float | None) -> float | None:
    """``--timeout`` as the runner takes it: the default guard when not given, None for 0."""
    timeout = DEFAULT_TIMEOUT_S if timeout is None else timeout
    return timeout if timeout > 0 else None

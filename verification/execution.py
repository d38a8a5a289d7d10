"""Running the checks of one case: in this process, or in a forked worker under a wall-clock
guard (the one process guard of the project, also used by sweeps), and turning each
:class:`~maxmargin.verification.context.Outcome` into a :class:`~maxmargin.verification.table.Row`.

A check that raises is caught per row: the row records the exception's last line and fails.
A check that runs past the guard, or kills its process, becomes a failed row with the reason
and a new worker takes the remaining checks.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import signal
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin.verification.case import Case
from maxmargin.verification.context import Artifacts, Context, Method, Outcome
from maxmargin.verification.table import Row

__all__ = ["case_rows_inline", "case_rows_guarded", "failed_row", "last_line"]


def _section(case: Case, method: Method) -> str:
    if case.expected_status == "infeasible":
        return "infeasibility"
    if case.kernel_name != "linear" and method.section in ("consensus", "smo",
                                                           "nearest_point"):
        return "kernels"
    return method.section


def last_line(exc: BaseException) -> str:
    lines = traceback.format_exception_only(type(exc), exc)
    return lines[-1].strip() if lines else type(exc).__name__


def _row(case: Case, method: Method, outcome: Outcome | None, exception: str) -> Row:
    if method.row is not None:
        return method.row(case, method, outcome, exception)
    nan = math.nan
    o = outcome or Outcome(status="error", oracle="")
    chk = o.check
    reasons = list(o.reasons)
    if exception:
        reasons.insert(0, f"raised {exception}")
    elif (o.status != case.expected_status and method.section != "perceptron"
          and not o.status_judged):
        reasons.insert(0, f"status {o.status!r} != expected {case.expected_status!r}")
    elif method.section == "perceptron" and o.status != "converged":
        reasons.insert(0, f"status {o.status!r}: the perceptron did not converge")
    if chk is not None:
        reasons += [r for r in chk.reasons if not r.startswith("candidate status")]
    for b in o.bounds:
        if not b.holds:
            reasons.append(f"{b.name}: {b.value:.6g} > bound {b.bound:.6g}")
    expected = "converged" if method.section == "perceptron" else case.expected_status
    return Row(
        case=case.name, area=case.area, section=_section(case, method), method=method.name,
        oracle=o.oracle, tolerances=o.tolerances, status=o.status, expected_status=expected,
        iterations=int(o.iterations), runtime=float(o.runtime),
        objective_error=chk.objective_error if chk else o.objective_error,
        w_error=chk.w_error if chk else nan,
        b_error=chk.b_error if chk else nan,
        alpha_error=chk.alpha_error if chk else nan,
        alpha_unique=chk.alpha_unique if chk and not math.isnan(chk.objective_error) else None,
        decision_error=chk.decision_error if chk else nan,
        kkt_max=chk.kkt_max if chk else o.kkt_max,
        duality_gap=chk.duality_gap if chk else o.duality_gap,
        bounds=tuple(o.bounds), verdict="fail" if reasons else "pass",
        reasons="; ".join(reasons), exception=exception,
    )


def _picture(ctx: Context, size: int = 121) -> None:
    """The oracle's decision values on a grid around a 2-D case (for the report's figures);
    the points alone (``F`` None) when the oracle has no separator. The panel's claim is the
    oracle's own answer (``"oracle"``: its status and message), solved here if no check did."""
    c = ctx.case
    try:
        said = ctx.oracle
        claim = {"status": said.status, "message": said.message}
    except Exception as exc:  # recorded in the picture's caption, not hidden
        said, claim = None, {"status": "error", "message": last_line(exc)}
    oracle = said if said is not None and said.status == "optimal" else None
    lo, hi = c.X.min(axis=0), c.X.max(axis=0)
    centre = 0.5 * (lo + hi)
    span = float(np.max(hi - lo))
    half = 0.65 * span if span > 0 else 1.0  # a square window with a margin around the data
    xs = np.linspace(centre[0] - half, centre[0] + half, size)
    ys = np.linspace(centre[1] - half, centre[1] + half, size)
    gx, gy = np.meshgrid(xs, ys)
    F, sv, at_C = None, np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    if oracle is not None:
        grid = np.column_stack([gx.ravel(), gy.ravel()])
        F = oracle.decision_function(grid).reshape(gx.shape)
        top = float(np.max(oracle.alpha))
        sv = oracle.support(1e-6 * top)
        if c.C is not None:  # alpha = C (margin errors or on the margin at the bound)
            at_C = sv[oracle.alpha[sv] >= c.C * (1.0 - 1e-6)]
            sv = np.setdiff1d(sv, at_C)
    ctx.artifacts.pictures[c.name] = {
        "X": c.X, "y": c.y, "gx": gx, "gy": gy, "F": F, "sv": sv, "at_C": at_C,
        "kernel": ctx.kernel.describe(), "C": c.C, "status": c.expected_status,
        "oracle": claim,
    }


def one_row(ctx: Context, case: Case, method: Method) -> tuple[Row, float]:
    """Run ``method`` on ``ctx``'s case; an exception becomes the row's failure."""
    outcome, exception = None, ""
    t = time.perf_counter()
    try:
        outcome = method.run(ctx)
    except Exception as exc:  # recorded in the row, which fails
        exception = last_line(exc)
    if outcome is not None and math.isnan(outcome.runtime):
        outcome.runtime = time.perf_counter() - t
    return _row(case, method, outcome, exception), time.perf_counter() - t


def case_rows_inline(case: Case, methods: Sequence[Method], artifacts: Artifacts,
                     ctx: Context | None = None) -> Iterator[tuple[Row, float]]:
    """Every row of one case, in this process (no guard)."""
    ctx = Context(case, artifacts) if ctx is None else ctx
    for method in methods:
        yield one_row(ctx, case, method)
    if case.is_2d and case.area not in ("random", "data") and _own_reference(methods) is None:
        _picture(ctx)


def _own_reference(methods: Sequence[Method]) -> Callable[[Context], Any] | None:
    """The reference the methods that need one judge against when it is not the case's oracle
    (``Method.reference``: the ν audit's ν oracle), or None."""
    return next((m.reference for m in methods if m.needs_oracle and m.reference), None)


def _worker(case: Case, methods: Sequence[Method], conn: Any, reference: _Reference
            ) -> None:  # pragma: no cover
    """The forked worker of :func:`case_rows_guarded` (runs in the child process): first the
    case's reference when a method needs it and none is known yet (sent back on its own, so
    that it is timed on its own and a later worker gets it), then the rows. It ignores Ctrl-C:
    the parent stops it (and reports the interruption once)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.simplefilter("ignore")
    artifacts = Artifacts()
    ctx = Context(case, artifacts, oracle=reference.solution, oracle_error=reference.error)
    if reference.pending and any(m.needs_oracle for m in methods):
        t = time.perf_counter()
        solution, error = ctx.prepare(_own_reference(methods))
        conn.send(("reference", (solution, error, time.perf_counter() - t)))
    for k, row_and_time in enumerate(case_rows_inline(case, methods, artifacts, ctx)):
        try:
            conn.send(("row", row_and_time))
        except Exception as exc:  # a row that cannot travel still becomes a (failed) row
            conn.send(("row", failed_row(case, methods[k], "the row could not be sent "
                                          f"from the worker: {last_line(exc)}",
                                          row_and_time[1])))
    conn.send(("artifacts", artifacts))
    conn.close()




@dataclass
class _Reference:
    """What the guarded runner knows of a case's reference: its solution or why it failed."""

    solution: Any = None
    error: str | None = None

    @property
    def pending(self) -> bool:
        return self.solution is None and self.error is None


def _reference_name(case: Case) -> str:
    return {"smo": "the reference (float64 SMO)", "dcd": "the reference (dcd_svc)"}.get(
        case.reference, "the reference (the CVXPY oracle)")


def failed_row(case: Case, method: Method, why: str, elapsed: float) -> tuple[Row, float]:
    outcome = Outcome(status="error", oracle="", runtime=elapsed, reasons=[why])
    return _row(case, method, outcome, ""), elapsed


def case_rows_guarded(
    case: Case, methods: Sequence[Method], artifacts: Artifacts, timeout: float
) -> Iterator[tuple[Row, float]]:
    """Every row of one case, run in a forked worker; a method that runs past ``timeout``
    seconds (or kills its process) becomes a failed row and a new worker takes the rest."""
    context = mp.get_context("fork")
    remaining = list(methods)
    reference = _Reference()
    while remaining:
        receiver, sender = context.Pipe(duplex=False)
        worker = context.Process(target=_worker, args=(case, remaining, sender, reference),
                                 daemon=True)
        worker.start()
        sender.close()
        started = time.perf_counter()
        try:
            while remaining:
                if not receiver.poll(timeout):
                    worker.kill()
                    if reference.pending and any(m.needs_oracle for m in remaining):
                        reference.error = (f"{_reference_name(case)} timed out after "
                                           f"{timeout:g} s (wall-clock guard)")
                        break
                    yield failed_row(case, remaining.pop(0), f"timed out after {timeout:g} s "
                                      "(wall-clock guard); the run was stopped",
                                      time.perf_counter() - started)
                    break
                try:
                    kind, payload = receiver.recv()
                except EOFError:
                    worker.join(1.0)
                    if reference.pending and any(m.needs_oracle for m in remaining):
                        reference.error = (f"{_reference_name(case)} killed its process (exit "
                                           f"code {worker.exitcode}; out of memory?)")
                        break
                    yield failed_row(case, remaining.pop(0), "the worker process died "
                                      f"(exit code {worker.exitcode})",
                                      time.perf_counter() - started)
                    break
                if kind == "reference":
                    reference.solution, reference.error, _ = payload
                    started = time.perf_counter()
                elif kind == "row":
                    remaining.pop(0)
                    yield payload
                    started = time.perf_counter()
            else:
                if receiver.poll(timeout):
                    kind, payload = receiver.recv()
                    if kind == "artifacts":
                        artifacts.update(payload)
        finally:
            receiver.close()
            worker.join(5.0)
            if worker.is_alive():
                worker.kill()

"""``benchmarks.json``, ``benchmarks.md`` and ``figures/bench_*.png``: targets, headline ratios,
tables and figures from the results dict alone, written atomically."""
from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import estimator, hulls, linear, nu, perceptron, smo, smo_hard, startup, verify
from benchmarks.harness import atomic_savefig, atomic_write, jsonable
from benchmarks.tables import decorate, find_rows, fmt, md_multi, panel_grid, peak_delta


def evaluate_targets(rows: list[dict]) -> list[dict]:
    """The stated performance targets, each ``{"target", "met" (bool or None), "detail"}``.

    ``met`` is None when the rows needed were not measured (e.g. scale not run).
    """
    out = []
    # 1. SMO vs LIBSVM speed at RBF n = 5,000 / 10,000, same objective to 1e-6 relative.
    for n, limit in ((5000, 1.0), (10000, 0.5)):
        r = smo.smo_pair(rows, "rbf", n)
        tight = smo.smo_pair(rows, "rbf", n, 1e-6)
        target = (
            f"SMO time <= {limit}x LIBSVM (SVC) at RBF n={n:,}, same dual objective to "
            "1e-6 relative at equal tol"
        )
        if r is None or r.get("time_ratio") is None:
            out.append({"target": target, "met": None, "detail": "not measured"})
            continue
        diff = r.get("rel_objective_diff")
        tdiff = tight.get("rel_objective_diff") if tight else None
        obj_ok = diff is not None and diff <= 1e-6
        detail = (
            f"ratio {r['time_ratio']:.3f} ({fmt(r['time_s'])} s vs "
            f"{fmt(r['time_s'] / r['time_ratio'])} s); rel. dual objective difference "
            f"{fmt(diff, '.1e')} at tol=1e-3"
        )
        if tdiff is not None:
            detail += f", {fmt(tdiff, '.1e')} at tol=1e-6 (ratio {fmt(tight['time_ratio'])})"
        out.append(
            {"target": target, "met": bool(r["time_ratio"] <= limit and obj_ok), "detail": detail}
        )
    # 2. SMO RBF n = 100,000 peak memory bounded by cache_size + O(n).
    r = smo.smo_pair(rows, "rbf", 100_000)
    target = "SMO RBF n=100,000 (d=20) peak memory <= cache_size + O(n) bound"
    if r is None or peak_delta(r) is None:
        out.append({"target": target, "met": None, "detail": "not measured (run --suite scale)"})
    else:
        bound = r["extra"]["memory_bound_mb"]
        alone = "isolated_peak_delta_mb" in r["extra"]
        detail = (
            f"peak increase {peak_delta(r):.0f} MB"
            + (
                f" with SMO alone in a fresh process ({r['peak_delta_mb']:.0f} MB in the "
                "process shared with SVC)"
                if alone
                else ""
            )
            + f" vs bound {bound:.0f} MB = {fmt(r['params'].get('cache_size'), '.0f')} MB cache + "
            f"{smo.MEM_X_COPIES} n d 8 B + {smo.MEM_N_ARRAYS} n 8 B; the Gram matrix would be "
            f"{r['extra']['gram_matrix_mb']:.0f} MB"
        )
        out.append({"target": target, "met": bool(peak_delta(r) <= bound), "detail": detail})
    # 3. Best nearest-point method reaches 1e-8 on two hulls m = 10,000, d = 50, <= Clarabel time.
    out.append(hulls.target(rows))
    # 4. quick verify <= 60 s.
    v = find_rows(rows, benchmark="verify", case="quick")
    target = "`maxmargin verify --suite quick` <= 60 s"
    if not v or v[0].get("time_s") is None:
        out.append({"target": target, "met": None, "detail": "not measured"})
    else:
        code = v[0]["extra"].get("exit_code")
        out.append(
            {
                "target": target,
                "met": bool(v[0]["time_s"] <= 60.0),
                "detail": f"{v[0]['time_s']:.1f} s, exit code {code}",
            }
        )
    return out


def _headlines(rows: list[dict]) -> list[str]:
    """The headline ratio lines of the report: per family the worst and the best ratio to the
    reference (the peer, or Clarabel for the hulls), then the chosen cases."""
    lines = []
    for family, title in (("smo_svc", "SMO / SVC"), ("smo_hard", "SMO / SVC, hard regimes"),
                          ("hulls", "fastest nearest-point method / Clarabel"),
                          ("nu_svc", "nu_smo / NuSVC"),
                          ("one_class", "one_class_smo / OneClassSVM"),
                          ("reduced_hulls", "fastest reduced-hull method / faster of Clarabel, "
                                            "PIQP"),
                          ("perceptron", "perceptron / sklearn Perceptron"),
                          ("estimator", "MaxMarginClassifier().fit / SVC().fit"),
                          ("grid_search", "GridSearchCV with MaxMarginClassifier / with SVC"),
                          ("predict", "MaxMarginClassifier / SVC decision_function")):
        span = _worst_best(rows, family)
        if span:
            lines.append(f"- {title}: {span}")
    for method in ("maxmargin.gilbert_svm/wolfe", "maxmargin.gilbert_svm/mdm"):
        hard = [(r["time_ratio"], r["case"]) for r in find_rows(rows, method=method)
                if r.get("time_ratio") is not None]
        if hard:
            (hi, hi_case), (lo, lo_case) = max(hard), min(hard)
            lines.append(f"- {method} / smo on the RBF hard margin: worst {hi:.3g}x ({hi_case}), "
                         f"best {lo:.3g}x ({lo_case})")
    for key, title in (
        ("ratio_vs_sklearnex_1thread", "scikit-learn-intelex SVC (oneDAL, 1 thread)"),
        ("ratio_vs_liblinear", "LIBLINEAR (LinearSVC: regularised bias, another problem)"),
    ):
        found = [(r["extra"][key], r["case"], r["benchmark"])
                 for r in rows if r["extra"].get(key) is not None]
        if found:
            (hi, hi_case, hi_f), (lo, lo_case, lo_f) = max(found), min(found)
            lines.append(f"- SMO / {title}: worst {hi:.3g}x ({hi_f} {hi_case}), best "
                         f"{lo:.3g}x ({lo_f} {lo_case})")
    for kernel in ("rbf", "linear"):
        parts = []
        for n in (1000, 5000, 10000, 100_000):
            r = smo.smo_pair(rows, kernel, n)
            if r is not None and r.get("time_ratio") is not None:
                parts.append(f"n={n:,}: {r['time_ratio']:.2f}x")
        if parts:
            lines.append(f"- SMO / SVC time, {kernel}: " + ", ".join(parts))
    for r in find_rows(rows, benchmark="hulls", role="maxmargin"):
        if r["params"].get("tol") == 1e-8 and r.get("time_ratio") is not None:
            lines.append(
                f"- {r['case']}: {r['method']} / Clarabel at gap 1e-8: "
                f"{r['time_ratio']:.2f}x ({r['status']}, gap "
                f"{fmt(r['extra'].get('gap_reached'), '.1e')})"
            )
    v = find_rows(rows, benchmark="verify")
    if v and v[0]["time_s"] is not None:
        lines.append(
            f"- `maxmargin verify --suite quick`: {v[0]['time_s']:.1f} s "
            f"(exit code {v[0]['extra'].get('exit_code')})"
        )
    return lines


def worst_and_best(rows: list[dict], family: str) -> tuple[dict, dict] | None:
    """The (worst, best) maxmargin rows of a family by time ratio to a peer or oracle, each case
    represented by its fastest maxmargin row (hulls: at gap 1e-8, target reached; not the
    ``smo(n_jobs=k)`` rows); None when nothing was compared."""
    best_per_case: dict[str, dict] = {}
    for r in find_rows(rows, benchmark=family, role="maxmargin"):
        # smo(n_jobs=k) rows are compared with oneDAL on k threads, not with the family's peer
        ok = (r.get("time_ratio") is not None and r.get("reference") is not None
              and "n_jobs" not in r["params"])
        if family in ("hulls", "reduced_hulls"):
            ok = ok and r["params"].get("tol") == 1e-8 and (
                r["extra"].get("gap_reached") or math.inf) <= 1e-8
        if ok and (r["case"] not in best_per_case
                   or r["time_ratio"] < best_per_case[r["case"]]["time_ratio"]):
            best_per_case[r["case"]] = r
    peer_rows = [r for r in best_per_case.values() if not r["reference"].startswith("maxmargin")]
    if not peer_rows:
        return None
    return (max(peer_rows, key=lambda r: r["time_ratio"]),
            min(peer_rows, key=lambda r: r["time_ratio"]))


def _worst_best(rows: list[dict], family: str) -> str:
    """``worst Rx (case), best Rx (case)`` over the family's cases (:func:`worst_and_best`)."""
    found = worst_and_best(rows, family)
    if found is None:
        return ""
    worst, best = found
    return (f"worst {worst['time_ratio']:.3g}x ({worst['case']}, {worst['method']}), "
            f"best {best['time_ratio']:.3g}x ({best['case']}, {best['method']})")


def _command(results: dict) -> str:
    """The ``python -m benchmarks`` command line(s) that produced ``results`` (each after the
    first merged into the file so far)."""
    runs = [
        f"python -m benchmarks --suite {prev['suite']}"
        + (f" --only {','.join(prev['only'])}" if prev.get("only") else "")
        for prev in [*results.get("merged_from", []), results]
    ]
    return "`, then `".join([runs[0], *(run + " --merge" for run in runs[1:])])


def _threads_text(machine: dict) -> str:
    """The thread counts of the run, as one line."""
    t = machine.get("threads", {})
    text = f"Numba {t.get('numba_threads')}, BLAS {', '.join(t.get('blas', [])) or '?'}"
    if machine.get("threads_option"):
        text += f"; --threads {machine['threads_option']} set in the benchmark processes"
    return text


def _provenance(results: dict) -> list[str]:
    """One line for each earlier run whose rows were merged in: its families and cases."""
    lines = []
    for prev in results.get("merged_from", []):
        parts = list(prev["families"]) + [
            f"{family}'s {', '.join(cases)}" for family, cases in prev.get("cases", {}).items()]
        cpu = f" on {prev['cpu']}" if prev.get("cpu") else ""
        lines.append(f"- rows of {'; '.join(parts)} from the `{prev['suite']}` run of "
                     f"{prev['date']}{cpu}")
    return lines


def render_markdown(results: dict, figures: Sequence[str] = ()) -> str:
    """The Markdown report, built from the results dict alone."""
    rows = results["rows"]
    v, m = results["versions"], results["machine"]
    out = [
        "# maxmargin benchmarks",
        "",
        f"Regenerate with `{_command(results)}` (see `python -m benchmarks --help`).",
        "",
        f"- date (UTC): {results['date']}; suite `{results['suite']}`; best of "
        f"{results['repeats']} timed calls after a warm-up; git {results.get('git_commit')}",
        f"- machine: {m['cpu']}, {m['cpu_count']} CPUs, {m['memory_gb']} GB; {m['platform']}",
        f"- threads: {_threads_text(m)} (LIBSVM and scikit-learn's Perceptron are single-threaded)",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
    ]
    out += _provenance(results)
    out += ["", "## Headline ratios", ""] + (_headlines(rows) or ["- nothing measured"])
    out += ["", "## Targets", ""]
    for t in evaluate_targets(rows):
        verdict = {True: "MET", False: "NOT MET", None: "NOT MEASURED"}[t["met"]]
        out.append(f"- **{verdict}** - {t['target']}: {t['detail']}")
    out += ["", "## Tables", ""]
    families = {r["benchmark"] for r in rows}
    families |= {"linear"} if families & {"linear_cs", "linear_svc"} else set()  # one table
    families |= {"nu"} if families & {"nu_svc", "one_class", "reduced_hulls"} else set()
    sections = [
        ("smo_svc", lambda: smo.markdown_svc(rows)),
        ("smo_hard", lambda: smo_hard.markdown(rows)),
        (
            "smo_cvxpy",
            lambda: md_multi(
                rows,
                "smo_cvxpy",
                "SMO vs the CVXPY dual oracle (Clarabel, OSQP)",
                "Same RBF dual (d = 20, C = 1, gamma `scale`). Times include building the "
                "CVXPY model (what a user pays). ratio and rel dD are relative to Clarabel; "
                "OSQP's status is what it reported (capped by OSQP's `time_limit`).",
                "tol",
            ),
        ),
        (
            "hulls",
            lambda: md_multi(
                rows,
                "hulls",
                "Nearest points of two hulls: Gilbert, MDM, Wolfe, Clarabel, PIQP",
                "Two Gaussian clouds N(+-5 e_1, I), m points each, and close hulls: standard "
                "normal points cut by the slab |x_1| < 0.05 (0.1 apart, many points near both "
                "faces). tol = target relative duality gap; Gilbert is capped at max_iter "
                "(status max_iter when it stops there). gap reached and distance are recomputed "
                "from the returned weights; ratio and rel ddistance are relative to Clarabel. "
                "Clarabel and PIQP run through CVXPY (model building included), one thread.",
                "tol",
            ),
        ),
        ("linear", lambda: linear.markdown(rows)),  # both linear families' rows
        ("nu", lambda: nu.markdown(rows)),  # the three families of benchmarks/nu.py
        ("perceptron", lambda: perceptron.markdown(rows)),
        ("estimator", lambda: estimator.markdown([r for r in rows
                                                  if r["benchmark"] == "estimator"])),
        ("grid_search", lambda: estimator.markdown([r for r in rows
                                                    if r["benchmark"] == "grid_search"])),
        ("predict", lambda: estimator.markdown([r for r in rows if r["benchmark"] == "predict"])),
        ("compile", lambda: startup.markdown(rows)),
        ("verify", lambda: verify.markdown(rows)),
    ]
    out += [make() for family, make in sections if family in families]
    problems = [r for r in rows if r["status"] in ("error", "timeout", "crashed")]
    if problems:
        out += ["## Errors", ""]
        out += [
            f"- {r['benchmark']} / {r['case']} / {r['method']}: {r['status']}: {r['message']}"
            for r in problems
        ]
        out.append("")
    if figures:
        out += ["## Figures", ""] + [f"![{Path(f).stem}](figures/{Path(f).name})" for f in figures]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _series(rows: list[dict], family: str) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """(method, variant) -> [(n, time_s)] over the cases of a family.

    The variant (kernel and tolerance for SMO vs SVC, the tolerance elsewhere) pairs a peer's
    line with maxmargin's in the figure.
    """
    series: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for r in find_rows(rows, benchmark=family):
        if r.get("time_s") is None or r.get("n") is None:
            continue
        p = r["params"]
        variant = f"tol={p['tol']:g}" if p.get("tol") else ""
        if family == "smo_svc":
            variant = f"{p.get('kernel')} {variant}"
        key = (r["method"].replace("maxmargin.", ""), variant)
        series.setdefault(key, []).append((r["n"], r["time_s"]))
    return series


def _time_vs_n_figure(rows: list[dict], plt: Any) -> Any:
    """Log-log time against n per method, one panel per family (None if nothing to draw).

    The hull family has its own figure (time against the target gap): its two sizes differ in
    dimension too, and Gilbert's time at a tight gap is set by its iteration cap.
    """
    panels = [
        (f, t)
        for f, t in (
            ("smo_svc", "SMO vs SVC"),
            ("smo_cvxpy", "SMO vs CVXPY dual"),
            ("perceptron", "perceptron vs sklearn"),
        )
        if _series(rows, f)
    ]
    if not panels:
        return None
    fig, axes = panel_grid(plt, len(panels))
    for ax, (family, title) in zip(axes, panels, strict=True):
        series = _series(rows, family)
        variants = sorted({v for _, v in series})
        for (method, variant), pts in sorted(series.items()):
            pts = sorted(pts)
            peer = method.startswith(("sklearn", "cvxpy"))
            ax.loglog(
                [p[0] for p in pts],
                [p[1] for p in pts],
                "--" if peer else "-",
                marker="s" if peer else "o",
                color=f"C{variants.index(variant)}" if variant else None,
                label=f"{method} {variant}".strip(),
            )
        ns = sorted({p[0] for pts in series.values() for p in pts})
        ax.set_xticks(ns, [f"{n:,}" for n in ns], rotation=30)
        ax.xaxis.set_minor_locator(plt.NullLocator())
        decorate(ax, title + " (dashed: the peer)", "n")
    fig.tight_layout()
    return fig


def build_figures(rows: list[dict]) -> dict[str, Any]:
    """``{file name: matplotlib figure}`` of the figures the rows allow (nothing saved yet)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = {
        "bench_time_vs_n.png": _time_vs_n_figure(rows, plt),
        "bench_hulls.png": hulls.figure(rows, plt),
    }
    return {name: fig for name, fig in figures.items() if fig is not None}


def write_outputs(results: dict, out_dir: str | os.PathLike) -> dict[str, Any]:
    """Write ``benchmarks.json``, ``benchmarks.md`` and ``figures/bench_*.png`` into ``out_dir``.

    Everything is rendered before anything is written, and each file is replaced atomically,
    so a failure leaves the previous outputs intact.
    """
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    results = dict(results)
    results["targets"] = evaluate_targets(results["rows"])
    figures = build_figures(results["rows"])
    try:
        json_text = json.dumps(jsonable(results), indent=1, allow_nan=False) + "\n"
        md_text = render_markdown(results, list(figures))
        fig_paths = []
        for name, fig in figures.items():
            fig_paths.append(str(out / "figures" / name))
            atomic_savefig(fig, out / "figures" / name)
    finally:
        for fig in figures.values():
            plt.close(fig)
    json_path, md_path = out / "benchmarks.json", out / "benchmarks.md"
    atomic_write(json_path, json_text)
    atomic_write(md_path, md_text)
    return {"json": str(json_path), "markdown": str(md_path), "figures": fig_paths}


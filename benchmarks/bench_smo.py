"""SMO against scikit-learn's SVC (LIBSVM) on the same data, side by side in one process.

Data: two overlapping Gaussian clouds in d = 20 (unit covariance, means +-1 along the first
axis, labels balanced at random), fixed seed. Both solve the RBF SVM with C = 1, the same float
gamma (scikit-learn's "scale" rule), cache_size = 200 MB and shrinking on, at the same ``tol``.

Prints, for each n: the best-of-``--repeat`` wall time of SVC and of ``smo``, their ratio, the
relative difference of the dual objectives ``|D_smo - D_svc| / |D_svc|`` (SVC's from
``dual_coef_`` = y_i alpha_i and the exact kernel), both iteration counts, and the support vector
counts. The first, untimed ``smo`` call compiles (or loads from Numba's cache) and its time is
reported separately.

    python benchmarks/bench_smo.py --sizes 2000 5000 10000 --tol 1e-3 [--shrinking off]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.svm import SVC

from maxmargin.algorithms.smo import smo
from maxmargin.kernels import RBFKernel


def make_data(n: int, d: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian clouds N(+-e_1, I) in R^d with random balanced labels."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.standard_normal((n, d))
    X[:, 0] += y
    return X, y


def svc_dual_objective(model: SVC, X: np.ndarray, gamma: float) -> float:
    """``D = sum(alpha) - 1/2 ||sum_i y_i alpha_i phi(x_i)||^2`` from SVC's support vectors."""
    coef = model.dual_coef_[0]  # y_i alpha_i
    sv = X[model.support_]
    K = RBFKernel(gamma)(sv, sv)
    return float(np.sum(np.abs(coef)) - 0.5 * coef @ K @ coef)


def smo_exact_dual(alpha: np.ndarray, y: np.ndarray, X: np.ndarray, gamma: float) -> float:
    """The same formula for smo's alpha with the exact (float64) kernel."""
    sv = np.flatnonzero(alpha > 0)
    coef = alpha[sv] * y[sv]
    K = RBFKernel(gamma)(X[sv], X[sv])
    return float(np.sum(alpha) - 0.5 * coef @ K @ coef)


def run(sizes: list[int], tol: float, repeat: int, shrinking: bool = True) -> None:
    X0, y0 = make_data(200)
    t = time.perf_counter()
    smo(X0, y0, C=1.0, kernel="rbf", tol=tol)
    print(f"# first smo call (compile or load from cache): {time.perf_counter() - t:.2f} s")
    print(f"# tol = {tol:g}, C = 1, rbf, d = 20, cache_size = 200 MB, "
          f"shrinking {'on' if shrinking else 'off'}, best of {repeat}")
    header = (
        f"{'n':>6} {'t_svc[s]':>9} {'t_smo[s]':>9} {'ratio':>6} {'|dD|/|D|':>9} "
        f"{'it_svc':>7} {'it_smo':>7} {'nSV_svc':>7} {'nSV_smo':>7}"
    )
    print(header)
    for n in sizes:
        X, y = make_data(n)
        gamma = 1.0 / (X.shape[1] * X.var())
        t_svc, t_smo = np.inf, np.inf
        for _ in range(repeat):
            t = time.perf_counter()
            model = SVC(kernel="rbf", C=1.0, tol=tol, gamma=gamma, cache_size=200,
                        shrinking=shrinking).fit(X, y)
            t_svc = min(t_svc, time.perf_counter() - t)
            t = time.perf_counter()
            sol = smo(X, y, C=1.0, kernel="rbf", gamma=gamma, tol=tol, cache_size=200,
                      shrinking=shrinking)
            t_smo = min(t_smo, time.perf_counter() - t)
        d_svc = svc_dual_objective(model, X, gamma)
        d_smo = smo_exact_dual(sol.alpha, y, X, gamma)
        rel = abs(d_smo - d_svc) / abs(d_svc)
        print(
            f"{n:>6} {t_svc:>9.3f} {t_smo:>9.3f} {t_smo / t_svc:>6.2f} {rel:>9.2e} "
            f"{int(model.n_iter_[0]):>7} {sol.iterations:>7} {int(model.n_support_.sum()):>7} "
            f"{sol.support().size:>7}",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000])
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shrinking", choices=("on", "off"), default="on")
    args = parser.parse_args()
    run(args.sizes, args.tol, args.repeat, args.shrinking == "on")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

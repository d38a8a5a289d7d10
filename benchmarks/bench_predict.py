"""Prediction: MaxMarginClassifier.decision_function against SVC.decision_function.

Both models are fitted on the same data (RBF, d = 20, C = 1) in this process and pickled; each
is then loaded and evaluated on the same new points in a fresh child process with
single-threaded BLAS, so that its peak memory (ru_maxrss above the baseline after loading the
model and the points; VmHWM after a ``clear_refs`` reset, Linux) is the prediction's own. Usage::

    python benchmarks/bench_predict.py [--n-new 100000] [--n-train 4000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def _data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + 0.6 * y[:, None] / np.sqrt(d)
    return X, y


def _status_mb(field: str) -> float:
    """A ``/proc/self/status`` memory field in MB (VmRSS now, VmHWM the peak since reset)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    raise OSError(f"{field} not in /proc/self/status")


def _child(path: str, n_new: int, repeats: int) -> dict:
    import pickle

    from threadpoolctl import threadpool_limits

    with open(path, "rb") as fh:
        model = pickle.load(fh)
    X_new, _ = _data(n_new, 20, 1)
    base = _status_mb("VmRSS")
    with open("/proc/self/clear_refs", "w") as fh:  # reset VmHWM (Linux)
        fh.write("5")
    times = []
    with threadpool_limits(1):
        for _ in range(repeats):
            t = time.perf_counter()
            out = model.decision_function(X_new)
            times.append(time.perf_counter() - t)
    peak = _status_mb("VmHWM")
    return {"best_s": min(times), "extra_mb": peak - base,
            "n_sv": int(model.support_.size), "checksum": float(np.sum(out[:100]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-new", type=int, default=100_000)
    parser.add_argument("--n-train", type=int, default=4_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", default=None)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.n_new, args.repeats)))
        return
    import pickle
    import tempfile

    from sklearn.svm import SVC

    from maxmargin import MaxMarginClassifier

    X, y = _data(args.n_train, 20, 0)
    models = {"svc": SVC(kernel="rbf", C=1.0).fit(X, y),
              "maxmargin": MaxMarginClassifier(kernel="rbf", C=1.0).fit(X, y)}
    rows = {}
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as tmp:
        for which, model in models.items():
            path = os.path.join(tmp, f"{which}.pkl")
            with open(path, "wb") as fh:
                pickle.dump(model, fh)
            out = subprocess.run(
                [sys.executable, __file__, "--child", path, "--n-new", str(args.n_new),
                 "--repeats", str(args.repeats)],
                capture_output=True, text=True, check=True, env=env,
            )
            rows[which] = json.loads(out.stdout.strip().splitlines()[-1])
    ratio = rows["maxmargin"]["best_s"] / rows["svc"]["best_s"]
    same = abs(rows["maxmargin"]["checksum"] - rows["svc"]["checksum"])
    print(f"decision_function on {args.n_new} points, RBF, d=20, {rows['svc']['n_sv']} SVs "
          f"(1 thread each):")
    for which, r in rows.items():
        print(f"  {which:10s} {r['best_s']:.3f} s, peak +{r['extra_mb']:.0f} MB")
    print(f"  ratio maxmargin / SVC = {ratio:.2f}x (decision values differ by {same:.1e} "
          "over 100 points: the two fits agree to tol)")


if __name__ == "__main__":
    main()

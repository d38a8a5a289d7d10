"""Prediction: MaxMarginClassifier.decision_function against SVC.decision_function.

The same RBF model (fitted once by SVC, d = 20) is evaluated by both on the same new points,
single-threaded BLAS, each in a fresh child process so that its peak memory (ru_maxrss above
the process's baseline after loading the model) is its own. Usage::

    python benchmarks/bench_predict.py [--n-new 100000] [--n-train 4000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np


def _data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + 0.6 * y[:, None] / np.sqrt(d)
    return X, y


def _child(which: str, n_new: int, n_train: int, repeats: int) -> dict:
    from sklearn.svm import SVC
    from threadpoolctl import threadpool_limits

    from maxmargin import MaxMarginClassifier

    X, y = _data(n_train, 20, 0)
    X_new, _ = _data(n_new, 20, 1)
    if which == "svc":
        model = SVC(kernel="rbf", gamma="scale", C=1.0).fit(X, y)
    else:
        model = MaxMarginClassifier(kernel="rbf", gamma="scale", C=1.0).fit(X, y)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    with threadpool_limits(1):
        for _ in range(repeats):
            t = time.perf_counter()
            out = model.decision_function(X_new)
            times.append(time.perf_counter() - t)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"which": which, "best_s": min(times), "extra_mb": (peak - base) / 1024.0,
            "n_sv": int(model.support_.size), "checksum": float(np.sum(out[:100]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-new", type=int, default=100_000)
    parser.add_argument("--n-train", type=int, default=4_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", default=None)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.n_new, args.n_train, args.repeats)))
        return
    rows = {}
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for which in ("svc", "maxmargin"):
        out = subprocess.run(
            [sys.executable, __file__, "--child", which, "--n-new", str(args.n_new),
             "--n-train", str(args.n_train), "--repeats", str(args.repeats)],
            capture_output=True, text=True, check=True, env=env,
        )
        rows[which] = json.loads(out.stdout.strip().splitlines()[-1])
    ratio = rows["maxmargin"]["best_s"] / rows["svc"]["best_s"]
    print(f"decision_function on {args.n_new} points, RBF, d=20, {rows['svc']['n_sv']} SVs "
          f"(1 thread each):")
    for which, r in rows.items():
        print(f"  {which:10s} {r['best_s']:.3f} s, peak +{r['extra_mb']:.0f} MB")
    print(f"  ratio maxmargin / SVC = {ratio:.2f}x")


if __name__ == "__main__":
    main()

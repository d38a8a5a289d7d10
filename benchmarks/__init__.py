"""maxmargin's algorithms timed against their peers, side by side: ``python -m benchmarks``.

The cases of a benchmark family run in a fresh child process (``python -c ...``; the large
cases one process each), and inside that one process the peer and maxmargin solve the **same
data** at the **same tolerance**, one after the other: first a warm-up
call on a tiny problem of the same kind (so Numba compilation and import costs are not timed;
their duration is recorded as ``warmup_s``), then best-of-``k`` timed calls. Compile time is
measured separately by the ``compile`` benchmark, in a child process with an empty Numba cache.

Families (``--only`` takes these names):

=============  ===========================================================================
smo_svc        :func:`~maxmargin.algorithms.smo.smo` vs scikit-learn ``SVC`` (LIBSVM), RBF and
               linear kernels, ``d = 20``, ``C = 1``, ``tol = 1e-3``, cache 200 MB, same gamma.
smo_hard       ``smo`` vs ``SVC`` on the hard regimes (C = 100 / 1000, poly, linear d = 300,
               unscaled breast cancer, d = 500), and ``smo(C=None)`` vs ``gilbert_svm`` with
               MDM and Wolfe on hard-margin RBF problems.
smo_cvxpy      ``smo`` vs the CVXPY dual oracle ``svm_dual`` with Clarabel and OSQP.
hulls          ``gilbert_hulls``, ``mdm_hulls`` and ``wolfe_hulls`` vs ``hull_distance``
               solved by Clarabel and PIQP, at relative duality gaps 1e-3, 1e-6, 1e-8, on
               clouds far apart and on close hulls (d = 2, 50, 500).
linear         ``dcd`` and ``l1_cdn`` vs ``LinearSVC`` (LIBLINEAR) on its own problems, hinge,
               squared hinge and the L1-penalised squared hinge, dense and sparse, relative gaps
               1e-3 and 1e-6 (:mod:`benchmarks.linear`).
linear_cs      ``cs_dcd`` vs ``LinearSVC(multi_class="crammer_singer")`` on Crammer and Singer's
               multi-class problem, dense and sparse.
linear_svc     ``smo(kernel="linear")`` on SVC's problem (unregularised bias) vs ``LinearSVC``.
nu_svc         ``nu_smo`` vs ``NuSVC``, and ``gilbert_svm(nu=...)`` by MDM and Wolfe vs
               ``nu_smo`` (:mod:`benchmarks.nu`).
one_class      ``one_class_smo`` vs ``OneClassSVM``, and ``one_class_hull`` by MDM and Wolfe vs
               ``one_class_smo``.
reduced_hulls  the nearest-point methods with ``mu`` vs ``hull_distance(mu=...)`` by Clarabel
               and PIQP on close reduced hulls, relative gap 1e-8.
perceptron     ``perceptron`` vs scikit-learn ``Perceptron`` run for the same number of epochs.
estimator      ``MaxMarginClassifier().fit`` vs ``SVC().fit``; ``grid_search`` and ``predict``
               the same in ``GridSearchCV`` and ``decision_function``.
compile        first-call (Numba compile) time of each compiled algorithm, empty and warm cache.
verify         ``maxmargin verify --suite quick`` end to end (wall time, exit code).
=============  ===========================================================================

Accuracy is judged by quantities computed here, independently of what each solver reports:

* SVM dual objective, for any solver's ``(alpha_i y_i)`` on its support vectors ``S``,

  .. math::

      g_i = \\sum_{j \\in S} \\alpha_j y_j K(x_j, x_i), \\qquad
      D = \\sum_{j \\in S} \\alpha_j - \\tfrac12 \\sum_{i \\in S} \\alpha_i y_i g_i,

  evaluated in row blocks (never an ``n x n`` matrix); training accuracy is the fraction of
  ``sign(g_i + b) = y_i``. For SVC, ``alpha_j y_j`` is ``dual_coef_`` and ``b`` is
  ``intercept_`` (scikit-learn's decision function is ``sum_j dual_coef_j K(sv_j, x) + b``).
* Relative duality gap of nearest points ``p = P^T lam``, ``q = Q^T mu`` (weights clipped to the
  simplex first) with ``z = p - q``:

  .. math::

      \\mathrm{gap} = \\frac{\\|z\\|^2 - (\\min_i \\langle z, P_i\\rangle
      - \\max_j \\langle z, Q_j\\rangle)}{\\|z\\|^2}.

* Peak memory: the child resets the kernel's resident-set high-water mark
  (``/proc/self/clear_refs``), runs the method once, and reads the high-water mark ``VmHWM``
  (what ``getrusage(RUSAGE_SELF).ru_maxrss`` reports, without its floor at the parent's size);
  ``peak_delta_mb`` is that peak minus the resident size just before the call (tracemalloc
  would miss Numba's allocations). For the largest SMO cases each solver is measured again
  alone in a fresh process.

Outputs (written atomically: temp file + ``os.replace``): ``benchmarks.json`` (versions, machine,
date, one row per case x method), ``benchmarks.md`` (one titled table per family, headline ratios,
and a MET / NOT MET line per stated target) and ``figures/bench_*.png``.
"""

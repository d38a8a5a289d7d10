"""Named tolerance presets: the one place where "close enough" is defined.

Every comparison of the verification suite (``cross_check``, the theorem checks, the runner, the
CLI, the report and the tests) takes its limits from one of these presets, by name. A preset is
chosen by how accurately the *candidate* is asked to solve the problem:

=========  ================================================================================
preset     used for
=========  ================================================================================
TIGHT      SMO at ``tol=1e-6``, MDM at ``tol=1e-8``: agreement to interior-point accuracy
MEDIUM     SMO at ``tol=1e-3`` (LIBSVM's default stopping rule)
LOOSE      vanilla Gilbert (sublinear O(1/k) rate, stopped on a relative gap of ~1e-6)
ORACLE     one oracle against another (Clarabel vs OSQP, primal vs dual form)
=========  ================================================================================

The errors the limits apply to are defined in :mod:`maxmargin.verification.crosscheck`:

* ``objective``: ``|D_c - D_o| / max(1, |D_o|)``
* ``w``: ``||w_c - w_o|| / max(||w_o||, tiny)``
* ``decision``: ``max_i |f_c(x_i) - f_o(x_i)| / max(1, max_i |f_o(x_i)|)``
* ``b``: ``|b_c - b_o| / max(1, |b_o|)``, or the distance of ``b_c`` to the oracle's KKT interval
* ``alpha``: ``max_i |alpha_c,i - alpha_o,i| / max(max_i alpha_o,i, tiny)`` (only when unique)
* ``kkt``: the candidate's largest pointwise KKT residual (the fields of ``kkt_residuals``
  other than ``duality_gap``: feasibility, box, ``y . alpha``, complementary slackness,
  stationarity, LIBSVM's violation -- all in units of ``y f`` or of alpha)
* ``gap``: the candidate's relative duality gap ``|P - D| / max(1, |P|)``. It has its own limit
  because it is a sum over the points: ``P - D = sum_i [alpha_i (y_i f_i - 1) + C xi_i]`` and
  each term is at most ``C v_i`` for a pointwise violation ``v_i``, so a solution within
  ``kkt`` pointwise may have a gap up to ``n C kkt / max(1, |P|)``. (The objective itself is
  compared with the oracle's through ``objective``.)

``kkt_exclude`` names KKT residuals (fields of ``kkt_residuals``) that a preset does not judge.
LOOSE excludes ``max_violation``: vanilla Gilbert is a Frank-Wolfe method without away steps,
so every point it ever stepped towards keeps a vanishing but positive weight ``alpha_i``, and
LIBSVM's index-set violation counts such a point as a support vector however small its weight
(it is discontinuous at ``alpha_i = 0``). The continuous residual ``alpha_i (y_i f_i - 1)``
(``complementary_zero``) measures the same condition weighted by the weight, and is judged.

``margin`` is the relative tolerance used to decide that a point lies on the margin
(``|y_i f(x_i) - 1| <= margin``) when deciding whether alpha is unique, and ``bound`` the
relative slack allowed in an inequality of a theorem (round-off only).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Tolerances", "TIGHT", "MEDIUM", "LOOSE", "ORACLE", "PRESETS", "get_tolerances"]


@dataclass(frozen=True)
class Tolerances:
    """Limits for the errors of a candidate against an oracle (see the module docstring)."""

    name: str
    objective: float
    w: float
    decision: float
    b: float
    alpha: float
    kkt: float
    gap: float
    margin: float = 1e-5
    bound: float = 1e-9
    kkt_exclude: tuple[str, ...] = ()


#: SMO at tol=1e-6 and MDM at tol=1e-8 against an interior-point oracle (accuracy ~1e-8).
TIGHT = Tolerances(
    name="tight", objective=1e-6, w=1e-4, decision=1e-4, b=1e-4, alpha=1e-3, kkt=1e-5, gap=1e-5
)
#: SMO at tol=1e-3: the maximal violation of the KKT conditions is 1e-3 in units of y f.
MEDIUM = Tolerances(
    name="medium", objective=1e-3, w=2e-2, decision=2e-2, b=2e-2, alpha=5e-2, kkt=2e-3, gap=1e-2
)
#: Vanilla Gilbert: sublinear convergence, a relative gap of ~1e-6 on the distance.
LOOSE = Tolerances(
    name="loose", objective=1e-3, w=2e-2, decision=2e-2, b=2e-2, alpha=5e-2, kkt=5e-2, gap=5e-2,
    kkt_exclude=("max_violation",),
)
#: Two oracles (different solvers or forms of the same problem) against each other.
ORACLE = Tolerances(
    name="oracle", objective=1e-5, w=1e-3, decision=1e-3, b=1e-3, alpha=1e-2, kkt=1e-4, gap=1e-4
)

PRESETS: dict[str, Tolerances] = {t.name: t for t in (TIGHT, MEDIUM, LOOSE, ORACLE)}


def get_tolerances(spec: str | Tolerances) -> Tolerances:
    """The preset named ``spec`` (``"tight"``, ``"medium"``, ``"loose"``, ``"oracle"``).

    A :class:`Tolerances` instance is returned unchanged; anything else is a ``ValueError``
    naming the argument ``tolerances``.
    """
    if isinstance(spec, Tolerances):
        return spec
    from maxmargin._validation import check_choice

    return PRESETS[check_choice(spec, "tolerances", tuple(PRESETS))]

"""A batched trust-region Newton minimiser for many small problems at once."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

# descend_many is shared by linear_minima and linear_jump (through copylib.theory.linear); nothing is exported.
__all__: list[str] = []


class _BatchedObjective(Protocol):
    """What :func:`descend_many` minimises: value, gradient and Hessian of a batch of points,
    and the objective of a subset of the batch's rows."""

    def value_grad_hess(self, z: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...

    def at(self, idx: np.ndarray) -> _BatchedObjective: ...


def _trust_region_step(g: np.ndarray, H: np.ndarray, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact solution of ``min g.p + p.H.p/2`` over ``|p| <= radius`` for a batch of small
    problems (``g (B, d)``, ``H (B, d, d)``), via the eigendecomposition of ``H``.

    Returns ``p (B, d)`` and whether it lies on the boundary. The multiplier
    ``mu`` of ``(H + mu I) p = -g`` solves ``|p(mu)| = radius`` by safeguarded
    Newton on ``1/|p| - 1/radius`` (More & Sorensen); in the "hard case"
    (gradient orthogonal to the lowest eigenvector of an indefinite ``H``) the
    step is completed along that eigenvector.
    """
    lam, U = np.linalg.eigh(H)
    a = np.einsum("bij,bi->bj", U, g)  # components of g along the eigenvectors
    lam_min = lam[:, 0]
    lo = np.maximum(0.0, -lam_min)
    gn = np.linalg.norm(g, axis=1)
    hi = lo + gn / radius + np.abs(lam).max(axis=1) + 1e-300

    def norm_p(mu):
        return np.sqrt(((a / (lam + mu[:, None])) ** 2).sum(1))

    with np.errstate(divide="ignore", invalid="ignore"):
        interior = (lam_min > 0) & (norm_p(np.zeros_like(lam_min)) <= radius)
        mu = np.where(interior, 0.0, hi)
        todo = ~interior
        # |p(mu)| decreases from |p(lo+)| to below radius at hi: Newton from the right is monotone
        for _ in range(100):
            if not todo.any():
                break
            d = lam[todo] + mu[todo, None]
            q = (a[todo] / d) ** 2
            pn = np.sqrt(q.sum(1))
            dpn = -(q / d).sum(1) / pn  # d|p|/dmu
            phi = 1 / pn - 1 / radius[todo]
            dphi = -dpn / pn**2
            step = phi / dphi
            new = mu[todo] - step
            new = np.where(new <= lo[todo], 0.5 * (mu[todo] + lo[todo]), new)
            done = np.abs(new - mu[todo]) <= 1e-15 * np.maximum(new, 1e-300) + 1e-300
            mu[todo] = new
            idx = np.flatnonzero(todo)
            todo[idx[done]] = False
        p = -np.einsum("bij,bj->bi", U, a / (lam + mu[:, None]))
        p = np.where(np.isfinite(p), p, 0.0)
    pn = np.linalg.norm(p, axis=1)
    hard = ~interior & (pn < radius * (1 - 1e-8))
    if hard.any():  # complete the step to the boundary along the lowest eigenvector
        tau = np.sqrt(np.maximum(radius[hard] ** 2 - pn[hard] ** 2, 0.0))
        p[hard] += tau[:, None] * U[hard, :, 0]
    return p, ~interior


def descend_many(obj: _BatchedObjective, z0: npt.ArrayLike, P: npt.ArrayLike, *, gtol: float = 1e-12, maxiter: int = 500,
                 radius0: float = 1.0, max_radius: float = 1000.0, eta: float = 0.15) -> tuple[np.ndarray, np.ndarray]:
    """Trust-region Newton with the exact subproblem (scipy's ``trust-exact`` scheme and
    constants) for a batch of starts ``z0 (B, d)`` at ``P (B,)``, all iterated together.

    Each start stops on its own when its gradient norm is below ``gtol``, when the
    model predicts no decrease (precision exhausted) or after ``maxiter`` steps.
    Returns the end points (with the sign convention ``m >= 0``) and their action.
    """
    z = np.array(z0, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    S, g, H = obj.value_grad_hess(z, P)
    radius = np.full(z.shape[0], radius0)
    active = np.linalg.norm(g, axis=1) >= gtol
    for _ in range(maxiter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        p, hits = _trust_region_step(g[idx], H[idx], radius[idx])
        # as scipy: the model value, then its difference to S, so that the predicted
        # reduction rounds to zero (and the search stops) once steps fall below S's precision
        model = S[idx] + np.einsum("bi,bi->b", g[idx], p) + 0.5 * np.einsum("bi,bij,bj->b", p, H[idx], p)
        predicted = S[idx] - model
        # a trial point may leave the action's domain (r2 underflows to 0 far out in ln rho):
        # its value is not finite and the step is rejected below
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            S_new, g_new, H_new = obj.at(idx).value_grad_hess(z[idx] + p, P[idx])
        rho = (S[idx] - S_new) / np.where(predicted > 0, predicted, 1.0)
        stop = ~(predicted > 0)
        r = radius[idx]
        r = np.where(rho < 0.25, 0.25 * r, np.where((rho > 0.75) & hits, np.minimum(2 * r, max_radius), r))
        radius[idx] = r
        take = (rho > eta) & ~stop & np.isfinite(S_new)
        t = idx[take]
        z[t] += p[take]
        S[t], g[t], H[t] = S_new[take], g_new[take], H_new[take]
        active[idx[stop]] = False
        active[t] = np.linalg.norm(g[t], axis=1) >= gtol
    flip = z[:, 0] < 0  # sign symmetry (m, q) -> (-m, -q)
    z[flip, :2] = -z[flip, :2]
    return z, S



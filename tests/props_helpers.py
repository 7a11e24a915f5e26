"""Strategies and helpers shared by the property tests (``tests/**/test_*_properties.py``).

Conventions of the property suite:

* every public copylib function is registered with :func:`covers` by at least one
  test; ``test_property_coverage.py`` fails when one is missing;
* ``raises_naming(name)`` expects ``ValueError`` or ``TypeError`` whose message
  names the offending parameter as a whole word;
* sizes stay tiny (``L, V <= 6`` unless a test is about large sizes) so that the
  whole suite runs in well under two minutes on two cores.
"""

from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest
import torch
from hypothesis import settings
from hypothesis import strategies as st

import copylib as cl
from copylib.model.attention import attention_kinds
from copylib.theory import softmax_cumulants

# HYPOTHESIS_PROFILE=explore (tests/conftest.py) multiplies every budget by five.
_FACTOR = 5 if os.environ.get("HYPOTHESIS_PROFILE") == "explore" else 1

# The range of variances the robustness requirement names (issue 8: "tiny and huge variances").
SCALE_LO, SCALE_HI = 1e-8, 1e8

COVERED: set = set()


def budget(n: int):
    """``@settings`` with ``n`` examples (times the profile's factor)."""
    return settings(max_examples=n * _FACTOR)


def covers(*functions):
    """Register the public functions a test exercises (see test_property_coverage.py)."""
    def deco(test):
        COVERED.update(functions)
        return test
    return deco


def raises_naming(name: str, exc=(ValueError, TypeError)):
    """``pytest.raises`` for an error whose message names ``name`` as a whole word."""
    return pytest.raises(exc, match=rf"(?<![\w.]){re.escape(name)}(?!\w)")


# Sizes L, V of the model tests.
sizes = st.integers(2, 6)


# --------------------------------------------------------------------------
# scalars
# --------------------------------------------------------------------------


def log_uniform(lo: float, hi: float):
    """Floats spread evenly in ``log10`` over ``[lo, hi]``, endpoints always tried first."""
    return st.one_of(
        st.sampled_from([lo, hi]),
        st.floats(math.log10(lo), math.log10(hi)).map(lambda e: float(10.0**e)),
    )


def bad_ints(minimum: int):
    """Values that ``check_int(name, value, minimum)`` must reject."""
    return st.one_of(
        st.integers(max_value=minimum - 1),
        st.booleans(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from(["3", None, [3], 3 + 0j]),
    )


def bad_positive():
    """Values that ``check_positive(name, value)`` must reject (not a finite real > 0)."""
    return st.one_of(
        st.floats(max_value=0.0),
        st.sampled_from([math.nan, math.inf, -math.inf, True, "1.0", None, [1.0], 1j]),
    )


def not_bool():
    """Values for a flag that must be a bool."""
    return st.sampled_from([0, 1, "yes", None, 1.0, [True]])


def not_array():
    """Values for an array parameter that are not an array of real numbers."""
    return st.sampled_from([None, "abc", "1.5", {"a": 1}, [[1.0, 2.0], [3.0]], 1j, np.array(["x"])])


def nonfinite():
    return st.sampled_from([math.nan, math.inf, -math.inf])


def with_nonfinite(array: np.ndarray, data) -> np.ndarray:
    """A copy of ``array`` with one entry (chosen by ``data``) replaced by NaN or +-inf."""
    out = np.array(array, dtype=np.float64, copy=True, order="C")  # C order: reshape(-1) is a view
    flat = out.reshape(-1)
    flat[data.draw(st.integers(0, flat.size - 1), label="bad index")] = data.draw(nonfinite(), label="bad value")
    return out


def bad_spec():
    """Things that are not a ModelSpec."""
    return st.sampled_from([None, "spec", {"L": 4, "V": 3}, (4, 3)])


# --------------------------------------------------------------------------
# model specifications
# --------------------------------------------------------------------------


def specs(kind=None, L=st.integers(2, 6), V=st.integers(2, 4), scales=None, cyclic=st.booleans()):
    """ModelSpec with the given size strategies and variances log-uniform in ``scales``."""
    scales = scales if scales is not None else log_uniform(0.3, 3.0)
    if kind is None:
        kinds = st.sampled_from(attention_kinds())
    else:
        kinds = kind if isinstance(kind, st.SearchStrategy) else st.just(kind)
    return st.builds(
        cl.ModelSpec, L=L, V=V, kind=kinds, sigma_G=scales, sigma_b=scales, omega=scales,
        sigma0_sq=scales, cyclic=cyclic,
    )


#: seeds for numpy and torch generators
seeds = st.integers(0, 2**32 - 1)

#: small cyclic softmax models, where the plug-in marginal is computed exactly
exact_softmax_specs = specs("softmax", L=st.integers(3, 8), V=st.integers(2, 5), scales=log_uniform(0.5, 2.0),
                            cyclic=st.just(True))


def extreme_specs(kind, L=st.sampled_from([2, 3, 512]), V=st.sampled_from([2, 3, 16]), cyclic=st.just(True)):
    """ModelSpec with every variance anywhere in ``[1e-8, 1e8]`` (ends included)."""
    return specs(kind, L=L, V=V, scales=log_uniform(SCALE_LO, SCALE_HI), cyclic=cyclic)


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------


def rngs():
    return st.integers(0, 2**32 - 1).map(np.random.default_rng)


def cooccurrence_of(P: int, spec: cl.ModelSpec, seed: int) -> np.ndarray:
    X, _ = cl.copy_task(P, spec.L, spec.V, np.random.default_rng(seed), cyclic=spec.cyclic)
    return cl.cooccurrence(X)


# A wrong shape for each array parameter of the statistics and losses (valid ones: statistics_args).
WRONG_SHAPES = {"A": np.eye(4), "W": np.zeros((2, 3)), "C": np.zeros((3, 3, 2)), "T": np.eye(4), "X": np.zeros((3, 2)),
                "M": np.zeros((2, 3))}


def statistics_args() -> dict:
    """Valid ``A, W, C, T, X`` for ``L = 3, V = 2`` (two sequences), one per parameter name."""
    X = cl.copy_task(2, 3, 2, np.random.default_rng(0))[0]
    return {"A": np.eye(3), "W": np.eye(2), "C": cl.cooccurrence(X), "T": cl.shift_matrix(3), "X": X}


def finite_arrays(shape, lo=-5.0, hi=5.0):
    """Float64 arrays of ``shape`` with entries in ``[lo, hi]`` (no NaN/inf)."""
    from hypothesis.extra.numpy import arrays

    return arrays(np.float64, shape, elements=st.floats(lo, hi, allow_nan=False, width=64))


def assert_finite(x, what: str = "output"):
    x = np.asarray(x.detach() if hasattr(x, "detach") else x, dtype=np.float64)
    assert np.isfinite(x).all(), f"{what} is not finite: {x}"


# --------------------------------------------------------------------------
# numpy in, numpy out; torch in, torch out (copylib.model)
# --------------------------------------------------------------------------


def as_input(x, use_torch: bool):
    """``x`` as a torch tensor or unchanged (numpy), for the functions that take either."""
    return torch.as_tensor(x) if use_torch else x


def check_out(out, shape, use_torch: bool):
    """``out`` is float64 of ``shape``, finite, and of the input's library."""
    if use_torch:
        assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    else:
        assert isinstance(out, np.ndarray) and out.dtype == np.float64
    assert tuple(out.shape) == shape
    assert_finite(out)


# --------------------------------------------------------------------------
# the plug-in marginal of softmax attention (copylib.theory.softmax_cumulants and after)
# --------------------------------------------------------------------------


def small_row_cumulants(spec: cl.ModelSpec, seed: int, n1: int = 5, n2: int = 7, n_draws: int = 32):
    """Cheap row cumulants: a few tilts around 0 (``lam1[3] = lam2[2] = 0`` at the defaults), a ``t``
    grid wide enough for the prior of ``t``."""
    s = spec.sigma_G
    return softmax_cumulants.row_cumulants(spec, np.random.default_rng(seed), n_draws=n_draws,
                                           lam1=np.linspace(-12.0, 4.0, n1), lam2=np.linspace(-6.0, 12.0, n2),
                                           t_step=s / 4, t_range=(-12 * s - 2 * math.log(spec.L) - 4, 10 * s + 4))


def reachable_copy_weights(cum, n: int = 40) -> np.ndarray:
    """A copy-weight grid that every line of the tilt grid of ``cum`` spans (the intersection of their ranges)."""
    v = cum.mean[..., 1]
    lo, hi = v.min(axis=1).max(), v.max(axis=1).min()
    return np.linspace(lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo), n)

"""Property tests: copylib.theory.softmax_noise (noisy rows, the transverse average)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.theory import softmax_noise as sn

from props_helpers import (
    assert_finite,
    bad_ints,
    budget,
    covers,
    log_uniform,
    raises_naming,
    specs,
)

softmax_specs = specs("softmax", L=st.integers(2, 16), V=st.integers(2, 5))


seeds = st.integers(0, 2**32 - 1)


@covers(sn.row_noise, sn.RowNoise)
@budget(20)
@given(spec=softmax_specs, n_pow=st.integers(0, 8), std=st.one_of(st.none(), st.floats(0, 5)), seed=seeds)
def test_row_noise_valid(spec, n_pow, std, seed):
    rows = sn.row_noise(spec, np.random.default_rng(seed), n_draws=2**n_pow, std=std)
    assert isinstance(rows, sn.RowNoise) and rows.L == spec.L
    assert rows.shift.shape == rows.rho.shape == (2**n_pow,)
    assert_finite(rows.shift)
    # rho = sum e^{2 eta} / (sum e^eta)^2 over the L - 1 other positions: in [1/(L-1), 1]
    assert (rows.rho > 0).all() and (rows.rho <= 1 + 1e-15).all()
    assert (rows.rho >= 1 / (spec.L - 1) * (1 - 1e-12)).all()
    assert rows.std == (spec.sigma_G if std is None else std)


@covers(sn._transverse_average, sn._TransverseAverage)
@budget(10)
@given(spec=specs("softmax", L=st.integers(2, 8), V=st.integers(2, 4)), Delta=st.floats(-5, 10),
       P=log_uniform(1e-1, 1e4), std=st.one_of(st.none(), st.floats(0, 3)), seed=seeds)
def test_transverse_average_valid(spec, Delta, P, std, seed):
    r = sn._transverse_average(Delta, P, spec, np.random.default_rng(seed), n_samples=16, std=std)
    assert isinstance(r, sn._TransverseAverage)
    for name in ("mean_field", "mean", "free_energy", "variance", "copy_weight", "alpha_1"):
        assert isinstance(getattr(r, name), float) and math.isfinite(getattr(r, name)), name
    assert r.variance >= 0 and 0 < r.copy_weight < 1
    # Jensen: -ln E e^{-S} <= E S (up to the rounding of the log-sum-exp)
    assert r.free_energy <= r.mean + 1e-9 * (1 + abs(r.mean))


@covers(sn.RowNoise)
@budget(20)
@given(data=st.data())
def test_row_noise_class_invalid(data):
    args = {"shift": np.zeros(3), "rho": np.full(3, 0.5), "std": 1.0, "L": 4}
    name = data.draw(st.sampled_from(sorted(args)))
    if name == "L":
        args[name] = data.draw(bad_ints(2))
    elif name == "std":
        args[name] = data.draw(st.sampled_from([-1.0, math.nan, "1", None]))
    elif name == "rho":
        args[name] = data.draw(st.sampled_from([np.zeros(3), np.full(3, 1.5), np.full(2, 0.5), np.full(3, math.nan)]))
    else:
        args[name] = data.draw(st.sampled_from([np.zeros(2), np.zeros(0), np.full(3, math.inf)]))
    with raises_naming(name if name in ("L", "std") else f"RowNoise.{name}"):
        sn.RowNoise(**args)

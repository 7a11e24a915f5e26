"""Property tests of copylib.analysis.softmax_umbrella: MBAR over harmonic windows in c."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm

from copylib.analysis import softmax_umbrella as su

from props_helpers import budget, covers, raises_naming


def _gaussian_windows(mu, s, centres, spring, n, rng):
    """Exact draws of every window when the unbiased law is N(mu, s^2): each biased law is again Gaussian."""
    prec = 1 / s**2 + spring
    means = (mu / s**2 + spring * centres) / prec
    return means[:, None] + rng.standard_normal((centres.size, n)) / math.sqrt(prec)


@covers(su.windows_log_odds)
@budget(15)
@given(mu=st.floats(0.2, 0.8), s=st.floats(0.05, 0.2), shift=st.floats(-1.5, 1.5), seed=st.integers(0, 2**32 - 1))
def test_windows_recover_a_gaussian_law_in_closed_form(mu, s, shift, seed):
    rng = np.random.default_rng(seed)
    c_div = mu + shift * s  # up to 1.5 standard deviations away: log-odds within about +-2.6
    centres = np.linspace(mu - 3 * s, mu + 3 * s, 13)
    spring = 1 / (centres[1] - centres[0]) ** 2
    c = _gaussian_windows(mu, s, centres, spring, 1500, rng)
    exact = math.log(norm.sf(shift) / norm.cdf(shift))
    assert abs(su.windows_log_odds(c, centres, spring, c_div) - exact) < 0.15


@covers(su.windows_log_odds)
@budget(15)
@given(seed=st.integers(0, 2**32 - 1), a=st.floats(0.3, 0.5), K=st.integers(2, 6))
def test_windows_log_odds_flips_sign_under_a_reflection(seed, a, K):
    rng = np.random.default_rng(seed)
    centres = np.sort(rng.uniform(0.2, 0.6, K)) + np.arange(K) * 1e-3
    c = rng.uniform(0.1, 0.7, (K, 40))
    c[:, 0], c[:, 1] = a - 0.05, a + 0.05  # draws on both sides of the split
    spring = 50.0
    direct = su.windows_log_odds(c, centres, spring, a)
    reflected = su.windows_log_odds(2 * a - c[::-1], 2 * a - centres[::-1], spring, a)
    assert math.isclose(direct, -reflected, rel_tol=1e-5, abs_tol=1e-5)


@covers(su.windows_log_odds)
@budget(10)
@given(which=st.sampled_from(["c", "centres", "spring", "c_div"]), data=st.data())
def test_windows_log_odds_names_a_bad_argument(which, data):
    args = dict(c=np.linspace(0.1, 0.4, 10).reshape(2, 5), centres=[0.2, 0.3], spring=100.0, c_div=0.25)
    args[which] = data.draw({"c": st.sampled_from([np.ones(5), np.ones((1, 4)), np.full((2, 3), np.inf)]),
                             "centres": st.sampled_from([[0.3, 0.2], [0.2], [0.2, np.nan]]),
                             "spring": st.sampled_from([0.0, -1.0, math.inf]),
                             "c_div": st.sampled_from([0.05, 0.5])}[which])
    with raises_naming(which):
        su.windows_log_odds(**args)


@covers(su.umbrella_log_odds, su.UmbrellaLogOdds)
@budget(10)
@given(which=st.sampled_from(["L", "V", "n_data", "n_steps", "n_windows", "spring", "c_range", "direct_steps"]),
       data=st.data())
def test_umbrella_log_odds_names_a_bad_argument(which, data):
    args = dict(L=24, V=4, n_data=2, n_steps=40, n_warmup=0, thin=1, seed=0)
    args[which] = data.draw({"L": st.sampled_from([2, 1.5]), "V": st.sampled_from([1, "4"]),
                             "n_data": st.sampled_from([1, 0, 2.5]), "n_steps": st.sampled_from([0, 7]),
                             "n_windows": st.sampled_from([1, 0]), "spring": st.sampled_from([0.0, math.nan]),
                             "c_range": st.sampled_from([(0.2, 0.1), (0.1, 1.0), (0.1,)]),
                             "direct_steps": st.sampled_from([0, 3])}[which])
    with raises_naming(which):
        su.umbrella_log_odds(**args)

"""copylib.analysis.induction_switch: the dip ratio, mixing of the ladders, the posterior's switch."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.analysis import induction as ia
from copylib.analysis import induction_switch as isw
from copylib.model.induction import InductionSpec

pytestmark = pytest.mark.usefixtures("one_thread")

STATES_SPEC = InductionSpec(L=4, V=3, sigma0_sq=0.25)


@pytest.fixture(scope="module")
def states():
    return ia.sample_induction_states(60, STATES_SPEC, np.random.default_rng(3), betas=[0.0, 0.1, 0.4, 1.0],
                                      c_split=0.5, n_chains=3, n_steps=60, n_warmup=30, thin=3, n_prior=20_000)


def test_dip_ratio_is_one_without_a_dip_and_small_between_separated_states():
    edges = np.linspace(0, 1, 11)
    c = (edges[:-1] + edges[1:]) / 2
    one = np.exp(-(c - 0.4) ** 2 / 0.05)
    two = np.exp(-(c - 0.15) ** 2 / 0.005) + np.exp(-(c - 0.85) ** 2 / 0.005)
    assert isw._dip_ratio(one, edges, 0.5) == pytest.approx(1.0)
    assert isw._dip_ratio(np.stack([two, one]), edges, 0.5)[0] < 0.01
    with pytest.raises(ValueError, match="c_split"):
        isw._dip_ratio(one, edges, 1.5)


def _tempering(c1, trips, swap):
    n_P, n_chains, _ = c1.shape
    return ia.InductionTempering(P=np.array([10, 20]), betas=np.array([0.0, 1.0]), c1=c1, score=c1, accuracy=c1,
                                 accept_rate=np.full((2, n_P, n_chains), 0.5), swap_rate=swap,
                                 round_trips=trips)


def test_tempering_mixing_on_planted_chains():
    rng = np.random.default_rng(0)
    same = rng.normal(0.3, 0.01, size=(2, 40))
    a = _tempering(np.stack([same, same + 0.0]), np.array([[5, 6], [0, 1]]), np.full((1, 2, 2), 0.4))
    split = np.stack([rng.normal(0.3, 0.01, size=(2, 40)), rng.normal(0.9, 0.01, size=(2, 40))])
    b = _tempering(split, np.array([[4, 4], [3, 3]]), np.full((1, 2, 2), 0.2))
    m = isw.tempering_mixing({"one": a, "two": b})
    assert m.mixed.tolist() == [True, False] and m.fewest_trips.tolist() == [4, 0]
    assert m.rhat[0] < 1.1 < m.rhat[1] and m.P_copy == 20 and m.swap_min == pytest.approx(0.2)
    assert m.table().shape == (2, 6)


def test_switch_agrees_with_the_copy_mass_it_interpolates(states):
    sw = isw.induction_switch(states, n_grid=41, n_bins=10)
    assert sw.P_eff[0] == pytest.approx(6.0) and sw.P_eff[-1] == pytest.approx(60.0)
    assert sw.copy_mass == pytest.approx(states.copy_mass(sw.P_eff / 60))
    for i, p in enumerate(sw.P_sw):
        if np.isfinite(p):  # the crossing of the log odds: the copy mass there is 1/2
            assert np.interp(np.log(p), np.log(sw.P_eff), sw.log_odds[i]) == pytest.approx(0.0, abs=1e-9)
    assert sw.summary()["odds_top"] == pytest.approx(sw.log_odds[:, -1].mean())


def test_summaries_are_plain_numbers_of_the_fields(states):
    sw = isw.induction_switch(states, n_grid=41, n_bins=10)
    tab = sw.table()
    assert tab.loc["P_sw: copy mass 1/2", "s.e."] == pytest.approx(np.std(sw.P_sw, ddof=1) / np.sqrt(sw.P_sw.size), nan_ok=True)
    rng = np.random.default_rng(1)
    a = _tempering(rng.normal(0.3, 0.01, size=(2, 2, 30)), np.array([[5, 6], [0, 1]]), np.full((1, 2, 2), 0.4))
    s = isw.tempering_mixing({"one": a, "two": a}).summary()
    assert s["P_lo"] == 10 and s["trips_hi"] == 0 and isinstance(s["trips_lo"], int) and s["P_mix"] == 10

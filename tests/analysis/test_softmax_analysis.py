"""Tests of copylib.analysis.softmax (planted copy states, Adam from a given start)."""

import numpy as np
import pytest
import torch

import copylib as cl
from copylib.analysis import softmax as sx
from copylib.posterior.evidence import optimal_readout
from copylib.posterior.order_parameters import copy_attention, copy_weight


@pytest.fixture
def spec():
    return cl.ModelSpec(L=8, V=3, kind="softmax")


def test_planted_logits_give_copy_attention_with_minimal_norm():
    L = 8
    Delta = np.array([0.0, 1.3, -0.4])
    g = sx.planted_logits(Delta, L)
    assert g.shape == (3, L, L)
    np.testing.assert_allclose(cl.attention(g, "softmax"), copy_attention(Delta, L), atol=1e-14)
    np.testing.assert_allclose((g**2).sum((-1, -2)), (L - 1) * Delta**2, rtol=1e-12)
    np.testing.assert_allclose(g.sum(-1), 0.0, atol=1e-13)  # row means removed


def test_planted_init_uses_ridge_readout(spec):
    C = cl.nested_cooccurrence([40, 80], spec, np.random.default_rng(0))
    init = sx.planted_init([0.0, 2.0], C, spec)
    assert init["g"].shape == (2, 8, 8) and init["b"].shape == (2,) and init["W"].shape == (2, 3, 3)
    A = cl.attention(cl.attention_logits(init["g"], init["b"]), "softmax")
    np.testing.assert_allclose(init["W"], optimal_readout(A, C, spec), rtol=1e-12)
    np.testing.assert_allclose(copy_weight(A), copy_attention(np.array([0.0, 2.0]), 8)[:, 1, 0], rtol=1e-12)
    with pytest.raises(ValueError):
        sx.planted_init(1.0, C[0], spec)


def test_train_map_with_given_init_matches_its_random_start(spec):
    """Given the initial state train_map would draw, train_map(init=...) reproduces the run exactly."""
    C = np.repeat(cl.nested_cooccurrence([60], spec, np.random.default_rng(1)), 2, axis=0)
    ref = cl.train_map(C, spec, torch.Generator().manual_seed(3), init_scale=0.5, n_steps=50, n_records=5)
    gen = torch.Generator().manual_seed(3)
    g = 0.5 * torch.randn(2, 8, 8, generator=gen, dtype=torch.float64)
    b = 0.5 * torch.randn(2, generator=gen, dtype=torch.float64)
    W = 0.1 * spec.omega**0.5 * torch.randn(2, 3, 3, generator=gen, dtype=torch.float64)
    out = cl.train_map(C, spec, init={"g": g.numpy(), "b": b.numpy(), "W": W.numpy()}, n_steps=50, n_records=5)
    np.testing.assert_allclose(out.objective, ref.objective, rtol=1e-12)
    np.testing.assert_allclose(out.test_loss, ref.test_loss, rtol=1e-12)
    np.testing.assert_array_equal(out.steps, ref.steps)


def test_train_map_validates_init(spec):
    C = cl.nested_cooccurrence([30], spec, np.random.default_rng(2))
    init = sx.planted_init(1.0, C, spec)
    with pytest.raises(ValueError, match="init"):
        cl.train_map(C, spec, init={"g": init["g"], "b": init["b"]})
    with pytest.raises(ValueError, match="init"):
        cl.train_map(C, spec, init={**init, "g": init["g"][:, :4]})
    with pytest.raises(TypeError, match="generator"):
        cl.train_map(C, spec)


def test_interpolate_crossing_and_state_fraction():
    x = np.array([0.0, 1.0, 2.0, 3.0])
    assert sx.interpolate_crossing(x, [2.0, 1.0, -1.0, -3.0]) == pytest.approx(1.5)
    assert np.isnan(sx.interpolate_crossing(x, [1.0, 2.0, 3.0, 4.0]))
    assert sx.interpolate_crossing(x, [1.0, 0.0, 1.0, 2.0]) == 1.0
    np.testing.assert_allclose(sx.state_fraction(np.array([[0.0, 0.2, 0.3, 0.05]]), 0.1), [0.5])


def test_basin_mean_groups_equal_concatenated_chains():
    """Leaving out a group of chains is leaving out their concatenation; one chain per group is the default."""
    rng = np.random.default_rng(5)
    x, c = rng.normal(size=(6, 40)), rng.uniform(0, 0.3, size=(6, 40))
    groups = np.array([0, 0, 1, 1, 2, 2])
    mean, se, loo = sx.basin_mean(x, c, 0.1, 0.25, groups=groups, return_replicates=True)
    joined = lambda a: a.reshape(3, 80)  # noqa: E731 -- chains of a group end to end
    assert (mean, se) == pytest.approx(sx.basin_mean(joined(x), joined(c), 0.1, 0.25), rel=1e-13)
    inside = (c >= 0.1) & (c < 0.25)
    for g in range(3):
        keep = groups != g
        assert loo[g] == pytest.approx(x[keep][inside[keep]].mean(), rel=1e-13)
    assert sx.basin_mean(x, c, groups=np.arange(6)) == sx.basin_mean(x, c)
    with pytest.raises(ValueError, match="groups"):
        sx.basin_mean(x, c, groups=np.zeros(6, int))
    with pytest.raises(ValueError, match="groups"):
        sx.basin_mean(x, c, groups=np.arange(5))


def test_basin_mean_jackknife_is_the_standard_error_of_equal_groups():
    """For the plain mean of equally long groups the jackknife error is sd(group means) / sqrt(G), exactly."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=(8, 30)) + rng.normal(size=(8, 1))  # a group (data-set) effect
    groups = np.repeat(np.arange(4), 2)
    _, se = sx.basin_mean(x, np.zeros_like(x), groups=groups)
    group_means = x.reshape(4, 60).mean(1)
    assert se == pytest.approx(group_means.std(ddof=1) / 2, rel=1e-12)


def test_p3_from_hopping_interpolates_the_log_odds():
    # copy-basin masses 0.2 and 0.8 at P = 10 and 20: log-odds -ln 4 and +ln 4, crossing half-way
    c_by_P = [np.zeros(10), np.r_[np.ones(2), np.zeros(8)], np.r_[np.ones(8), np.zeros(2)], np.ones(10)]
    assert sx.p3_from_hopping(c_by_P, [5, 10, 20, 30], 0.5) == pytest.approx(15.0, rel=1e-12)
    # sizes where only one side is visited carry no log-odds: without two others there is no crossing
    assert np.isnan(sx.p3_from_hopping([np.zeros(4), np.ones(4)], [1, 2], 0.5))
    with pytest.raises(ValueError, match="one array per P"):
        sx.p3_from_hopping(c_by_P, [1, 2], 0.5)


def test_p3_from_shares_has_the_interpolation_bias_of_curved_log_odds():
    # log-odds (P - 15) + (P - 15)^2 / 10: the crossing is at 15, but the chord between
    # P = 10 and 20 (log-odds -2.5 and 7.5) crosses at 12.5 - the estimator's own bias,
    # which a theory's shares at the same sizes share exactly
    P = np.array([10.0, 20.0])
    log_odds = (P - 15) + (P - 15) ** 2 / 10
    shares = 1 / (1 + np.exp(-log_odds))
    assert sx.p3_from_shares(P, shares) == pytest.approx(12.5, rel=1e-12)
    assert np.isnan(sx.p3_from_shares([1.0, 2.0], [0.0, 1.0]))


def test_uniform_copy_attention_has_the_copy_weight_in_every_row():
    L = 8
    A = sx.uniform_copy_attention(0.3, L)
    np.testing.assert_allclose(np.diag(np.roll(A, 1, axis=1)), 0.3, rtol=1e-12)  # A[l, l-1], cyclic
    np.testing.assert_allclose(A.sum(1), 1.0, rtol=1e-12)
    assert copy_weight(A) == pytest.approx(0.3, rel=1e-12)
    with pytest.raises(ValueError, match="c_row"):
        sx.uniform_copy_attention(1.0, L)


def test_sample_two_starts_returns_copy_weight_and_alpha_1_of_every_draw():
    spec = cl.ModelSpec(L=6, V=3, kind="softmax")
    out, draws = sx.sample_two_starts([40, 80], spec, 2, 6, n_warmup=0, thin=2, seed=3, planted_gap=4.0)
    assert set(draws) == {40, 80}
    for c, a1, energy in draws.values():
        assert c.shape == a1.shape == energy.shape == (2, 2, 3)  # (data set, start, kept draw)
        # every row is a probability vector: 1/L <= alpha_1 / L <= 1 and c in (0, 1)
        assert np.all((c > 0) & (c < 1)) and np.all((a1 >= 1 - 1e-9) & (a1 <= spec.L + 1e-9))
        # after two steps a chain planted at a large gap still copies far more than one started uniform
        assert np.all(c[:, 1, 0] > c[:, 0, 0] + 0.2)
    assert out.accept_rate.shape == (8,)
    with pytest.raises(ValueError, match="softmax"):
        sx.sample_two_starts([40], cl.ModelSpec(L=6, V=3, kind="linear"), 1, 2, n_warmup=0, thin=1, seed=0)


def test_sample_two_starts_makes_gap_moves_only_when_asked():
    """With ``gap_step`` every chain also makes gap moves, and some are kept; without it there are
    none; a step that is not positive is an error naming ``gap_step``."""
    spec = cl.ModelSpec(L=6, V=3, kind="softmax")
    out, _ = sx.sample_two_starts([40], spec, 2, 200, n_warmup=0, thin=10, seed=3, gap_step=0.8)
    assert out.line_accept_rate.shape == (4,) and (out.line_accept_rate > 0).all()
    assert sx.sample_two_starts([40], spec, 1, 2, n_warmup=0, thin=1, seed=3)[0].line_accept_rate is None
    with pytest.raises(ValueError, match="gap_step"):
        sx.sample_two_starts([40], spec, 1, 2, n_warmup=0, thin=1, seed=3, gap_step=-0.5)


def test_weak_double_minimum_at_L24_has_no_first_order_point():
    """The L = 24 double minimum (few Sobol draws here): windows, depth and masses are consistent."""
    d = sx.weak_double_minimum(24, 4, seeds=(21, 22), n_draws=1024)
    assert d.L == 24 and d.V == 4 and d.seeds == (21, 22) and len(d.rows) == len(d.cumulants) == 2
    assert not d.has_P3
    two = [r for r in d.rows if r.two_minima]
    assert two, "at L = 24 at least one Sobol set finds two minima"
    assert d.P_lower == min(r.P_lower for r in two) and d.P_upper == max(r.P_upper for r in two)
    assert 0 < d.width <= d.P_upper - d.P_lower
    assert d.depth >= max(r.max_depth for r in d.rows) and d.depth < 0.05
    assert d.delta_F_max < 0  # the copy side holds more mass inside the windows


@pytest.fixture(scope="module")
def spec32():
    return cl.ModelSpec(L=32, V=4, kind="softmax")


def test_spinodal_expansion_has_the_square_root_laws_of_a_fold(spec32):
    from copylib.theory import softmax as st
    sp = st.spinodals(spec32)
    ex = sx.spinodal_expansion(sp, spec32, rel_P=(1e-4, 1e-3), h=1e-4, dP=(5.0, 1.25))
    np.testing.assert_allclose([ex.dS, ex.d2S], 0.0, atol=1e-6)  # a fold: S' = S'' = 0
    np.testing.assert_allclose(ex.exponents, [1.5, 0.5], atol=0.01)
    np.testing.assert_allclose(ex.depth[1], ex.d3S * ex.width[1] ** 3 / 12, rtol=0.01)
    assert ex.dS_dP < 0 < ex.d3S
    # the depth grows like delta^(3/2): 4^(3/2) = 8 between P_lower + 1.25 and P_lower + 5, to O(delta / P_lower)
    np.testing.assert_allclose(ex.depth_far / ex.depth_near, 8.0, rtol=0.05)
    third = (st.reduced_action_derivatives(sp.Delta_lower + 1e-3, sp.P_lower, spec32)[2]
             - st.reduced_action_derivatives(sp.Delta_lower - 1e-3, sp.P_lower, spec32)[2]) / 2e-3
    np.testing.assert_allclose(ex.d3S, third, rtol=1e-4)  # the step h does not matter at this precision


def test_planted_starts_end_in_the_minimum_of_their_side(spec32):
    from copylib.theory import softmax as st
    sp = st.spinodals(spec32, "map")
    P = 0.5 * (sp.P_lower + sp.P_upper)
    C = cl.nested_cooccurrence([int(P)], spec32, np.random.default_rng(0))
    ps = sx.planted_starts(C, P, spec32, fracs=(-0.5, 0.5), n_steps=300)
    lo, hi = ps.Delta_min[0], ps.Delta_min[-1]
    assert lo < ps.Delta_planted[0] < ps.Delta_top < ps.Delta_planted[1] < hi
    np.testing.assert_allclose(ps.Delta_planted, [ps.Delta_top - 0.5 * (ps.Delta_top - lo),
                                                  ps.Delta_top + 0.5 * (hi - ps.Delta_top)])
    c_lo, c_hi = st.copy_weight_of_gap(np.array([lo, hi]), spec32, version="map")
    np.testing.assert_allclose(ps.c_predicted, [c_lo, c_hi])
    np.testing.assert_allclose(ps.c_end[0], ps.c_predicted, atol=0.1 * (c_hi - c_lo))
    assert list(ps.frame().index) == ["planted Delta", "predicted c", "data set 0"]
    with pytest.raises(ValueError, match="P"):
        sx.planted_starts(C, 50.0, spec32)  # a single minimum

"""Tests of copylib.theory.softmax_marginal with the analysis of its basins: basin_mean of
copylib.analysis.softmax. The themes of the marginal are tested beside their modules
(test_softmax_cumulants, test_softmax_marginal_density, _branches, _scan)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from copylib.analysis import softmax as sx


def test_basin_mean():
    c = np.array([[0.0, 0.2, 0.3, 0.05], [0.01, 0.02, 0.4, 0.5], [0.3, 0.3, 0.3, 0.01]])
    x = 2 * c
    mean, err = sx.basin_mean(x, c, 0.1)
    sel = c >= 0.1
    assert mean == pytest.approx(x[sel].mean())
    loo = [np.concatenate([x[k][sel[k]] for k in range(3) if k != i]).mean() for i in range(3)]
    assert err == pytest.approx(math.sqrt(2 / 3 * ((np.array(loo) - np.mean(loo)) ** 2).sum()))
    m_all, _ = sx.basin_mean(x, c)
    assert m_all == pytest.approx(x.mean())
    with pytest.raises(ValueError, match="no draw"):
        sx.basin_mean(x, c, 0.9, 1.0)
    with pytest.raises(ValueError, match="lo"):
        sx.basin_mean(x, c, 0.5, 0.1)
    one_chain = np.array([[0.0, 0.2], [0.0, 0.0]])
    assert math.isnan(sx.basin_mean(one_chain, one_chain, 0.1)[1])

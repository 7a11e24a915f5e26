"""Tests of copylib.analysis.causal: the bimodality coefficient."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.analysis.causal import bimodality_coefficient


def test_bimodality_coefficient_reference_values():
    rng = np.random.default_rng(0)
    n = 400_000
    # Gaussian 1/3 and uniform 5/9 up to sampling error (s.e. of skewness and kurtosis ~ sqrt(6/n), sqrt(24/n))
    assert bimodality_coefficient(rng.normal(size=n)) == pytest.approx(1 / 3, abs=0.01)
    assert bimodality_coefficient(rng.uniform(size=n)) == pytest.approx(5 / 9, abs=0.01)
    # two equal point masses: skewness 0, excess kurtosis -2, coefficient 1 exactly
    assert bimodality_coefficient(np.repeat([0.0, 1.0], 50)) == pytest.approx(1.0, rel=1e-12)
    x = rng.normal(size=(3, 50))
    np.testing.assert_allclose(bimodality_coefficient(x, axis=1), [bimodality_coefficient(r) for r in x], rtol=1e-14)


def test_bimodality_coefficient_rejects_bad_input():
    with pytest.raises(ValueError, match="x"):
        bimodality_coefficient([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="axis"):
        bimodality_coefficient(np.ones((5, 5)), axis=2)

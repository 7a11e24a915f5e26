"""Unit tests of copylib.analysis.transitions.steepest_rise: the crossover of a smooth rise on a grid."""

from __future__ import annotations

import numpy as np
import pytest

from copylib.analysis.transitions import steepest_rise


def test_steepest_rise_finds_the_centre_of_a_logistic_rise_in_ln_P():
    P = np.geomspace(10, 1e4, 301)
    centres = np.array([80.0, 300.0, 2500.0])
    y = 1 / (1 + (centres[None, :] / P[:, None]) ** 3)  # logistic in ln P, steepest at its centre
    at = steepest_rise(P, y)
    assert at.shape == (3,)
    step = P[1] / P[0]
    assert (np.abs(np.log(at / centres)) <= np.log(step)).all()  # resolved to the grid
    assert steepest_rise(P, y[:, 1]) == at[1]
    # a fall is not a rise: the steepest increase of a decreasing curve is where it falls least
    assert steepest_rise(P, -y[:, 1]) in (P[0], P[-1])


def test_steepest_rise_rejects_bad_grids():
    with pytest.raises(ValueError, match="P"):
        steepest_rise([1.0, 3.0, 2.0], [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="P"):
        steepest_rise([0.0, 1.0, 2.0], [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="y"):
        steepest_rise([1.0, 2.0, 3.0], [0.0, 1.0])

"""Property tests: copylib.theory.softmax_marginal, the public names of the plug-in marginal:
invalid arguments raise ValueError/TypeError naming the parameter. The themes are tested beside
their modules (test_softmax_cumulants_properties, test_softmax_marginal_*_properties)."""

from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

import copylib as cl
from copylib.theory import softmax_marginal as se

from props_helpers import (
    bad_ints,
    bad_positive,
    bad_spec,
    budget,
    covers,
    not_bool,
    raises_naming,
    reachable_copy_weights,
    with_nonfinite,
)

_SMALL_EXACT = cl.ModelSpec(L=4, V=3, kind="softmax")
_CUM = se.row_cumulants(_SMALL_EXACT, np.random.default_rng(0), n_draws=16, lam1=np.linspace(-12.0, 4.0, 5),
                        lam2=np.linspace(-6.0, 12.0, 7), t_step=0.25, t_range=(-20.0, 14.0))


_C = reachable_copy_weights(_CUM, 20)
_MARG = se.plugin_marginal(5.0, _SMALL_EXACT, _CUM, c_grid=_C, check_coverage=False)


def _exact_call(which, name, data):
    calls = {
        "row_cumulants": {"spec": _SMALL_EXACT, "rng": np.random.default_rng(0), "n_draws": 16,
                          "lam1": np.linspace(-12.0, 4.0, 5), "lam2": np.linspace(-6.0, 12.0, 7),
                          "t_step": 0.25, "t_range": (-20.0, 14.0)},
        "plugin_marginal": {"P": 5.0, "spec": _SMALL_EXACT, "cumulants": _CUM, "c_grid": _C,
                                 "correction": False, "check_coverage": False},
        "marginal_branches": {"marginal": _MARG, "tol": 1e-6, "max_nats": 30.0},
        "marginal_transition": {"spec": _SMALL_EXACT, "cumulants": _CUM, "P_range": (1.0, 10.0), "n_scan": 5,
                             "xtol": 1.0, "correction": False},
        "marginal_scan": {"P_values": [5.0, 6.0], "spec": _SMALL_EXACT, "cumulants": _CUM, "c_grid": _C,
                          "correction": False, "check_coverage": False, "tol": 1e-6, "max_nats": 30.0},
        "finite_size_row": {"spec": _SMALL_EXACT, "cumulants": _CUM, "P_range": (1.0, 10.0), "n_coarse": 11,
                            "rel_step": 0.05, "xtol": 1.0, "correction": False},
        "default_tilts": {"L": 8},
        "default_c_grid": {"L": 8},
    }
    args = dict(calls[which])
    if name not in args:
        return None
    if name == "spec":
        wrong = [cl.ModelSpec(L=4, V=3, kind="linear"), cl.ModelSpec(L=4, V=3, kind="softmax", cyclic=False)]
        if which == "row_cumulants":
            wrong.append(cl.ModelSpec(L=2, V=3, kind="softmax"))  # L >= 3 needed
        args[name] = data.draw(st.one_of(bad_spec(), st.sampled_from(wrong)))
    elif name == "rng":
        args[name] = data.draw(st.sampled_from([None, 0, torch.Generator()]))
    elif name == "n_draws":
        args[name] = data.draw(st.one_of(bad_ints(16), st.sampled_from([24, 100])))
    elif name == "n_scan":
        args[name] = data.draw(bad_ints(5))
    elif name == "n_coarse":
        args[name] = data.draw(bad_ints(11))
    elif name == "L":
        args[name] = data.draw(bad_ints(3))
    elif name == "rel_step":
        args[name] = data.draw(st.one_of(bad_positive(), st.sampled_from([0.2, 5.0])))
    elif name == "P_values":
        args[name] = data.draw(st.sampled_from([[], [0.0], [-1.0, 2.0], [math.nan], [math.inf], "x", [[1.0]]]))
    elif name in ("lam1", "lam2", "c_grid"):
        good = args[name]
        args[name] = data.draw(st.sampled_from([good[::-1], good[:2], np.zeros(len(good)), "x"])
                               | st.just(with_nonfinite(good, data)))
        if name == "c_grid" and data.draw(st.booleans()):
            args[name] = np.linspace(0.5, 1.5, 10)
    elif name in ("t_step", "xtol", "max_nats"):
        args[name] = data.draw(bad_positive())
        if args[name] is None and which == "finite_size_row":
            args[name] = -1.0  # None is finite_size_row's documented default
    elif name == "tol":
        args[name] = data.draw(st.sampled_from([-1.0, math.nan, math.inf, "1", None]))
    elif name in ("t_range", "P_range"):
        args[name] = data.draw(st.sampled_from([(10.0, 1.0), (1.0, math.inf), 5.0, "ab", (1.0,)]
                                               + ([(0.0, 5.0)] if name == "P_range" else [])))
    elif name in ("correction", "check_coverage"):
        args[name] = data.draw(not_bool())
    elif name == "P":
        args[name] = data.draw(st.sampled_from([0.0, -1.0, math.nan, math.inf, True, "10", np.ones(2)]))
    elif name == "cumulants":
        args[name] = data.draw(st.sampled_from([None, "cum", se.row_cumulants(
            cl.ModelSpec(L=5, V=3, kind="softmax"), np.random.default_rng(0), n_draws=16,
            lam1=np.linspace(-12.0, 4.0, 5), lam2=np.linspace(-6.0, 12.0, 7), t_step=0.25, t_range=(-20.0, 14.0))]))
    elif name == "marginal":
        args[name] = data.draw(st.sampled_from([None, "m", _CUM]))
    return args


_EXACT = ["row_cumulants", "plugin_marginal", "marginal_branches", "marginal_transition", "marginal_scan",
          "finite_size_row", "default_tilts", "default_c_grid"]


_EXACT_PARAMS = ["spec", "rng", "n_draws", "lam1", "lam2", "t_step", "t_range", "P", "cumulants", "c_grid",
                 "correction", "check_coverage", "marginal", "tol", "max_nats", "P_range", "n_scan", "xtol",
                 "P_values", "n_coarse", "rel_step", "L"]


@covers(*(getattr(se, f) for f in _EXACT))
@budget(150)
@given(data=st.data())
def test_softmax_exact_invalid(data):
    which = data.draw(st.sampled_from(_EXACT))
    name = data.draw(st.sampled_from(_EXACT_PARAMS))
    args = _exact_call(which, name, data)
    if args is None:
        return
    with raises_naming(name):
        getattr(se, which)(**args)

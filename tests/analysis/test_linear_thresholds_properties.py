"""Property tests of copylib.analysis.linear_thresholds added with the chapter's folded cells (the plug-in
posterior across P1, the posterior's switch near P2).

Random valid arguments give output of the documented type, shape and range; each kind of invalid
argument raises ValueError or TypeError naming the parameter.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from copylib.analysis import linear_thresholds as lxt

from props_helpers import bad_ints, bad_positive, budget, covers, raises_naming

GRID = dict(n_m=21, n_q=11, n_row=8, n_rest=8)


@covers(lxt.posterior_onset_scan, lxt.OnsetScan, lxt.OnsetRow)
@budget(3)
@given(L=st.integers(4, 6), V=st.integers(2, 3), n_f=st.integers(2, 5))
def test_posterior_onset_scan_valid(L, V, n_f):
    f = np.geomspace(0.25, 4, n_f)
    scan = lxt.posterior_onset_scan([(L, V)], f, **GRID)
    r = scan[L, V]
    assert r.m2.shape == r.binder.shape == r.share.shape == (n_f,)
    assert np.all(r.m2 > 0) and np.all(r.binder <= 2 / 3 + 1e-9)  # E m^4 >= (E m^2)^2
    assert r.K == r.m2[-1] / r.m2[0] and r.rise == r.m2[scan.i_one] / r.m2[scan.i_half] - 1
    assert abs(np.log(f[scan.i_one])) <= abs(np.log(f / 1.0)).min() + 1e-12
    assert scan.table().shape == (1, 10)


@covers(lxt.posterior_onset_scan)
@budget(20)
@given(data=st.data())
def test_posterior_onset_scan_invalid(data):
    args = {"sizes": [(4, 2)], "f": [0.5, 1.0, 2.0]}
    name = data.draw(st.sampled_from(["sizes", "f", "L", "V"]))
    if name in ("L", "V"):
        bad = data.draw(bad_ints(4 if name == "L" else 2).filter(lambda x: isinstance(x, int) and not isinstance(x, bool)))
        args["sizes"] = [(bad, 2)] if name == "L" else [(4, bad)]
    else:
        args[name] = data.draw({"sizes": st.sampled_from([[], [(4, 2), (4, 2)], [(4,)]]),
                                "f": st.sampled_from([[1.0], [2.0, 1.0], [0.0, 1.0], [1.0, np.nan]])}[name])
    with raises_naming(name):
        lxt.posterior_onset_scan(**args, **GRID)


@covers(lxt.posterior_switch_scan, lxt.SwitchScan)
@budget(2)
@given(L=st.integers(6, 8))
def test_posterior_switch_scan_valid(L):
    scan = lxt.posterior_switch_scan([L], 2, n_bisect=1, n_m={L: 41})
    sw = scan[L]
    assert scan.P2[L] > 0 and 0.9 * scan.P2[L] <= sw.P_lo < sw.P_hi <= 1.05 * scan.P2[L] * (1 + 1e-12)
    assert scan.L_hi in (-1, L) and scan.L_lo == -1
    assert list(scan.table().index) == [L]


@covers(lxt.posterior_switch_scan)
@budget(20)
@given(data=st.data())
def test_posterior_switch_scan_invalid(data):
    args = {"L_values": [8], "V": 2, "n_bisect": 1, "span": (0.9, 1.05)}
    name = data.draw(st.sampled_from(sorted(args)))
    args[name] = data.draw({"L_values": st.sampled_from([[], [8, 8], [1]]), "V": bad_ints(2),
                            "n_bisect": bad_ints(1),
                            "span": st.one_of(st.sampled_from([(1.1, 1.0)]), bad_positive().map(lambda x: (x, 1.0)))}[name])
    with raises_naming(name):
        lxt.posterior_switch_scan(**args)


@covers(lxt.copy_share_curves, lxt.CopyShareCurves)
@budget(2)
@given(L=st.integers(4, 6), n=st.integers(1, 3))
def test_copy_share_curves_valid(L, n):
    from copylib import ModelSpec
    from copylib.theory import linear as lt

    sp = ModelSpec(L=L, V=2, kind="linear")
    P2 = {v: {L: lt.p2_numerical(sp, v, rtol=1e-3)} for v in ("map", "fluct")}
    rel = np.geomspace(0.5, 2.0, n + 1)
    r = lxt.copy_share_curves(P2, 2, rel, rel[:n], L_minimum=(L,), L_posterior=(L,))
    assert set(r.minimum) == {("map", L), ("fluct", L)} and set(r.posterior) == {L}
    for share in r.minimum.values():
        assert share.shape == rel.shape and np.all((share >= -1e-12) & (share <= 1 + 1e-12))
        assert np.all(np.diff(share) >= -1e-9)  # more data, more copying
    assert r.posterior[L].shape == (n,) and np.all(np.isfinite(r.posterior[L]))


@covers(lxt.copy_share_curves)
@budget(20)
@given(data=st.data())
def test_copy_share_curves_invalid(data):
    args = {"P2": {"map": {6: 100.0}}, "V": 2, "rel": [1.0, 2.0], "rel_post": [1.0], "L_minimum": (6,),
            "L_posterior": (6,)}
    name = data.draw(st.sampled_from(sorted(args)))
    args[name] = data.draw({"P2": st.sampled_from([{}, {"map": 1.0}, {"map": {8: 1.0}}, []]), "V": bad_ints(2),
                            "rel": st.sampled_from([[], [2.0, 1.0], [0.0, 1.0]]),
                            "rel_post": st.sampled_from([[], [np.nan]]),
                            "L_minimum": st.sampled_from([(3,), (2.5,)]), "L_posterior": st.sampled_from([(1,), ("6",)])}[name])
    with raises_naming(name):
        lxt.copy_share_curves(**args)

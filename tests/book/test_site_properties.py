"""Property tests for copylib.cache, copylib.checks and copylib.explorers, and for the site's
Sphinx extension _ext/page_scripts.py."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from props_helpers import budget, covers, raises_naming

from copylib import cache, checks, explorers, landscape_explorers

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
params = st.dictionaries(st.text("abcdefgh", min_size=1, max_size=4),
                         st.one_of(st.integers(-10**6, 10**6), finite, st.text(max_size=5), st.booleans()),
                         max_size=5)


@covers(cache._canonical_json, cache._cache_key, cache.source_digest)
@budget(40)
@given(params, st.data())
def test_cache_key_is_canonical_and_changes_with_any_parameter(p, data):
    reordered = dict(reversed(list(p.items())))
    assert cache._canonical_json(p) == cache._canonical_json(reordered)
    key = cache._cache_key("exp", p, source="s")
    assert len(key) == 64 and key == cache._cache_key("exp", reordered, source="s")
    assert key != cache._cache_key("exp", p, source="t")           # another copylib source
    assert key != cache._cache_key("exp", {**p, "extra!": 1}, source="s")
    assert len(cache.source_digest()) == 64


@covers(cache._canonical_json, cache._cache_key, cache.cached)
@budget(20)
@given(st.sampled_from([np.nan, np.inf, object(), np.random.default_rng(0)]))
def test_unkeyable_parameters_are_refused(bad):
    with raises_naming("key_params"):
        cache._canonical_json({"x": bad})
    with pytest.raises(ValueError, match="name"):
        cache._cache_key("bad name", {})


@covers(cache.cached, cache.cache_dir, cache._cache_enabled)
@budget(15)
@given(st.lists(finite, min_size=1, max_size=6), st.integers(0, 3))
def test_cached_round_trip_and_switches(values, seed):
    calls = []

    def fn():
        calls.append(1)
        return {"x": np.asarray(values), "seed": seed}

    with tempfile.TemporaryDirectory() as d:
        first = cache.cached(fn, {"seed": seed}, name="roundtrip", directory=d)
        again = cache.cached(fn, {"seed": seed}, name="roundtrip", directory=d)
        assert len(calls) == 1                               # second call read the file
        np.testing.assert_array_equal(first["x"], again["x"])
        cache.cached(fn, {"seed": seed}, name="roundtrip", directory=d, enabled=False)
        assert len(calls) == 2                               # disabled: always computed
    old = os.environ.get("COPYHEAD_CACHE")
    try:
        os.environ["COPYHEAD_CACHE"] = "off"
        assert not cache._cache_enabled()
    finally:
        os.environ.pop("COPYHEAD_CACHE") if old is None else os.environ.__setitem__("COPYHEAD_CACHE", old)
    assert isinstance(cache.cache_dir(), Path)


def _book(root: Path) -> None:
    (root / "_toc.yml").write_text("root: book/intro\n")
    (root / "book").mkdir()
    (root / "book" / "ch.md").write_text("checks = cl.Checks('ch')\n")


@covers(checks.Checks, checks.CheckRecord, checks.load_records, checks.report_table,
        checks._book_root, checks.records_dir, checks._file_digest, checks._copylib_digest,
        checks.chapters_with_checks)
@budget(40)
@given(finite, finite, st.floats(0, 10, allow_nan=False))
def test_checks_pass_exactly_when_the_comparison_holds(x, y, tol):
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        _book(root)
        c = checks.Checks("ch", source=root / "book" / "ch.md", directory=root / "records")
        for method, args, holds in [
            (c.below, (x, y), x < y),
            (c.above, (x, y), x > y),
            (c.close, (x, y), abs(x - y) <= tol + 1e-300),
        ]:
            kwargs = {"atol": tol + 1e-300} if method == c.close else {}
            if holds:
                method("claim", *args, **kwargs)
            else:
                with pytest.raises(AssertionError, match="claim"):
                    method("claim", *args, **kwargs)
            assert c.records[-1].passed == holds
        assert checks._book_root(root / "book") == root.resolve()
        assert checks.chapters_with_checks(root) == ["ch"]
        recs = checks.load_records(["ch"], directory=root / "records", root=root)
        assert len(recs) == 3 and checks.report_table(recs).count("<tr>") == 4
        assert len(checks._file_digest(root / "book" / "ch.md")) == 64 == len(checks._copylib_digest())
        assert isinstance(checks.records_dir(root), Path)


@covers(checks.Checks)
@budget(20)
@given(st.sampled_from([np.nan, np.inf, -np.inf]))
def test_checks_refuse_non_finite_values(bad):
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        _book(root)
        c = checks.Checks("ch", source=root / "book" / "ch.md", directory=root / "records")
        with raises_naming("measured"):
            c.below("claim", bad, 1.0)
        with raises_naming("expected"):
            c.close("claim", 1.0, bad, atol=1.0)


@covers(explorers.landscape_figure, explorers.linear_landscape_figure, explorers.softmax_landscape_figure,
        explorers.landscape_explorer)
@budget(30)
@given(st.sampled_from(["P", "L", "V", "kind"]),
       st.sampled_from([0, -1.0, np.nan, 1, "x"]))
def test_explorer_bad_input_names_the_parameter(name, bad):
    args = {"P": 100.0, "L": 8, "V": 4, "kind": "softmax"}
    args[name] = bad
    try:  # the same checks as the figures' (some draws are valid, e.g. P = 1)
        landscape_explorers._check_sizes(args["P"], args["L"], args["V"])
        valid = args["kind"] in ("linear", "softmax")
    except (ValueError, TypeError):
        valid = False
    if valid:
        return
    with raises_naming(name):
        explorers.landscape_figure(args["P"], args["L"], args["V"], args["kind"])
    with raises_naming("P_values" if name == "P" else name):
        explorers.landscape_explorer([args["P"]], args["L"], args["V"], args["kind"])


@covers(explorers.attention_figure)
@budget(10)
@given(st.integers(2, 8), st.integers(0, 2**16))
def test_attention_figure_of_any_softmax_matrix(L, seed):
    logits = np.random.default_rng(seed).normal(size=(L, L))
    A = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    fig = explorers.attention_figure(A, "random")
    assert "copy weight" in fig.axes[0].get_title()
    plt.close("all")
    with pytest.raises(ValueError, match="A must"):
        explorers.attention_figure(A[:, :-1])


@covers(landscape_explorers._softmax_branches)
@budget(5)
@given(st.lists(st.floats(10, 3000), min_size=1, max_size=4))
def test_softmax_branches_have_at_least_one_global_minimum_per_P(P_list):
    import copylib as cl

    Ps, Ds, glob = landscape_explorers._softmax_branches(P_list, cl.ModelSpec(L=16, V=4, kind="softmax"))
    assert Ps.shape == Ds.shape == glob.shape and np.all(np.isfinite(Ds)) and np.all(Ds >= 0)
    assert glob.sum() == len(P_list)


class _Sweep:
    def __init__(self, P, A, test_loss):
        self.P, self.A, self.test_loss = P, A, test_loss


@covers(explorers.training_figure, explorers.training_explorer)
@budget(5)
@given(st.integers(2, 5), st.lists(st.floats(1.0, 1e4), min_size=1, max_size=3, unique=True), st.integers(0, 2**16))
def test_training_explorer_has_a_frame_per_kind_and_P(L, P_list, seed):
    import ipywidgets as w

    rng = np.random.default_rng(seed)
    A = rng.dirichlet(np.ones(L), size=(len(P_list), L))
    sweeps = {k: _Sweep(np.array(P_list), A, rng.uniform(0, 1, len(P_list))) for k in ("linear", "softmax")}
    box = explorers.training_explorer(sweeps)

    def walk(x):
        yield x
        for c in getattr(x, "children", ()):
            yield from walk(c)
    assert sum(isinstance(x, w.Image) for x in walk(box)) == 2 * len(P_list)
    with raises_naming("P"):
        explorers.training_figure(sweeps, "linear", max(P_list) * 2)
    plt.close("all")


@covers(explorers.marginal_figure, explorers.marginal_explorer)
@budget(3)
@given(st.floats(450.0, 750.0))
def test_marginal_explorer_at_any_P(P):  # the range where L = 32's tilt grid covers the posterior
    import copylib as cl
    from copylib.theory import softmax_marginal as sm

    spec = cl.ModelSpec(L=32, V=4, kind="softmax")
    cum = _cumulants(spec)
    box = explorers.marginal_explorer([P], spec, cum, [0.9 * P, P, 1.1 * P])
    assert box.children[1]._dom_classes == ("copyhead-live-only",)
    with raises_naming("P_line"):
        explorers.marginal_figure(sm.plugin_marginal(P, spec, cum), [1.0], [0.1, 0.2])
    plt.close("all")


_CUM = {}


def _cumulants(spec):
    from copylib.theory import softmax_marginal as sm

    if spec not in _CUM:
        _CUM[spec] = sm.row_cumulants(spec, np.random.default_rng(0), n_draws=1024)
    return _CUM[spec]


@covers(explorers.threshold_figure, explorers.threshold_explorer)
@budget(3)
@given(st.sampled_from([(8, 4), (8, 6), (12, 4), (12, 6)]))
def test_threshold_explorer_marks_any_pair(pair):
    from copylib.analysis.scaling import critical_sample_sizes

    table = critical_sample_sizes([8, 12], [4, 6], ["P1_mean_field", "P2_mean_field", "P2_fluct", "P3_mean_field"])
    fig = explorers.threshold_figure(table, *pair)
    assert f"V = {pair[1]}" in fig.axes[0].get_title()
    explorers.threshold_explorer(table, default=pair)
    with raises_naming("L"):
        explorers.threshold_figure(table, 1, pair[1])
    plt.close("all")


# ---- The site's Sphinx extension _ext/page_scripts.py: every script tag of a page once ----

def _page_scripts():
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "_ext" / "page_scripts.py"
    spec = importlib.util.spec_from_file_location("page_scripts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_scripts = st.builds(
    lambda name, priority, body: (name, priority, body),
    st.sampled_from([None, "", "a.js", "b.js"]), st.sampled_from([200, 500, 800]),
    st.sampled_from([None, "const A = 1", "var b = 2"]))


@budget(40)
@given(st.lists(_scripts, max_size=12))
def test_unique_scripts_keeps_the_first_of_every_script_in_order(specs):
    from sphinx.builders.html._assets import _JavaScript

    page_scripts = _page_scripts()
    scripts = [_JavaScript(name, priority=priority, **({"body": body} if body else {}))
               for name, priority, body in specs]
    out = page_scripts.unique_scripts(scripts)
    keys = [page_scripts.script_key(s) for s in out]
    assert len(keys) == len(set(keys))                                # no script twice
    assert {page_scripts.script_key(s) for s in scripts} == set(keys)  # none lost
    positions = [next(i for i, s in enumerate(scripts) if s is kept) for kept in out]
    assert positions == sorted(positions)                              # first of each, order kept
    # Sphinx 7.4's duplicate: an inline script under the names None and "" is one script.
    inline = [_JavaScript(None, body="const THEBE_JS_URL = 1"), _JavaScript("", body="const THEBE_JS_URL = 1")]
    assert page_scripts.unique_scripts(inline + scripts[:1]) == inline[:1] + [
        s for s in scripts[:1] if page_scripts.script_key(s) != page_scripts.script_key(inline[0])]

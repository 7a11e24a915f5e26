"""Tests of copylib.cache: keys, round trips, damaged files, pickle, concurrent writers, wrappers."""

from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import pickle
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import copylib
from copylib import ModelSpec, cache, nested_cooccurrence, sample_collapsed_posterior, train_map
from copylib.cache import _cache_enabled, _cache_key, _canonical_json, cache_dir, cached, source_digest

PARAMS = {"P": [10, 100], "seed": 3, "scale": 0.5, "spec": ModelSpec(L=4, V=2), "x": np.arange(6.0).reshape(2, 3)}


class Counter:
    """A deterministic experiment that counts how often it really runs."""

    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return {"a": np.linspace(0, 1, 7), "n": 5, "flag": True, "m": np.eye(3, dtype=np.float32)}


@pytest.fixture(autouse=True)
def _cache_on(monkeypatch):
    monkeypatch.delenv("COPYHEAD_CACHE", raising=False)
    monkeypatch.delenv("COPYHEAD_CACHE_DIR", raising=False)


def _files(directory: Path, suffix: str) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name.endswith(suffix))


# --------------------------------------------------------------------------- round trip and keys


def test_round_trip_returns_the_same_arrays_and_runs_once(tmp_path):
    fn = Counter()
    first = cached(fn, PARAMS, name="demo", directory=tmp_path)
    second = cached(fn, PARAMS, name="demo", directory=tmp_path)
    assert fn.calls == 1
    expected = Counter()()
    assert set(second) == set(expected)
    for k, v in expected.items():
        np.testing.assert_array_equal(second[k], v)
        assert second[k].dtype == np.asarray(v).dtype and second[k].shape == np.asarray(v).shape
        np.testing.assert_array_equal(first[k], second[k])
    assert len(_files(tmp_path, ".json")) == 1 and len(_files(tmp_path, ".npz")) == 1
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    meta = json.loads(_files(tmp_path, ".json")[0].read_text())
    assert meta["payload_sha256"] == hashlib.sha256(_files(tmp_path, ".npz")[0].read_bytes()).hexdigest()


def test_key_changes_with_every_parameter_and_is_canonical():
    base = _cache_key("demo", PARAMS)
    assert _cache_key("demo", dict(reversed(list(PARAMS.items())))) == base  # order of keys is irrelevant
    variants = [
        dict(PARAMS, seed=4),
        dict(PARAMS, scale=0.5000000000000001),  # floats are keyed exactly
        dict(PARAMS, scale=1),
        dict(PARAMS, P=[10, 101]),
        dict(PARAMS, spec=ModelSpec(L=4, V=2, kind="linear")),
        dict(PARAMS, x=np.arange(6.0).reshape(3, 2)),  # same bytes, other shape
        dict(PARAMS, x=np.arange(6, dtype=np.float32).reshape(2, 3)),  # other dtype
        dict(PARAMS, x=np.arange(6.0).reshape(2, 3) + 1e-300),
        dict(PARAMS, extra=None),
    ]
    keys = [_cache_key("demo", v) for v in variants] + [_cache_key("other", PARAMS)]
    assert base not in keys and len(set(keys)) == len(keys)
    assert _canonical_json({"t": torch.arange(3.0, dtype=torch.float64)}) == _canonical_json({"t": np.arange(3.0)})
    assert _canonical_json({"t": np.float64(2.5)}) == _canonical_json({"t": 2.5})
    assert _canonical_json({"a": np.asarray(2.5)}) != _canonical_json({"a": np.asarray([2.5])})


def test_key_changes_when_copylib_source_changes(tmp_path):
    copy = tmp_path / "copylib"
    shutil.copytree(Path(copylib.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = source_digest(copy)
    assert before == source_digest()  # the digest is of the file contents, not of their location
    with open(copy / "training.py", "a") as f:
        f.write("\n# a change\n")
    cache._digest_of.cache_clear()
    after = source_digest(copy)
    assert after != before
    assert _cache_key("demo", PARAMS, source=after) != _cache_key("demo", PARAMS, source=before)


def test_entry_of_another_source_is_not_used(tmp_path, monkeypatch):
    fn = Counter()
    cached(fn, PARAMS, name="demo", directory=tmp_path)
    monkeypatch.setattr(cache, "source_digest", lambda package_dir=None: "0" * 64)
    cached(fn, PARAMS, name="demo", directory=tmp_path)
    assert fn.calls == 2


@pytest.mark.parametrize("bad, match", [
    ({"rng": np.random.default_rng(0)}, r"key_params\['rng'\] is a random generator"),
    ({"gen": torch.Generator()}, r"key_params\['gen'\] is a random generator"),
    ({"x": float("nan")}, r"key_params\['x'\] must be finite"),
    ({"x": [1.0, float("inf")]}, r"key_params\['x'\]\[1\] must be finite"),
    ({"o": np.array([{"a": 1}], dtype=object)}, r"key_params\['o'\] is an object array"),
    ({"f": print}, r"key_params\['f'\] of type"),
    ({"d": {1: 2}}, r"key_params\['d'\] must have string keys"),
])
def test_unkeyable_parameters_raise_value_error_naming_them(tmp_path, bad, match):
    with pytest.raises(ValueError, match=match):
        cached(Counter(), bad, name="demo", directory=tmp_path)
    with pytest.raises(ValueError, match=match):  # also when the cache is off: the call is wrong either way
        cached(Counter(), bad, name="demo", directory=tmp_path, enabled=False)


def test_bad_name_and_bad_results_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="name"):
        cached(Counter(), PARAMS, name="../escape", directory=tmp_path)
    with pytest.raises(ValueError, match="dict of arrays"):
        cached(lambda: [1, 2], PARAMS, name="demo", directory=tmp_path)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- damaged files


def _damage_truncate(json_path, npz_path):
    data = npz_path.read_bytes()
    npz_path.write_bytes(data[: len(data) // 2])


def _damage_garbage(json_path, npz_path):
    npz_path.write_bytes(np.random.default_rng(0).bytes(npz_path.stat().st_size))


def _damage_checksum(json_path, npz_path):
    meta = json.loads(json_path.read_text())
    meta["payload_sha256"] = "0" * 64
    json_path.write_text(json.dumps(meta))


def _damage_valid_zip_other_arrays(json_path, npz_path):
    """A well-formed payload with the right checksum in the metadata, but other arrays."""
    buf = io.BytesIO()
    np.savez(buf, a=np.zeros(7))
    npz_path.write_bytes(buf.getvalue())
    meta = json.loads(json_path.read_text())
    meta["payload_sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
    json_path.write_text(json.dumps(meta))


def _damage_json_garbage(json_path, npz_path):
    json_path.write_text('{"format": 1, "key": ')


def _damage_json_other_key(json_path, npz_path):
    meta = json.loads(json_path.read_text())
    meta["key"] = "f" * 64
    json_path.write_text(json.dumps(meta))


def _damage_missing_payload(json_path, npz_path):
    npz_path.unlink()


@pytest.mark.parametrize("damage", [_damage_truncate, _damage_garbage, _damage_checksum, _damage_valid_zip_other_arrays,
                                    _damage_json_garbage, _damage_json_other_key, _damage_missing_payload])
def test_damaged_entry_is_recomputed_not_trusted(tmp_path, damage):
    fn = Counter()
    cached(fn, PARAMS, name="demo", directory=tmp_path)
    (json_path,), (npz_path,) = _files(tmp_path, ".json"), _files(tmp_path, ".npz")
    damage(json_path, npz_path)
    out = cached(fn, PARAMS, name="demo", directory=tmp_path)
    assert fn.calls == 2
    np.testing.assert_array_equal(out["a"], np.linspace(0, 1, 7))
    assert out["a"].shape == (7,) and int(out["n"]) == 5
    cached(fn, PARAMS, name="demo", directory=tmp_path)  # the entry was rewritten and is valid again
    assert fn.calls == 2


# --------------------------------------------------------------------------- pickle


def test_object_results_are_refused_and_nothing_is_written(tmp_path):
    with pytest.raises(ValueError, match="object array"):
        cached(lambda: {"o": np.array([None, 1], dtype=object)}, PARAMS, name="demo", directory=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_pickled_payload_with_a_matching_checksum_is_not_unpickled(tmp_path, monkeypatch):
    """An entry whose payload holds a pickled object array (checksum and listing made to
    match) loads nothing: np.load(allow_pickle=False) refuses it and the result is recomputed."""
    fn = Counter()
    cached(fn, PARAMS, name="demo", directory=tmp_path)
    (json_path,), (npz_path,) = _files(tmp_path, ".json"), _files(tmp_path, ".npz")
    buf = io.BytesIO()
    np.savez(buf, a=np.array([{"boom": 1}], dtype=object))  # savez pickles object arrays
    npz_path.write_bytes(buf.getvalue())
    meta = json.loads(json_path.read_text())
    meta["payload_sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
    meta["arrays"] = {"a": {"dtype": "|O", "shape": [1]}}
    json_path.write_text(json.dumps(meta))

    def no_unpickling(*args, **kwargs):
        raise AssertionError("the cache must never unpickle")

    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    out = cached(fn, PARAMS, name="demo", directory=tmp_path)
    assert fn.calls == 2 and out["a"].dtype == np.float64


def test_stored_payload_loads_without_pickle(tmp_path):
    cached(Counter(), PARAMS, name="demo", directory=tmp_path)
    with np.load(_files(tmp_path, ".npz")[0], allow_pickle=False) as npz:
        assert sorted(npz.files) == ["a", "flag", "m", "n"]


# --------------------------------------------------------------------------- concurrency


def _writer(directory: str, barrier, value: float, queue):
    def slow():
        time.sleep(0.2)  # all writers are inside the computation at once
        return {"v": np.full(1000, value), "w": np.arange(50)}

    barrier.wait()
    out = cached(slow, {"experiment": "race"}, name="race", directory=directory)
    queue.put(float(out["v"][0]))


@pytest.mark.parametrize("same_result", [True, False])
def test_concurrent_writers_of_one_key_all_end_with_a_valid_entry(tmp_path, same_result):
    """Four processes compute the same key at once (with equal results, as a deterministic
    experiment gives, or with different ones): each gets its own complete result, and
    the entry left behind is valid and equals one of them; no temporary file remains."""
    # fork: the writers start at once instead of each importing copylib and torch anew (~3 s each with
    # spawn); they only use numpy and files, so the parent's torch threads do not matter to them
    ctx = multiprocessing.get_context("fork")
    n = 4
    barrier, queue = ctx.Barrier(n), ctx.Queue()
    values = [1.0] * n if same_result else [1.0 + i for i in range(n)]
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), barrier, values[i], queue)) for i in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    got = sorted(queue.get(timeout=10) for _ in range(n))
    assert got == sorted(values)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(_files(tmp_path, ".json")) == 1
    calls = Counter()
    out = cached(calls, {"experiment": "race"}, name="race", directory=tmp_path)
    assert calls.calls == 0  # a valid entry: read, not recomputed
    assert float(out["v"][0]) in values and (out["v"] == out["v"][0]).all()
    if same_result:
        assert len(_files(tmp_path, ".npz")) == 1  # equal results share one byte-identical payload


# --------------------------------------------------------------------------- location and switch


def test_switch_and_location(tmp_path, monkeypatch):
    assert _cache_enabled()
    assert cache_dir() == Path(copylib.__file__).resolve().parents[1] / ".cache" / "copyhead"
    monkeypatch.setenv("COPYHEAD_CACHE_DIR", str(tmp_path / "here"))
    assert cache_dir() == tmp_path / "here"
    fn = Counter()
    cached(fn, PARAMS, name="demo")
    assert len(_files(tmp_path / "here", ".json")) == 1
    for off in ("off", "0", "False", "no"):
        monkeypatch.setenv("COPYHEAD_CACHE", off)
        assert not _cache_enabled()
    cached(fn, PARAMS, name="demo")
    cached(fn, PARAMS, name="demo2")
    assert fn.calls == 3 and len(_files(tmp_path / "here", ".json")) == 1


def test_unwritable_directory_warns_and_still_returns_the_result(tmp_path):
    blocker = tmp_path / "not_a_directory"
    blocker.write_text("a file where the cache directory should be")
    fn = Counter()
    with pytest.warns(RuntimeWarning, match="could not store"):
        out = cached(fn, PARAMS, name="demo", directory=blocker)
    np.testing.assert_array_equal(out["a"], np.linspace(0, 1, 7))
    assert fn.calls == 1


# --------------------------------------------------------------------------- the cache=True wrappers


def test_train_map_cache_hit_is_identical_and_consumes_the_generator_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("COPYHEAD_CACHE_DIR", str(tmp_path))
    spec = ModelSpec(L=4, V=2, kind="softmax")
    C = nested_cooccurrence([5, 20], spec, np.random.default_rng(0))
    runs = []
    for cache_on in (False, True, True):
        gen = torch.Generator().manual_seed(1)
        res = train_map(C, spec, gen, n_steps=30, n_records=4, cache=cache_on)
        runs.append((res, torch.randn(3, generator=gen)))  # what the generator gives next
    assert len(_files(tmp_path, ".json")) == 1
    for res, after in runs[1:]:
        for f in ("steps", "train_loss", "test_loss", "objective", "g", "b", "W", "A"):
            np.testing.assert_array_equal(getattr(res, f), getattr(runs[0][0], f))
        assert torch.equal(after, runs[0][1])
    other = train_map(C, spec, torch.Generator().manual_seed(2), n_steps=30, n_records=4, cache=True)
    assert len(_files(tmp_path, ".json")) == 2 and not np.array_equal(other.g, runs[0][0].g)


def test_sampler_cache_hit_is_identical_and_needs_a_named_recorder(tmp_path, monkeypatch):
    monkeypatch.setenv("COPYHEAD_CACHE_DIR", str(tmp_path))
    spec = ModelSpec(L=4, V=2, kind="softmax")
    C = nested_cooccurrence([8, 30], spec, np.random.default_rng(0))
    kw = dict(n_warmup=20, thin=2, record="copy_weight")
    results = []
    for cache_on in (False, True, True):
        gen = torch.Generator().manual_seed(3)
        results.append((sample_collapsed_posterior(C, spec, 2, 40, gen, cache=cache_on, **kw), gen.get_state()))
    (ref, ref_state), *rest = results
    assert set(ref.samples) == {"c"} and ref.samples["c"].shape == (2, 20)
    for res, state in rest:
        np.testing.assert_array_equal(res.samples["c"], ref.samples["c"])
        np.testing.assert_array_equal(res.energy, ref.energy)
        np.testing.assert_array_equal(res.final_params["g"], ref.final_params["g"])
        assert res.scales.keys() == ref.scales.keys() and res.thin == ref.thin and res.metropolis is True
        assert torch.equal(state, ref_state)
    with pytest.raises(ValueError, match="record must be one of"):
        sample_collapsed_posterior(C, spec, 2, 40, torch.Generator(), n_warmup=20, cache=True,
                                   record=lambda p: {"g": p["g"]})


def test_sampler_cache_keeps_the_line_moves_and_keys_on_their_direction(tmp_path, monkeypatch):
    monkeypatch.setenv("COPYHEAD_CACHE_DIR", str(tmp_path))
    spec = ModelSpec(L=4, V=2, kind="softmax")
    C = nested_cooccurrence([8, 30], spec, np.random.default_rng(0))
    copy_dir = np.eye(4)[np.arange(4) - 1] - 0.25  # T - J/L

    def run(cache_on, direction):
        return sample_collapsed_posterior(C, spec, 2, 40, torch.Generator().manual_seed(3), n_warmup=20, thin=2,
                                          record="copy_weight", cache=cache_on, direction={"g": direction},
                                          direction_step=0.8)

    ref = run(False, copy_dir)
    hit = run(True, copy_dir), run(True, copy_dir)
    for res in hit:
        np.testing.assert_array_equal(res.samples["c"], ref.samples["c"])
        np.testing.assert_array_equal(res.line_accept_rate, ref.line_accept_rate)
    other = run(True, -copy_dir)  # another direction is another key, not a hit
    assert not np.array_equal(other.samples["c"], ref.samples["c"])
    assert len(list(tmp_path.rglob("*.npz"))) == 2

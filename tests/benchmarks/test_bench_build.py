"""Tests of benchmarks/bench_build.py: the kernel environment shared with profile_chapters.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_build as bb  # noqa: E402  (a script directory, not a package)


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    monkeypatch.setenv("COPYHEAD_CACHE", "on")
    monkeypatch.delenv("COPYHEAD_CACHE_DIR", raising=False)


def test_cache_off_and_restored(clean_env, tmp_path):
    with bb.kernel_environment(tmp_path, None):
        assert os.environ["PYTHONPATH"] == str(tmp_path)
        assert os.environ["COPYHEAD_CACHE"] == "off"
    assert os.environ["PYTHONPATH"] == "/elsewhere" and os.environ["COPYHEAD_CACHE"] == "on"


def test_cache_dir_replaces_the_switch_and_is_restored_after_an_error(clean_env, tmp_path):
    with pytest.raises(RuntimeError), bb.kernel_environment(tmp_path, tmp_path / "cache"):
        assert os.environ["COPYHEAD_CACHE_DIR"] == str(tmp_path / "cache")
        assert "COPYHEAD_CACHE" not in os.environ  # the default (on) applies inside
        raise RuntimeError("a chapter failed")
    assert "COPYHEAD_CACHE_DIR" not in os.environ and os.environ["COPYHEAD_CACHE"] == "on"


def test_build_verdicts_pass_and_fail_on_each_budget():
    lines = bb.build_verdicts(bb.CLEAN_BUDGET, bb.REBUILD_BUDGET, bb.CLEAN_BUDGET / bb.CLEAN_RATIO)
    assert [ok for _, ok in lines] == [True, True, True]  # each on its boundary
    lines = bb.build_verdicts(bb.CLEAN_BUDGET + 1, bb.REBUILD_BUDGET + 1, bb.CLEAN_BUDGET)
    assert [ok for _, ok in lines] == [False, False, False]
    assert "1.00" in lines[2][0]  # the ratio is printed


def test_build_verdicts_without_baseline_has_no_ratio():
    assert len(bb.build_verdicts(1.0, 1.0, None)) == 2


def test_build_verdicts_take_the_ratio_budget_given():
    line, met = bb.build_verdicts(100.0, 10.0, 95.0, ratio_budget=1.10)[2]
    assert met and "budget 1.1" in line
    assert not bb.build_verdicts(100.0, 10.0, 90.0, ratio_budget=1.10)[2][1]


def test_extensions_are_replaced_whole(tmp_path):
    root, source = tmp_path / "root", tmp_path / "source"
    (root / "_ext").mkdir(parents=True)
    (root / "_ext" / "warm_kernels.py").write_text("old")
    (root / "_ext" / "parallel_execution.py").write_text("old")
    (root / "book").mkdir()
    (source / "_ext" / "__pycache__").mkdir(parents=True)
    (source / "_ext" / "parallel_execution.py").write_text("new")
    assert bb.with_extensions_of(root, source) == root
    assert sorted(p.name for p in (root / "_ext").iterdir()) == ["parallel_execution.py"]  # no stale module left
    assert (root / "_ext" / "parallel_execution.py").read_text() == "new" and (root / "book").is_dir()


@pytest.mark.parametrize("argv", [["--machinery-only"], ["--machinery-only", "--builds"],
                                  ["--machinery-only", "--baseline", "HEAD"]])
def test_machinery_only_needs_builds_and_a_baseline(monkeypatch, capsys, argv):
    monkeypatch.setattr(sys, "argv", ["bench_build.py", *argv])
    with pytest.raises(SystemExit) as stop:
        bb.main()
    assert stop.value.code == 2 and "--machinery-only needs --builds and --baseline REV" in capsys.readouterr().err


def test_machinery_only_verdict_is_the_ratio_alone():
    lines = bb.build_verdicts(bb.CLEAN_BUDGET + 1, bb.REBUILD_BUDGET + 1, bb.CLEAN_BUDGET, ratio_budget=1.10,
                              absolute=False)
    assert len(lines) == 1 and "baseline" in lines[0][0] and lines[0][1]  # 241 / 240 is within 1.10


def test_machinery_only_builds_the_baseline_on_both_sides_and_judges_the_ratio(monkeypatch, tmp_path, capsys):
    built = []

    def fake_export(rev, dest, patch=None):
        (dest / "_ext").mkdir(parents=True)
        (dest / "_ext" / "warm_kernels.py").write_text(rev)
        return dest

    def fake_build(root, out, cache_dir):
        built.append(root)
        return (100.0 if root.name == "baseline" else 105.0), 0, ""

    monkeypatch.setattr(bb, "export_tree", fake_export)
    monkeypatch.setattr(bb, "time_build", fake_build)
    assert bb.run_builds("REV", tmp_path, repeats=2, ratio_budget=1.10, machinery_only=True) == 0
    assert [r.name for r in built] == ["baseline", "current"] * 2  # alternating, and no rebuild
    assert not (tmp_path / "current" / "_ext" / "warm_kernels.py").exists()  # this checkout's _ext/ replaced REV's
    out = capsys.readouterr().out
    assert "1.05 (budget 1.1)  PASS" in out and "rebuild" not in out
    built.clear()
    assert bb.run_builds("REV", tmp_path / "again", ratio_budget=1.04, machinery_only=True) == 1  # 1.05 > 1.04


def _git(cwd, *args):
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout


def test_export_tree_applies_the_baseline_patch(monkeypatch, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "f.py").write_text("x = 1\n")
    _git(repo, "add", "f.py")
    _git(repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "base")
    (repo / "f.py").write_text("x = 2\n")
    patch = tmp_path / "fix.patch"
    patch.write_text(_git(repo, "diff"))
    monkeypatch.setattr(bb, "ROOT", repo)
    assert (bb.export_tree("HEAD", tmp_path / "plain") / "f.py").read_text() == "x = 1\n"
    assert (bb.export_tree("HEAD", tmp_path / "fixed", patch) / "f.py").read_text() == "x = 2\n"
    assert bb.is_commit("HEAD") and not bb.is_commit("0000000")
    inside = repo / "tmp" / "tree"  # a folder inside the repository: the patch still applies to it
    inside.mkdir(parents=True)
    (inside / "f.py").write_text("x = 1\n")
    bb.apply_patch(patch, inside)
    assert (inside / "f.py").read_text() == "x = 2\n"


def test_the_baseline_patch_applies_to_2a22613(tmp_path):
    if not bb.is_commit("2a22613"):
        pytest.skip("2a22613 is not in this clone (shallow)")
    archive = subprocess.run(["git", "-C", str(bb.ROOT), "archive", "2a22613", "copylib/theory/softmax_marginal.py"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp_path)], input=archive, check=True)
    bb.apply_patch(bb.ROOT / "benchmarks" / "baseline-2a22613.patch", tmp_path)
    assert "ratio of the two trapezoid sums" in (tmp_path / "copylib/theory/softmax_marginal.py").read_text()


@pytest.mark.parametrize("argv, message", [
    (["--builds", "--baseline", "0000000"], "'0000000' is not a commit of this repository"),
    (["--baseline-patch", "benchmarks/baseline-2a22613.patch"], "--baseline-patch needs --builds and --baseline REV"),
    (["--builds", "--baseline", "HEAD", "--baseline-patch", "no/such.patch"], "no file 'no/such.patch'"),
])
def test_baseline_arguments_are_checked_at_the_command_line(monkeypatch, capsys, argv, message):
    monkeypatch.setattr(sys, "argv", ["bench_build.py", *argv])
    with pytest.raises(SystemExit) as stop:
        bb.main()
    assert stop.value.code == 2 and message in capsys.readouterr().err

"""The code passes ``ruff check`` with the configuration in ``pyproject.toml`` (issue 39)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    exe = shutil.which("ruff")
    if exe is None:
        pytest.fail("ruff is not installed: `pip install -r requirements.txt` installs it")
    return [exe]


def test_ruff_check_is_clean():
    run = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "."],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 0, f"ruff check found problems:\n{run.stdout}{run.stderr}"


def test_ruff_check_can_fail(tmp_path):
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text("import os\n")  # F401: an unused import
    run = subprocess.run([*_ruff(), "check", "--no-cache", "."], cwd=tmp_path, capture_output=True, text=True,
                         check=False)
    assert run.returncode == 1 and "F401" in run.stdout, run.stdout + run.stderr

"""Launch buttons open the right files; Binder, Colab and vendored files stay in sync."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
REPO = CONFIG["repository"]["url"].removeprefix("https://github.com/").rstrip("/")
BRANCH = CONFIG["repository"]["branch"]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


notebooks = _load("copyhead_notebooks", ROOT / "tools" / "notebooks.py")
launch = _load("copyhead_launch", ROOT / "_ext" / "copyhead_launch.py")
CHAPTERS = notebooks.chapters()


def _links(html: str, prefix: str) -> list[str]:
    return [u.replace("&amp;", "&") for u in re.findall(rf'href="({re.escape(prefix)}[^"]+)"', html)]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_launch_buttons_point_at_existing_files(built_site, chapter):
    page = (built_site / "book" / f"{chapter.stem}.html").read_text(encoding="utf-8")
    binder = _links(page, "https://mybinder.org/")
    colab = _links(page, launch.COLAB)
    assert len(set(binder)) == 1 and len(set(colab)) == 1, (binder, colab)
    b = re.fullmatch(rf"https://mybinder\.org/v2/gh/{REPO}/{BRANCH}\?urlpath=lab/tree/(.+)", binder[0])
    assert b, binder[0]
    assert b.group(1) == f"book/{chapter.stem}.md" and (ROOT / b.group(1)).is_file()
    c = re.fullmatch(rf"{re.escape(launch.COLAB)}/{REPO}/blob/{BRANCH}/(.+)", colab[0])
    assert c, colab[0]
    assert c.group(1) == f"notebooks/{chapter.stem}.ipynb" and (ROOT / c.group(1)).is_file()


def test_colab_notebooks_are_up_to_date():
    stale = [c.stem for c in CHAPTERS
             if (ROOT / "notebooks" / f"{c.stem}.ipynb").read_text(encoding="utf-8")
             != notebooks.colab_notebook(c)]
    assert not stale, f"regenerate with `python tools/notebooks.py`: {stale}"


def test_colab_notebook_is_the_chapter_plus_one_setup_cell():
    import jupytext

    chapter = ROOT / "book" / "copy_task.md"
    md = jupytext.read(chapter, fmt="md:myst")
    nb = jupytext.read(ROOT / "notebooks" / "copy_task.ipynb")
    assert "google.colab" in nb.cells[0].source and nb.cells[0].metadata["tags"] == ["colab-setup"]
    assert [c.source for c in nb.cells[1:]] == [c.source for c in md.cells]


def test_colab_url_rejects_non_github():
    assert launch.colab_url("https://github.com/a/b.git", "main", "n/x.ipynb") == f"{launch.COLAB}/a/b/blob/main/n/x.ipynb"
    with pytest.raises(ValueError, match="repository url"):
        launch.colab_url("https://gitlab.com/a/b", "main", "x.ipynb")


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==(\S+)", line.strip())
        if m:
            pins[m.group(1).lower()] = m.group(2)
    return pins


def test_binder_pins_match_the_root_requirements():
    root, binder = _pins(ROOT / "requirements.txt"), _pins(ROOT / "binder" / "requirements.txt")
    assert binder.pop("torch") == root.pop("torch") + "+cpu"
    assert binder == root


def _binder_python(path: Path) -> Version:
    """The Python version ``binder/runtime.txt`` asks repo2docker for (its format: one line ``python-X.Y``)."""
    if not path.is_file():
        raise ValueError(f"{path} is missing: without it repo2docker builds on its default Python (3.10)")
    text = path.read_text(encoding="utf-8").strip()
    m = re.fullmatch(r"python-(3\.\d+)", text)
    if not m:
        raise ValueError(f"{path} must be one line 'python-3.Y' (repo2docker's format), got {text!r}")
    return Version(m.group(1))


def _rejecting(python: Version, pins: dict[str, str]) -> dict[str, str]:
    """Pinned distributions whose Requires-Python excludes ``python``, with that requirement.

    Reads the installed distributions' metadata: the test environment installs the same pins
    (requirements.txt), which the version check makes sure of. ``X.Y`` counts as ``X.Y.0``, the
    lowest patch release repo2docker may pick.
    """
    rejecting = {}
    for name, pin in pins.items():
        dist = importlib.metadata.distribution(name)
        # torch's local suffix ("+cpu") names the build, not the release; the metadata is the same
        assert Version(dist.version).public == Version(pin).public, f"{name}: installed {dist.version}, pinned {pin}"
        requires = dist.metadata.get("Requires-Python")
        if requires and python not in SpecifierSet(requires):
            rejecting[name] = requires
    copylib = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    if python not in SpecifierSet(copylib):  # postBuild installs copylib itself
        rejecting["copylib"] = copylib
    return rejecting


def test_binder_runtime_python_satisfies_every_pin():
    python = _binder_python(ROOT / "binder" / "runtime.txt")
    assert not _rejecting(python, _pins(ROOT / "binder" / "requirements.txt"))


def test_binder_runtime_check_rejects_repo2docker_default_python():
    """Without runtime.txt repo2docker builds on 3.10, where the pins do not install (issue 15)."""
    assert _rejecting(Version("3.10"), _pins(ROOT / "binder" / "requirements.txt"))


@pytest.mark.parametrize("text", ["", "3.11", "python3.11", "python-3", "python-3.11\nr-4.4", "python-2.7"])
def test_binder_runtime_rejects_malformed_files(tmp_path, text):
    (tmp_path / "runtime.txt").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="runtime.txt"):
        _binder_python(tmp_path / "runtime.txt")


def test_binder_runtime_must_exist(tmp_path):
    with pytest.raises(ValueError, match="missing"):
        _binder_python(tmp_path / "runtime.txt")


def test_binder_postbuild_installs_copylib_and_opens_md_as_notebooks():
    post = ROOT / "binder" / "postBuild"
    text = post.read_text(encoding="utf-8")
    assert os.access(post, os.X_OK)
    assert "pip install --no-deps -e ." in text
    assert re.search(r"jupytext-config set-default-viewer .*\bmarkdown\b", text)


def test_vendored_files_match_their_manifest():
    site = ROOT / "vendor" / "site"
    listed = {}
    for line in (ROOT / "vendor" / "MANIFEST.sha256").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        listed[name.removeprefix("./")] = digest
    present = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert present == set(listed), present ^ set(listed)
    bad = [n for n, d in listed.items() if hashlib.sha256((site / n).read_bytes()).hexdigest() != d]
    assert not bad, f"vendored files changed (re-run vendor/fetch.sh): {bad}"


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Run the tests\s+```bash\n(.+?)\n```", readme, re.S)
    assert block, "README has no 'Run the tests' command block"
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert ci == [block.group(1).strip()]


def test_api_page_documents_every_public_module():
    """Docstrings link to modules with :mod:; one missing from the API page breaks the -n build."""
    import pkgutil

    import copylib

    api = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"\.\. automodule:: (copylib[\w.]*)", api))
    public = {m.name for m in pkgutil.walk_packages(copylib.__path__, prefix="copylib.")
              if not any(part.startswith("_") for part in m.name.split("."))}
    assert public == documented, f"missing: {sorted(public - documented)}, extra: {sorted(documented - public)}"

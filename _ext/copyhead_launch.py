"""Sphinx extension: a Colab entry in the launch-button menu of every chapter.

sphinx-book-theme builds its Colab link from the page's own source file, and
Colab opens only ``.ipynb`` files, while the chapters are MyST Markdown. The
Colab notebooks live in ``notebooks/<chapter>.ipynb`` (made by
``tools/notebooks.py``); this extension links there. It runs after the theme's
own launch buttons (priority 501) and appends to their group.
"""

from __future__ import annotations

from pathlib import Path

COLAB = "https://colab.research.google.com/github"


def colab_url(repository_url: str, branch: str, notebook: str) -> str:
    """The Colab address of ``notebook`` (a path in the repository) on GitHub."""
    repo = repository_url.rstrip("/").removesuffix(".git")
    if "github.com/" not in repo:
        raise ValueError(f"repository url must be a GitHub url, got {repository_url!r}")
    org_repo = "/".join(repo.split("github.com/")[1].split("/")[:2])
    return f"{COLAB}/{org_repo}/blob/{branch}/{notebook}"


def _add_colab(app, pagename, templatename, context, doctree):
    notebook = Path("notebooks") / f"{Path(pagename).name}.ipynb"
    if not (Path(app.srcdir) / notebook).is_file():
        return
    options = app.config.html_theme_options
    url = colab_url(options.get("repository_url", ""), options.get("repository_branch", "main"),
                    notebook.as_posix())
    for group in context.get("header_buttons", []):
        if group.get("label") == "launch-buttons":
            group["buttons"].append({
                "type": "link",
                "text": "Colab",
                "tooltip": "Launch on Colab",
                "icon": "_static/images/logo_colab.png",
                "url": url,
            })


def setup(app):
    app.connect("html-page-context", _add_colab, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

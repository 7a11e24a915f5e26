"""Sphinx extension: every script tag of a page once.

Sphinx 7.4 lists an inline script (``app.add_js_file(None, body=...)``) twice when an
extension adds it after the HTML builder was created: the builder keeps it with the file
name ``None``, and when writing starts the builder adds the registry's copy again under
the name ``""``, which its duplicate test (file name, priority, attributes) does not
recognise. sphinx-thebe (``env-before-read-docs``) and sphinx-togglebutton
(``builder-inited``) add theirs that way, so every page declared
``const THEBE_JS_URL`` twice and the browser refused the second script
("Identifier 'THEBE_JS_URL' has already been declared").

This extension runs last on ``html-page-context`` and keeps the first of every set of
equal scripts, with ``None`` and ``""`` counted as the same name. The order of the
scripts is otherwise unchanged. ``tests/book/test_site.py`` fails on any script error
of any page, and ``tests/book/test_site_properties.py`` tests :func:`unique_scripts` alone.
"""

from __future__ import annotations

from typing import Any


def script_key(script: Any) -> tuple:
    """What makes two script tags the same: file name (``None`` as ``""``), priority and attributes
    (an inline script's ``body`` among them). A plain string (an older Sphinx) is its own key."""
    if isinstance(script, str):
        return (script,)
    attributes = getattr(script, "attributes", {}) or {}
    return (getattr(script, "filename", None) or "", getattr(script, "priority", 500),
            tuple(sorted((str(k), str(v)) for k, v in attributes.items())))


def unique_scripts(scripts) -> list:
    """``scripts`` without the repeats (first of each :func:`script_key`), in their order."""
    seen, out = set(), []
    for script in scripts:
        key = script_key(script)
        if key not in seen:
            seen.add(key)
            out.append(script)
    return out


def _dedupe(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"] = unique_scripts(context["script_files"])


def setup(app):
    # After every other handler (myst-nb and the themes add per-page scripts here; the default priority is 500).
    app.connect("html-page-context", _dedupe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

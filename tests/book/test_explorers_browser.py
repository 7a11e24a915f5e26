"""The explorers on the built website work without a kernel and without network.

Every page with an explorer is opened in headless Chromium, driven by Playwright
(from PyPI) through the system ``chromium`` (``executable_path``: no browser
download), without MathJax (the explorers do not use it; ``test_site.py`` and
``test_math_browser.py`` check the typesetting). Every request to a host other than
the local server is refused and recorded, and the test fails if there was one. On each explorer, every visible
control is dragged (sliders) or clicked (buttons) to both ends; after each move
exactly one frame must be visible, its image loaded, different from the frame
before, and its label must name the value that every visible control shows.
Controls that need a kernel must not be visible.

The page weight is read from the built files: at most 1 MB of frames per explorer
and 40 MB for the whole site.
"""

from __future__ import annotations

import base64
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from browser_helpers import CHROMIUM, CHROMIUM_ARGS, NEEDS_CHROMIUM, open_offline
from copylib.frames import EXPLORER_CLASS, FRAME_CLASS, LABEL_CLASS, LIVE_ONLY_CLASS

pytestmark = NEEDS_CHROMIUM

FRAME_BUDGET = 1_000_000      # bytes of frames per explorer (issue 15)
SITE_BUDGET = 40_000_000      # bytes of the whole built site
WIDGET_STATE = re.compile(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', re.S)
CONTROLS = ".widget-slider, .widget-toggle-buttons"


def explorer_pages(html: Path) -> list[Path]:
    """Pages whose embedded widget state holds an explorer."""
    return sorted(p for p in html.rglob("*.html")
                  if any(EXPLORER_CLASS in block for block in WIDGET_STATE.findall(p.read_text(encoding="utf-8"))))


def _open(browser, url: str, base: str):
    """The page at ``url`` once its first explorer frame shows; ``page.refused`` lists requests elsewhere.

    Without MathJax: the explorers do not use it (the site and math tests check the typesetting), and
    typesetting a chapter costs seconds of the browser's CPU while the controls are moved.
    """
    page, page.refused = open_offline(browser, url, base, {"width": 1280, "height": 1600}, skip=("mathjax",))
    page.wait_for_selector(f".{FRAME_CLASS}", state="visible", timeout=60_000)
    return page


def _shown(explorer) -> tuple[str, str]:
    """(label, image src) of the one visible frame of ``explorer``; fails unless exactly one is visible."""
    labels = explorer.locator(f".{LABEL_CLASS}:visible")
    images = explorer.locator(f".{FRAME_CLASS}:visible")
    assert labels.count() == 1 and images.count() == 1, (labels.all_inner_texts(), images.count())
    image = images.first
    image.evaluate("img => img.decode()")  # waits until the picture is loaded, fails if it cannot be
    assert image.evaluate("img => img.naturalWidth") > 0
    return labels.first.inner_text().strip(), image.get_attribute("src")


def _control_values(explorer) -> dict[str, str]:
    """What every visible control shows: ``{description: value}``."""
    values = {}
    for control in explorer.locator(f"{CONTROLS}").all():
        if not control.is_visible():
            continue
        name = control.locator(".widget-label").first.inner_text().strip()
        if "widget-slider" in control.get_attribute("class"):
            values[name] = control.locator(".widget-readout").inner_text().strip()
        else:
            values[name] = control.locator(".widget-toggle-button.mod-active").inner_text().strip()
    return values


def _move(page, control, end: str):
    """Drag a slider's handle past the end of its track, or click the first/last button."""
    if "widget-slider" in control.get_attribute("class"):
        handle = control.locator(".noUi-handle")
        track = control.locator(".noUi-target").bounding_box()
        start = handle.bounding_box()
        page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
        page.mouse.down()
        x = track["x"] + track["width"] + 40 if end == "max" else track["x"] - 40
        page.mouse.move(x, start["y"] + start["height"] / 2, steps=8)
        page.mouse.up()
    else:
        buttons = control.locator(".widget-toggle-button")
        (buttons.last if end == "max" else buttons.first).click()


def _assert_label_matches(label: str, values: dict):
    for name, value in values.items():
        assert f"{name} = {value}" in label, f"frame {label!r} but the control {name} shows {value!r}"


def test_every_control_of_every_explorer_moves_its_frame(built_site, site_url, browser):
    pages = [path.relative_to(built_site).as_posix() for path in explorer_pages(built_site)]
    assert pages, "no page of the site has an explorer"
    # The pages are independent: as many at once as there are cores, each worker thread with its own
    # Playwright and Chromium (Playwright's sync API is one instance per thread). The fixture ``browser``
    # belongs to this thread and is not shared with the workers; it is requested for its skips (no
    # Playwright, no Chromium).
    n = min(len(os.sched_getaffinity(0)), len(pages))
    with ThreadPoolExecutor(n) as pool:
        results = list(pool.map(lambda part: _explore_pages(part, site_url), [pages[i::n] for i in range(n)]))
    problems = [p for found, _ in results for p in found]
    moved = sum(m for _, m in results)
    assert moved >= 2 * len(pages), f"only {moved} control moves on {len(pages)} pages"
    assert not problems, "\n".join(problems)


def _explore_pages(rels: list[str], site_url: str) -> tuple[list[str], int]:
    """Every control of every explorer on the pages ``rels`` moved: (problems, number of moves)."""
    from playwright.sync_api import sync_playwright

    problems, moved = [], 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for rel in rels:
            page = _open(browser, f"{site_url}/{rel}", site_url)
            found, n = _explore_page(page, rel)
            problems += found
            moved += n
            page.close()
        browser.close()
    return problems, moved


def _explore_page(page, rel: str) -> tuple[list[str], int]:
    problems, moved = [], 0
    live = page.locator(f".{LIVE_ONLY_CLASS}")
    if any(live.nth(i).is_visible() for i in range(live.count())):
        problems.append(f"{rel}: controls that need a kernel are visible")
    explorers = page.locator(f".{EXPLORER_CLASS}")
    for k in range(explorers.count()):
        explorer = explorers.nth(k)
        explorer.scroll_into_view_if_needed()
        label, _ = _shown(explorer)
        _assert_label_matches(label, _control_values(explorer))
        n_controls = explorer.locator(CONTROLS).count()
        # Two passes: each control goes to both ends, first max then min, then the other way round,
        # so an inner control is also tried in the last child of its outer stack.
        for ends in (("max", "min"), ("min", "max")):
            for c in range(n_controls):
                control = explorer.locator(CONTROLS).nth(c)
                if not control.is_visible():
                    continue  # a copy of a control in a hidden child of a stack
                for end in ends:
                    problems += _move_and_check(page, explorer, control, end, f"{rel}, explorer {k}")
                    moved += 1
    if page.refused:
        problems.append(f"{rel}: requests to other hosts: {sorted(set(page.refused))}")
    return problems, moved


def _move_and_check(page, explorer, control, end: str, where: str) -> list[str]:
    """Move ``control`` to ``end``; the problems seen (the label must match the controls in any case)."""
    name = control.locator(".widget-label").first.inner_text().strip()
    before, was_at_end, others = _shown(explorer), _at_end(control, end), _control_values(explorer)
    _move(page, control, end)
    page.wait_for_timeout(100)
    after, values = _shown(explorer), _control_values(explorer)
    _assert_label_matches(after[0], values)
    problems = []
    if not _at_end(control, end):
        problems.append(f"{where}: {name} did not reach its {end}")
    elif was_at_end != (after == before):
        problems.append(f"{where}: moving {name} to its {end} {'changed' if was_at_end else 'did not change'} the frame")
    moved_others = {n: (v, values.get(n)) for n, v in others.items() if n != name and values.get(n) != v}
    if moved_others:
        problems.append(f"{where}: moving {name} changed other controls (before, after): {moved_others}")
    return problems


def _at_end(control, end: str) -> bool:
    """True if the control was already at ``end`` (so moving there cannot change the frame)."""
    if "widget-slider" in control.get_attribute("class"):
        now = float(control.locator(".noUi-handle").get_attribute("aria-valuenow"))
        bound = control.locator(".noUi-handle").get_attribute("aria-valuemax" if end == "max" else "aria-valuemin")
        return now == float(bound)
    buttons = control.locator(".widget-toggle-button")
    target = buttons.last if end == "max" else buttons.first
    return "mod-active" in (target.get_attribute("class") or "")


def _frame_bytes_per_explorer(html: str) -> list[int]:
    """Bytes of PNG frames under each explorer widget, from the page's embedded widget state."""
    out = []
    for block in WIDGET_STATE.findall(html):
        state = json.loads(block)["state"]

        def size(model_id: str) -> int:
            entry = state[model_id]
            own = sum(len(base64.b64decode(b["data"])) for b in entry.get("buffers", ())
                      if b.get("path") == ["value"] and entry["model_name"] == "ImageModel")
            kids = entry["state"].get("children", [])
            return own + sum(size(k.removeprefix("IPY_MODEL_")) for k in kids)

        out += [size(mid) for mid, entry in state.items()
                if EXPLORER_CLASS in entry["state"].get("_dom_classes", ())]
    return out


def test_page_weight(built_site):
    pages = explorer_pages(built_site)
    sizes = {p.name: _frame_bytes_per_explorer(p.read_text(encoding="utf-8")) for p in pages}
    assert sizes and all(sizes.values()), f"no explorer found in the pages' widget state: {sizes}"
    heavy = {name: s for name, s in sizes.items() if max(s) > FRAME_BUDGET}
    assert not heavy, f"explorers with more than {FRAME_BUDGET} bytes of frames: {heavy}"
    assert all(min(s) > 0 for s in sizes.values()), f"an explorer without frames: {sizes}"
    total = sum(f.stat().st_size for f in built_site.rglob("*") if f.is_file())
    assert total <= SITE_BUDGET, f"the site weighs {total / 1e6:.1f} MB, budget {SITE_BUDGET / 1e6:.0f} MB"

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
and 40 MB for the whole site. The linear chapter's explorer also moves the sequence
length L, from the chapter's L = 32 to a size whose MAP minimum jumps (issue 37).
"""

from __future__ import annotations

import base64
import json

from browser_helpers import NEEDS_CHROMIUM, WIDGET_STATE_BLOCK, explorer_pages

from copylib.frames import _EXPLORER_CLASS

pytestmark = NEEDS_CHROMIUM

FRAME_BUDGET = 1_000_000      # bytes of frames per explorer (issue 15)
SITE_BUDGET = 40_000_000      # bytes of the whole built site


def test_every_control_of_every_explorer_moves_its_frame(explored_site):
    pages, problems, moved = explored_site
    assert pages, "no page of the site has an explorer"
    assert moved >= 2 * len(pages), f"only {moved} control moves on {len(pages)} pages"
    assert not problems, "\n".join(problems)


def _frame_bytes_per_explorer(html: str) -> list[int]:
    """Bytes of PNG frames under each explorer widget, from the page's embedded widget state."""
    out = []
    for block in WIDGET_STATE_BLOCK.findall(html):
        state = json.loads(block)["state"]

        def size(model_id: str, state=state) -> int:
            entry = state[model_id]
            own = sum(len(base64.b64decode(b["data"])) for b in entry.get("buffers", ())
                      if b.get("path") == ["value"] and entry["model_name"] == "ImageModel")
            kids = entry["state"].get("children", [])
            return own + sum(size(k.removeprefix("IPY_MODEL_")) for k in kids)

        out += [size(mid) for mid, entry in state.items()
                if _EXPLORER_CLASS in entry["state"].get("_dom_classes", ())]
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


# The smallest L at which the global minimum of the MAP action jumps at V = 4 (the linear chapter's glue key
# lstar_map, "Deeper: larger L"); the fluct minimum jumps from L = 115.
LSTAR_MAP = 89


def _controls(html: str) -> dict[str, list[tuple]]:
    """``{description: [option labels of each control with it]}`` of the page's sliders and buttons."""
    out: dict[str, list[tuple]] = {}
    for block in WIDGET_STATE_BLOCK.findall(html):
        for entry in json.loads(block)["state"].values():
            if entry["model_name"] in ("SelectionSliderModel", "ToggleButtonsModel"):
                state = entry["state"]
                out.setdefault(state.get("description", ""), []).append(tuple(state.get("_options_labels", ())))
    return out


def test_the_linear_explorer_moves_L_from_32_to_a_size_with_a_jump(built_site):
    page = next(p for p in explorer_pages(built_site) if p.stem == "linear_attention")
    L_options = _controls(page.read_text(encoding="utf-8")).get("L", [])
    assert any("32" in opts and max(int(x) for x in opts) >= LSTAR_MAP for opts in L_options), (
        f"the linear chapter needs an explorer whose L control runs from 32 to at least {LSTAR_MAP} "
        f"(copylib.explorers.linear_size_explorer); its L controls: {L_options}")

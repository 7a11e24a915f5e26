"""Figure text is drawn at 8 pt or more, in the chapters and in copylib's figures.

With figures shown at 80 % of their drawn width or more (``test_math_browser``), drawn at 100 dpi
(explorer frames at 90), that keeps every label of a figure at 8 CSS pixels or more. Read from the
source: an explicit ``fontsize`` or ``labelsize`` below 8 (or the named sizes "x-small" and
"xx-small") names its file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A size in points below 8, or a named size below 8 pt at matplotlib's default 10 pt ("x-small" is 6.9)
SMALL = re.compile(r"""\b(?:fontsize|labelsize)\s*=\s*(?:[0-7](?:\.\d+)?\b|["'](?:x|xx)-small["'])""")


def _sources() -> list[Path]:
    return sorted([*(ROOT / "copylib").rglob("*.py"), *(ROOT / "book").glob("*.md")])


def small_text(text: str) -> list[str]:
    """The explicit font sizes below 8 pt in ``text``."""
    return [m.group(0) for m in SMALL.finditer(text)]


def test_no_figure_text_below_8_pt():
    offenders = [f"{path.relative_to(ROOT)}:{n}: {hit}" for path in _sources()
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 for hit in small_text(line)]
    assert not offenders, "figure text below 8 pt:\n" + "\n".join(offenders)


def test_the_scan_sees_small_text():
    assert small_text('ax.legend(fontsize=7, loc="best")') == ["fontsize=7"]
    assert small_text("ax.tick_params(labelsize=6.5)") == ["labelsize=6.5"]
    assert small_text('ax.legend(fontsize="x-small")') == ['fontsize="x-small"']
    assert small_text("ax.legend(fontsize=8)") == [] and small_text("ax.set_title(t, fontsize=10)") == []

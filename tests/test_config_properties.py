"""Property tests of copylib.config: the COPYHEAD_SCALE switch.

Every accepted spelling selects a known scale; any other value raises ValueError
naming COPYHEAD_SCALE.
"""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from copylib import config

from props_helpers import budget, covers, raises_naming


class _scale_env:
    """Set COPYHEAD_SCALE inside a with-block and restore it (a fixture would span all examples)."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.old = os.environ.get("COPYHEAD_SCALE")
        os.environ["COPYHEAD_SCALE"] = self.value

    def __exit__(self, *exc):
        if self.old is None:
            os.environ.pop("COPYHEAD_SCALE", None)
        else:
            os.environ["COPYHEAD_SCALE"] = self.old


@covers(config.scale, config.by_scale)
@budget(10)
@given(value=st.sampled_from(["default", "paper", "PAPER", " paper ", "Default", ""]))
def test_config_valid(value):
    with _scale_env(value):
        s = config.scale()
        assert s in config._SCALES
        assert config.by_scale("d", "p") == ("p" if s == "paper" else "d")


@covers(config.scale, config.by_scale)
@budget(10)
@given(value=st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=6)
       .filter(lambda v: v.strip().lower() not in ("", "default", "paper")))
def test_config_invalid(value):
    with _scale_env(value):
        with raises_naming("COPYHEAD_SCALE", ValueError):
            config.scale()
        with raises_naming("COPYHEAD_SCALE", ValueError):
            config.by_scale(1, 2)

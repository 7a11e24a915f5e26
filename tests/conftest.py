"""Shared pytest configuration: Hypothesis profiles for the property tests.

``ci`` (the default) is derandomised: every run draws the same examples, so a CI
failure reproduces locally and the run time is stable. ``explore`` draws fresh
random examples with five times the budget of each test; run it locally to hunt
for new counterexamples:

    HYPOTHESIS_PROFILE=explore pytest tests/test_properties*.py
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# deadline=None: the first call of a torch/scipy path pays one-off import and
# allocation costs, which would trip Hypothesis' per-example deadline spuriously.
# too_slow / data_too_large: some strategies build (L, L, V, V) tensors on purpose.
_COMMON = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("explore", derandomize=False, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

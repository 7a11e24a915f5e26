"""Analysis: what the chapters compute from theory curves and runs.

* :mod:`copylib.analysis.transitions` -- locating changes across sample sizes;
* :mod:`copylib.analysis.scaling` -- critical sample sizes, power-law fits, crossovers;
* :mod:`copylib.analysis.predictability` -- forecasts of a transition from below;
* :mod:`copylib.analysis.causal` -- the causal chapter: prior and plug-in checks, the coexistence scan,
  agreement of Adam's starts, sampled copy weights, the order in which rows switch, bimodality;
* :mod:`copylib.analysis.linear`, :mod:`copylib.analysis.softmax` -- the linear and softmax chapters' analyses
  (versions tables, z tests against the plug-in marginal, planted starts, the expansion at a spinodal); the
  linear chapter's error-bar calibration, z tables and diagnostics are in :mod:`copylib.analysis.linear_evidence`,
  its threshold tables and bisections in :mod:`copylib.analysis.linear_thresholds`;
* :mod:`copylib.analysis.softmax_evidence` -- the softmax chapter's evidence: finite-size tables and figure,
  sampled branches against the plug-in marginal, chain convergence, the plug-in action's error on the exact evidence;
* :mod:`copylib.analysis.softmax_numbers` -- the numbers the softmax chapter quotes from its finite-size rows
  and its table of z-scores;
* :mod:`copylib.analysis.softmax_umbrella` -- the basins' log-odds by umbrella sampling along ``c`` where
  chains no longer hop (``L = 64``), against the plug-in marginal;
* :mod:`copylib.analysis.induction` -- the induction chapter's Adam sweeps and posterior sampling; what the
  chapter reads off them is in :mod:`copylib.analysis.induction_onsets` (onsets, steepness and formation steps
  of the heads) and :mod:`copylib.analysis.induction_switch` (mixing of the ladders, the posterior's switch).
"""

from __future__ import annotations

# The names live in the submodules (documented one by one on the API page); the package adds none.
__all__: list[str] = []

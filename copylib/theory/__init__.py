"""Theory: reduced actions of the order parameters, their minima, spinodals and critical sizes.

* :mod:`copylib.theory.reduced_action` -- grid searches for minima and coexistence shared by the theories;
* :mod:`copylib.theory.plugin_loss` -- the plug-in loss as a function of the invariants;
* :mod:`copylib.theory.results` -- the result types every geometry shares (``Minimum``, ``Spinodals``,
  ``FirstOrderPoint``);
* :mod:`copylib.theory.linear`, :mod:`copylib.theory.softmax`, :mod:`copylib.theory.causal` -- one module per
  attention geometry, each with the versions ``"mean_field"``, ``"fluct"`` and ``"map"`` where they apply;
  ``linear`` and ``softmax`` gather the public names of the modules they are written in, one theme each
  (``linear_action``, ``trust_region``, ``linear_minima``, ``linear_thresholds``, ``linear_jump``;
  ``softmax_noise``, ``softmax_action``, ``softmax_transition``);
* :mod:`copylib.theory.linear_marginal`, :mod:`copylib.theory.softmax_marginal` -- the plug-in marginals
  (the plug-in posterior integrated numerically, without a saddle point); ``softmax_marginal`` gathers
  ``softmax_cumulants``, ``softmax_marginal_density``, ``softmax_marginal_branches`` and ``softmax_marginal_scan``.
"""

from __future__ import annotations

# The names live in the submodules (documented one by one on the API page); the package adds none.
__all__: list[str] = []

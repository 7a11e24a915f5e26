"""Theory: reduced actions of the order parameters, their minima, spinodals and critical sizes.

* :mod:`copylib.theory.reduced_action` -- grid searches for minima and coexistence shared by the theories;
* :mod:`copylib.theory.plugin_loss` -- the plug-in loss as a function of the invariants;
* :mod:`copylib.theory.linear`, :mod:`copylib.theory.softmax`, :mod:`copylib.theory.causal` -- one module per
  attention geometry, each with the versions ``"mean_field"``, ``"fluct"`` and ``"map"`` where they apply;
* :mod:`copylib.theory.linear_marginal`, :mod:`copylib.theory.softmax_marginal` -- the plug-in marginals
  (the plug-in posterior integrated numerically, without a saddle point).
"""

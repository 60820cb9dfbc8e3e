"""Unknown laws of a known netlist learned from input-output recordings.

* :class:`LearnedLawEstimator` fits the coefficients of the netlist's
  ``learn(...)`` elements (:mod:`phsym.components.learnable`) with the
  ordinary parameters, with smoothness and prior regularisation;
* :class:`LearnedCurve` is a fitted law: callable, confidence band, trust
  range, netlist line, plot;
* :data:`NAMED_LAWS` are the priors (Shockley, a cubic spring...).
"""
from .curve import LearnedCurve
from .estimator import LearnedLawEstimator, learned_elements, port_signal
from .show import laws_text, plot_laws, saved_laws
from .priors import NAMED_LAWS, prior_law

__all__ = ["LearnedLawEstimator", "LearnedCurve", "learned_elements", "port_signal", "NAMED_LAWS", "prior_law",
           "saved_laws", "laws_text", "plot_laws"]

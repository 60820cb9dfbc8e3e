"""Identification of port-Hamiltonian models from data.

Estimators follow scikit-learn's conventions (:mod:`phsym.identify.base`);
data follow the simulator's time grid (:mod:`phsym.identify.data`).
Importing this package is cheap: estimators (and numba) load on first use.
"""
from ..common.lazy import attach

__all__ = ["LearnedLawEstimator", "EffortGP", "DissipativeLawGP", "LinearPHSEstimator", "MechanicalEstimator", "ParameterEstimator",
           "UnidentifiableParameterWarning", "SchemeMismatchWarning", "nrms", "r2_score", "max_relative_error", "monte_carlo", "MonteCarloResult"]

__getattr__, __dir__ = attach(__name__, attributes={
    "LearnedLawEstimator": "learned", "EffortGP": "gp", "DissipativeLawGP": "gp", "LinearPHSEstimator": "linear_estimator", "MechanicalEstimator": "mechanical",
    "ParameterEstimator": "parameter_estimator",
    "UnidentifiableParameterWarning": "warnings", "SchemeMismatchWarning": "warnings", "nrms": "metrics", "r2_score": "metrics",
    "max_relative_error": "metrics", "monte_carlo": "montecarlo", "MonteCarloResult": "montecarlo"})

"""The Newton-loop generator: one template for the step module of any model and scheme.

:mod:`.module` writes the module (``resjac``, the compiled time loop
``run``, ``junc``) and imports it (:func:`~.module.generate`); its parts:
:mod:`.iteration` (one Newton iteration's lines), :mod:`.junctions`
(SPICE-style junction-voltage limiting), :mod:`.schur` (Newton directions
through the Jacobian's constant columns), :mod:`.hoist` (step constants),
:mod:`.predictor` (the first guess of a step), :mod:`.carried` (the layout
of what a step carries to the next); :mod:`.sensitivity` the same loop with
forward sensitivities (grey-box fitting).

Nothing is imported here (sympy loads with :mod:`.module`).
"""

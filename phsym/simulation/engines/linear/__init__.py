"""The linear engine: linear models stepped without Newton (numbers only).

:mod:`.engine` (:class:`~.engine.LinearEngine`: a linear scheme's numbers
for ``E xi' = (J - R) Q xi + B u``), :mod:`.loops` (the compiled dense and
sparse loops it hands a plan) and :mod:`.template` (a small linear model's
plans from one per-structure template, many parameter sets at once).
"""

"""The loops a RunPlan drives (numbers only: no sympy).

:mod:`.arrays` holds what every loop shares (:class:`~.arrays.RunArrays`,
chunked stepping, status codes); :mod:`.generated` the generated, unrolled
Newton loop of any model (:class:`~.generated.NewtonLoop`), whose failed
steps :mod:`.substeps` subdivides; :mod:`.numeric` the numeric engine (one
compiled loop for every circuit, law kernels per form, sparse Newton:
:class:`~.numeric.loop.NumericLoop`); :mod:`.linear` the loops of linear
models (the engine that builds them, the dense and sparse loops, the
per-structure template of small models).

Nothing is imported here: each engine loads on first use.
"""

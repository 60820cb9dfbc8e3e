"""C99 export of the generated step loop (:mod:`.translate`, :mod:`.prune`, :mod:`.library`, :mod:`.lv2`)."""

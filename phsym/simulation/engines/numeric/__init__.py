"""The numeric engine: the circuit as data, law kernels compiled once per form, sparse Newton."""

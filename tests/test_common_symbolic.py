import pytest
import sympy as sp

import phsym
from phsym.common.symbolic import product

R, C, Q, I = sp.symbols("R1 C1 q_C1 i", real=True)
Z = sp.Symbol("zeta")


@pytest.mark.parametrize("factors", [
    (R, I), (I, R), (Z, R), (sp.Rational(1, 2), Q ** 2, 1 / C), (sp.Rational(1, 2), 1 / C, Q ** 2),
    (sp.Integer(3), R, Q ** -2),
    # combining factors: sympy's own product
    (R, R), (R, 1 / R), (sp.Integer(2), sp.Integer(3), R), (sp.Integer(1), R, I), (R + I, C), (R,),
])
def test_product_is_sympys_product(factors):
    got, want = product(*factors), sp.Mul(*factors)
    assert got == want and hash(got) == hash(want) and got.args == want.args
    assert sp.srepr(got) == sp.srepr(want)


def test_linear_resistor_hands_its_coefficient_to_the_circuit_data():
    m = phsym.parse("V1 a 0 1\nR1 a b 2k\nC1 b 0 1u\n")
    (d,) = m.circuit.dissipations
    law, var = d.record.law, d.record.variable
    assert d.coefficient == sp.Symbol("R1", real=True) == law.xreplace({var: 1})
    assert law.xreplace({var: 0}) == 0

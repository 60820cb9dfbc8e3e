"""Corpus of malformed netlists: each must fail with a NetlistError at an exact position."""
import pytest

from phsym.errors import NetlistError
from phsym.netlist import load_netlist

# (id, netlist text, expected line, expected column, fragment of the message)
CORPUS = [
    ("unknown-letter", "Z1 a b 1k\n", 1, 1, "unknown element type"),
    ("missing-value", "R1 a b\n", 1, 1, "missing value"),
    ("too-few-nodes", "R1 a\n", 1, 5, "needs 2 nodes"),
    ("bad-suffix", "R1 a b 1k5\n", 1, 8, "malformed number"),
    ("unknown-keyword", "C1 a 0 1u foo=3\n", 1, 11, "unknown keyword 'foo'"),
    ("value-and-law", "C1 a 0 1u H={q^2}\n", 1, 11, "both a value"),
    ("law-not-allowed", "L1 a 0 V={i}\n", 1, 8, "unknown keyword 'V'"),
    ("ic-not-allowed", "R1 a 0 1 IC=0\n", 1, 10, "unknown keyword 'IC'"),
    ("extra-value", "R1 a 0 1 2\n", 1, 10, "unexpected value"),
    ("dup-keyword", "R1 a 0 R=1 r=2\n", 1, 12, "given twice"),
    ("dup-element", "R1 a 0 1\nr1 b 0 2\n", 2, 1, "duplicate element name"),
    ("mass-not-grounded", "M1 a b mass m=1\n", 1, 1, "datum"),
    ("inertia-not-grounded", "J1 a b inertia J=1\n", 1, 1, "datum"),
    ("unterminated-brace", "R1 a 0 {1+2\n", 1, 8, "unexpected character '{'"),
    ("stray-close-brace", "R1 a 0 1}\n", 1, 9, "unexpected character '}'"),
    ("bad-expression", "R1 a 0 {1+*2}\n", 1, 11, "unexpected '*'"),
    ("unknown-function", "R1 a 0 {foo(2)}\n", 1, 9, "unknown function"),
    ("undefined-param", "R1 a 0 {2*Rx}\n", 1, 11, "undefined parameter 'Rx'"),
    ("cyclic-params", "* c\n.param a={b} b={a}\n", 2, 8, "cyclic"),
    ("param-case-clash", ".param x=1\n.param X=2\n", 2, 8, "differs only by case"),
    ("param-not-assign", ".param x\n", 1, 8, "expected name=value"),
    ("unknown-dot", ".alter\n", 1, 1, "unknown dot-command"),
    ("orphan-continuation", "+ R1 a 0 1\n", 1, 1, "continuation"),
    ("ends-without-subckt", ".ends\n", 1, 1, ".ends without .subckt"),
    ("missing-ends", ".subckt S a b\nR1 a b 1\n", 1, 1, "missing .ends"),
    ("unknown-subckt", "X1 a b NOPE\n", 1, 8, "unknown subcircuit"),
    ("subckt-node-count", ".subckt S a b\nR1 a b 1\n.ends\nX1 a S\n", 4, 1, "port"),
    ("subckt-recursive", ".subckt A p\nX1 p B\n.ends\n.subckt B p\nX1 p A\n.ends\nX9 n A\n",
     5, 6, "recursive"),
    ("subckt-bad-override", ".subckt S a params: r=1\nR1 a 0 r\n.ends\nX1 n S q=2\n", 4, 8,
     "no parameter 'q'"),
    ("ends-name-mismatch", ".subckt S a\nR1 a 0 1\n.ends T\n", 3, 7, "does not match"),
    ("param-inside-subckt", ".subckt S a\n.param z=1\n.ends\n", 2, 1, "not allowed inside"),
    ("unknown-model", "D1 a 0 DX\n", 1, 8, "unknown model"),
    ("model-bad-key", ".model DM D(IS=1n BVX=3)\n", 1, 19, "unknown diode model parameter"),
    ("model-bad-type", ".model L1 LTRA(R=1)\n", 1, 11, "unsupported model type"),
    ("k-unknown-ref", "L1 a 0 1m\nK1 L1 L9 0.5\n", 2, 7, "unknown element 'L9'"),
    ("k-not-inductor", "L1 a 0 1m\nC1 a 0 1u\nK1 L1 C1 0.5\n", 3, 7, "not an inductor"),
    ("k-missing-value", "L1 a 0 1m\nL2 b 0 1m\nK1 L1 L2\n", 3, 1, "missing value"),
    ("ac-twice", "V1 a 0 AC 1 AC 2\n", 1, 13, "a second AC"),
    ("tran-twice", "V1 a 0 SIN(0 1 1k) PULSE 0 1\n", 1, 20, "a second transient"),
    ("dc-without-value", "V1 a 0 AC 1 DC\n", 1, 13, "DC needs a value"),
    ("sin-too-few", "V1 a 0 SIN(0)\n", 1, 8, "SIN has 1 argument"),
    ("pwl-decreasing", "I1 a 0 PWL(0 0 2 1 1 0)\n", 1, 20, "non-decreasing"),
    ("unknown-waveform", "V1 a 0 TRNOISE(0 1)\n", 1, 8, "unknown waveform"),
    ("probe-unknown-node", "R1 a 0 1\n.probe v(zz)\n", 2, 10, "unknown node or element"),
    ("probe-unknown-element", "R1 a 0 1\n.probe i(R2)\n", 2, 10, "unknown element"),
    ("probe-bad-form", "R1 a 0 1\n.probe p(a)\n", 2, 8, "expected v(...)"),
    ("probe-two-nodes-bad", "R1 a 0 1\n.probe v(a, b)\n", 2, 13, "unknown node 'b'"),
    ("injection", "R1 a 0 {__import__('os').system('true')}\n", 1, 9, "not allowed"),
    ("continued-error", "R1 a\n+ 0\n+   R=1k5\n", 3, 7, "malformed number"),
    ("stray-equals", "R1 a 0 =1\n", 1, 6, "expected node name"),
    ("stray-equals-head", "= R1 a 0 1\n", 1, 1, "unexpected '='"),
    ("node-is-expression", "R1 {a} 0 1\n", 1, 4, "expected node name"),
    ("huge-number", ".param big=1e400\n", 1, 12, "out of range"),
    ("nonfinite-param", ".param a={1e300*1e300}\n", 1, 10, "not a finite"),
]


@pytest.mark.parametrize("text, line, column, fragment",
                         [c[1:] for c in CORPUS], ids=[c[0] for c in CORPUS])
def test_malformed(tmp_path, text, line, column, fragment):
    path = tmp_path / "case.cir"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(NetlistError) as exc:
        load_netlist(path)
    err = exc.value
    assert (err.line, err.column) == (line, column), str(err)
    assert fragment in err.message, str(err)
    assert str(path) in str(err)
    assert err.file == str(path)
    source_line = text.split("\n")[line - 1]
    assert err.location.text == source_line
    assert err.hint and f"hint: {err.hint}" in str(err)     # every malformed netlist says what to do


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 30 and len({c[0] for c in CORPUS}) == len(CORPUS)

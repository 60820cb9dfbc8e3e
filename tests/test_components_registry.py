"""The component registry: one class declares a kind, and every stage reads it."""
import sympy as sp
import pytest

import phsym
from phsym.components import REGISTRY, Component, Contribution, Dissipation, Value, register
from phsym.components.base import P_LINEAR
from phsym.components.component import CHECKS
from phsym.components.table import BEGIN, END, markdown_table
from phsym.errors import NetlistError, StructureError

DOCS = __import__("pathlib").Path(__file__).resolve().parents[1] / "docs" / "components.md"


class Conductance(Component):
    """Conductance ``Y1 a b conductance G=2m``: ``i = G v`` (receiver convention)."""

    kind = "conductance"
    keywords = ("conductance",)
    values = (Value("G", "S", "conductance", main=True, check="positive"),)
    summary = "toy kind defined in a test"

    def contribute(self) -> Contribution:
        v = sp.Symbol("v", real=True)
        d = Dissipation(self.name, self.name, "across", self.value("G") * v, v, True)
        return Contribution(branches=[self.branch("dissipation", P_LINEAR)], dissipations=[d])


@pytest.fixture
def toy():
    register(Conductance)
    try:
        yield Conductance
    finally:
        REGISTRY.remove("conductance")


def test_toy_component_used_from_a_netlist(toy):
    m = phsym.parse("V1 a 0\nY1 a b conductance G=2m\nC1 b 0 1u\n")
    assert [d.element for d in m.structure.dissipative] == ["Y1"]
    assert m.parameters["Y1"] == pytest.approx(2e-3)
    # admittance seen by V1: series G and C, y = current delivered = u / (1/G + 1/(s C))
    s = 2j * 3.141592653589793 * 100.0
    expected = 1.0 / (1.0 / 2e-3 + 1.0 / (s * 1e-6))
    assert complex(m.linearize().transfer(s)[0, 0]) == pytest.approx(expected, rel=1e-12)
    assert all(m.check().values())
    # its declaration drives the parser's messages and the value checks
    with pytest.raises(NetlistError, match="accepted keywords: G="):
        phsym.parse("V1 a 0\nY1 a 0 conductance R=2\n")
    with pytest.raises(StructureError, match="must be positive"):
        phsym.parse("V1 a 0\nY1 a b conductance G=-1\nC1 b 0 1u\n")
    with pytest.raises(StructureError, match="must be positive"):
        m.parameter_values({"Y1": 0.0})
    assert "`conductance`" in markdown_table()


def test_unregistered_kind_is_unknown():
    assert "conductance" not in REGISTRY
    with pytest.raises(NetlistError, match="unknown element type"):
        phsym.parse("V1 a 0\nY1 a 0 conductance G=1\n")


def test_registry_rejects_clashing_declarations(toy):
    class Other(Conductance):
        kind = "other"
    with pytest.raises(StructureError, match="reuses"):
        register(Other)


def test_docs_table_is_generated_from_the_registry():
    text = DOCS.read_text(encoding="utf-8")
    table = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert table == markdown_table(), "run: python -m phsym.components.table docs/components.md"


def test_every_kind_declares_what_the_stages_need():
    for kind, cls in REGISTRY.items():
        assert cls.letters or cls.keywords, kind
        assert cls.summary and cls.__doc__, kind
        assert sum(v.main for v in cls.values) <= 1, kind
        for v in cls.values:
            assert v.doc and (v.check is None or v.check in CHECKS), (kind, v)
        for f in cls.laws:
            assert f.variable.isidentifier() and len(f.key) == 1 and f.key.isupper(), (kind, f)
            assert f.key in ("H", "I", "V") or f.effort, (kind, f)       # other keys name a storage's effort
        assert len({f.key for f in cls.laws}) == len(cls.laws), kind

"""What every multiport device (transistor, tube) shares: optional model
values, series resistances to internal nodes, polarity and its ports."""
from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

import sympy as sp

from ..common.symbolic import product
from .base import EFFORT, P_LINEAR, P_STORE_EFFORT, P_VCR, Contribution, Dissipation, Storage
from .component import Component

__all__ = ["Device"]

_I = sp.Symbol("i", real=True)


class Device(Component):
    """Base of the transistor and tube kinds (not registered itself).

    A device is a set of voltage-controlled dissipative ports (one per
    terminal pair ``(a, b)``, branch ``NAME.ab``) whose laws read every
    port's voltage: :meth:`multiport` adds them, with the branches reversed
    for the p-type polarity (the laws are written for n-type devices in the
    reversed voltages, as SPICE does).
    """

    def given(self, key: str) -> Optional[sp.Expr]:
        """Value ``key`` when given and non-zero at the default parameters, else None.

        Parameters
        ----------
        key : str
            A declared value key.
        """
        val = self.spec.values.get(key)
        if val is None or sp.sympify(val).xreplace(self.defaults) == 0:
            return None
        return sp.sympify(val)

    def opt(self, key: str, default: float) -> sp.Expr:
        """Value ``key``, or ``default`` when it was not given.

        Parameters
        ----------
        key : str
            A declared value key.
        default : float
            The SPICE default.
        """
        val = self.spec.values.get(key)
        return sp.Float(default) if val is None else sp.sympify(val)

    @property
    def n_type(self) -> bool:
        """Whether the device is n-type (NPN, NMOS, NJF: the first polarity
        option), or has no polarity (a tube)."""
        c = next((c for c in self.choices if c.key == "polarity"), None)
        return c is None or self.choice("polarity") == c.options[0]

    def series(self, out: Contribution, keys: Dict[str, str]) -> Dict[str, str]:
        """Series resistances (value key per terminal): linear resistors from
        the terminal to an internal node ``NAME#t`` (branch ``NAME.rt``).

        Parameters
        ----------
        out : Contribution
            Receives the resistors.
        keys : dict of str to str
            Value key of each terminal's resistance (``{"d": "Rd"}``).

        Returns
        -------
        dict of str to str
            The node each terminal's junctions connect to.
        """
        nodes = dict(zip((t[0] for t in self.terminals), self.spec.nodes))
        inner = dict(nodes)
        for tag, key in keys.items():
            r = self.given(key)
            if r is None:
                continue
            inner[tag] = f"{self.name}#{tag}"
            br = self.branch("dissipation", P_LINEAR, nodes=(nodes[tag], inner[tag]), suffix=f".r{tag}")
            out.branches.append(br)
            out.dissipations.append(Dissipation(br.name, br.name, "through", product(r, _I), _I, True, coefficient=r))
        return inner

    def multiport(self, out: Contribution, ports: Sequence[Tuple[str, str, str, sp.Expr]],
                  variables: Sequence[sp.Symbol]) -> None:
        """Add the device's ports: ``(tag, node_a, node_b, law)`` each, with
        ``variables[k]`` the voltage ``v(node_a) - v(node_b)`` of port ``k``
        in every law (reversed nodes for p-type devices).

        Parameters
        ----------
        out : Contribution
            Receives the branches and dissipations.
        ports : sequence of (str, str, str, sympy.Expr)
            Tag (branch suffix), nodes and law (current from ``node_a`` to
            ``node_b`` through the device).
        variables : sequence of sympy.Symbol
            The port voltages the laws are written in; a port whose two
            nodes are one node is left out and its voltage is 0 in the others.
        """
        # a port with both nodes on one node (a diode-connected transistor's b-c) has voltage 0:
        # the other laws read 0 there and the port, which carries no current, is left out
        shorted = {variables[k]: 0 for k, (_tag, a, b, _law) in enumerate(ports) if a == b}
        names = [f"{self.name}.{tag}" for tag, *_ in ports]
        for k, (tag, a, b, law) in enumerate(ports):
            if a == b:
                continue
            law = law.xreplace(shorted) if shorted else law
            nodes = (a, b) if self.n_type else (b, a)
            br = self.branch("dissipation", P_VCR, nodes=nodes, suffix=f".{tag}")
            couples = tuple((variables[m], names[m]) for m in range(len(ports))
                            if m != k and law.has(variables[m]))
            out.branches.append(br)
            out.dissipations.append(Dissipation(br.name, br.name, "across", law, variables[k], False,
                                                couples=couples))

    def capacitor(self, out: Contribution, tag: str, a: str, b: str, capacitance: sp.Expr) -> None:
        """A linear capacitor ``a -> b`` of the device (branch and element
        ``NAME.tag``, state ``q_NAME.tag``); nothing when ``a == b``.

        Parameters
        ----------
        out : Contribution
            Receives the branch and the storage.
        tag : str
            Branch suffix (``cgs``).
        a, b : str
            Nodes.
        capacitance : sympy.Expr
            Capacitance [F].
        """
        if a == b:
            return
        br = self.branch("storage", P_STORE_EFFORT, nodes=(a, b), suffix=f".{tag}")
        q = sp.Symbol(f"q_{br.name}", real=True)
        out.branches.append(br)
        out.storages.append(Storage((br.name,), (q,), q ** 2 / (2 * capacitance), (br.name,), (EFFORT,), (None,),
                                    quadratic=True))

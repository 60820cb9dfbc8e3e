"""Programmatic example netlists (used by tests and benchmarks)."""
from __future__ import annotations

__all__ = ["chain_netlist"]


def chain_netlist(n: int, m: float = 4.0, k: float = 4.0, c: float = 1.0, forces: int = 2) -> str:
    """Mass-spring-damper chain of ``n`` cells (``2 n`` states).

    Masses ``m`` to ground, springs ``k`` between neighbours and from the last
    mass to the wall, dampers ``c`` to ground, force sources on the first
    ``forces`` masses (mobility analogy: node = velocity).
    """
    lines = [f"* {n}-cell mass-spring-damper chain", f".title msd chain {n}"]
    for i in range(1, n + 1):
        lines.append(f"M{i} v{i} 0 mass m={m!r}")
        lines.append(f"B{i} v{i} 0 damper c={c!r}")
        nxt = f"v{i + 1}" if i < n else "0"
        lines.append(f"K{i} v{i} {nxt} spring k={k!r}")
    for i in range(1, min(forces, n) + 1):
        lines.append(f"F{i} v{i} 0 force")
    lines.append(".end")
    return "\n".join(lines) + "\n"

"""Steady-state airflow network solver: a globalised Newton method on the space of conserving flows.

The airflows ``q`` of a ventilation network at steady state are the stationary point of the
network's *co-content* (energy) over the flows that conserve mass at every node:

.. math::

    \\min_q \\; \\Phi(q) = \\sum_e \\Big[ \\frac{R_e |q_e|^3}{3}
        - \\big(a_{0,e} q_e + \\frac{a_{1,e} q_e^2}{2} + \\frac{a_{2,e} q_e^3}{3}\\big) - N_e q_e \\Big]
    \\quad \\text{s.t.} \\quad A q = b,

whose optimality conditions are Kirchhoff's laws: conservation ``A q = b`` and, with the node
pressures ``p`` as Lagrange multipliers, the branch law (Atkinson's square law with fan and
natural ventilation pressure) ``p_from − p_to + p_fan(q) + N = R·q·|q|`` on every branch.

Each iteration solves the Newton (KKT) system with the branch stiffnesses
``d_e = 2R|q| − a1 − 2·a2·q`` replaced by ``max(|d_e|, floor)``, so the step is always a
descent direction of ``Φ`` even where a fan works in the negative-stiffness (unstable) part of
its curve and where an airway carries no air; an Armijo backtracking line search on ``Φ`` makes
the method globally convergent. Near a stable solution the step is the exact Newton step and
convergence is quadratic. The linear algebra is one sparse symmetric positive definite solve
of node size per iteration (SuperLU), so a network of a thousand airways solves in milliseconds.

Convergence is measured by the loop law itself: node pressures are integrated along a spanning
tree of least-resistance branches and the residual of every chord (one per independent loop)
must be below ``tol_pa``, and the next Newton correction of any flow below ``tol_flow_m3_s``.

References
----------
.. [1] J. J. Atkinson, "On the theory of the ventilation of mines", Trans. North of England
   Inst. Min. Eng. 3 (1854) — the square law ``p = R·Q²``.
.. [2] M. J. McPherson, *Subsurface Ventilation Engineering*, 2nd ed. (MVS, 2009), ch. 7
   "Ventilation network analysis" — Kirchhoff's laws for ventilation networks, Hardy Cross.
.. [3] J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed. (Springer, 2006),
   ch. 3 (line search, modified Newton) and ch. 16 (equality-constrained quadratic programs).
.. [4] Jia et al., mine-ventilation-network-benchmark,
   https://github.com/changtian0509/mine-ventilation-network-benchmark (CC BY 4.0) — the
   boundary model and the test networks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ventapp.domain.network._system import EXIT, System, build_system, laminar_start, max_flow_start
from ventapp.domain.network.model import Network, NetworkError

StartName = Literal["max-flow", "laminar"]

_ARMIJO = 1e-4
_MIN_STEP = 1e-20
_DIVERGED_FACTOR = 1e6
_FLOW_FLOOR = 1e-7  # relative to the network's flow scale


@dataclass(frozen=True)
class FanDuty:
    """A fan's duty point in the solved network.

    Attributes
    ----------
    edge_id : str
        The fan's airway.
    flow_m3_s : float
        Airflow through the fan (negative: reversed against its direction), m³/s.
    fan_pressure_pa : float
        Fan pressure ``a0 + a1·q + a2·q²`` at that flow, Pa.
    slope_pa_s_m3 : float
        ``dp_fan/dq`` at that flow, Pa·s/m³.
    unstable : bool
        True when the slope is positive: the duty point lies in the rising (stall) part of the curve.
    """

    edge_id: str
    flow_m3_s: float
    fan_pressure_pa: float
    slope_pa_s_m3: float
    unstable: bool


@dataclass(frozen=True)
class NetworkSolution:
    """Result of :func:`solve_network`, in the spirit of ``scipy.optimize.OptimizeResult``.

    A solution with ``converged=False`` carries the last iterate for diagnosis only: its
    numbers are not a steady state.

    Attributes
    ----------
    converged : bool
        Whether every loop residual fell below the tolerance.
    iterations : int
        Newton steps taken.
    max_residual_pa : float
        Largest loop-law residual at the returned flows, Pa.
    message : str
        Why the iteration stopped.
    flows_m3_s : dict of str to float
        Airflow per airway (negative = against the airway's from→to orientation), m³/s.
    pressure_drops_pa : dict of str to float
        ``p_from − p_to`` per airway, Pa (for a fan airway the fan's rise is included).
    node_pressures_pa : dict of str to float
        Pressure per node relative to the atmosphere at the intakes, Pa.
    fans : tuple of FanDuty
        Duty point of every fan.
    reversed_edges : tuple of str
        Airways whose flow runs against their orientation.
    total_flow_m3_s : float or None
        The fixed total flow, if one was given.
    boundary_pressure_pa : float or None
        Pressure that must be supplied across the fixed-total-flow boundary (the main fan's
        duty pressure for a network drawn without its main fan), Pa; None without a total flow.
    start : str
        The starting point used ("max-flow" or "laminar").
    """

    converged: bool
    iterations: int
    max_residual_pa: float
    message: str
    flows_m3_s: dict[str, float]
    pressure_drops_pa: dict[str, float]
    node_pressures_pa: dict[str, float]
    fans: tuple[FanDuty, ...] = ()
    reversed_edges: tuple[str, ...] = ()
    total_flow_m3_s: float | None = None
    boundary_pressure_pa: float | None = None
    start: str = "max-flow"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of the command line (``flows``, ``pressure_drops``, ``node_pressures``...)."""
        return {
            "converged": self.converged,
            "iterations": self.iterations,
            "max_residual_pa": self.max_residual_pa,
            "message": self.message,
            "total_flow_m3_s": self.total_flow_m3_s,
            "boundary_pressure_pa": self.boundary_pressure_pa,
            "flows": dict(self.flows_m3_s),
            "pressure_drops": dict(self.pressure_drops_pa),
            "node_pressures": dict(self.node_pressures_pa),
            "reversed": list(self.reversed_edges),
            "fans": [
                {
                    "edge_id": f.edge_id,
                    "q_m3_s": f.flow_m3_s,
                    "p_pa": f.fan_pressure_pa,
                    "slope_pa_s_m3": f.slope_pa_s_m3,
                    "unstable": f.unstable,
                }
                for f in self.fans
            ],
        }


class _Laws:
    """Branch law, stiffness and energy of the free branches of a system (vectorised)."""

    def __init__(self, system: System) -> None:
        self.r, self.a0, self.a1, self.a2, self.nvp = (
            system.resistance,
            system.a0,
            system.a1,
            system.a2,
            system.nvp,
        )

    def law(self, q: np.ndarray) -> np.ndarray:
        """``R·q·|q| − p_fan(q) − N``: pressure the nodes must supply to each branch, Pa."""
        return self.r * q * np.abs(q) - (self.a0 + self.a1 * q + self.a2 * q * q) - self.nvp

    def stiffness(self, q: np.ndarray) -> np.ndarray:
        """Derivative of :meth:`law`, Pa·s/m³."""
        return 2.0 * self.r * np.abs(q) - self.a1 - 2.0 * self.a2 * q

    def merit_change(self, q: np.ndarray, step: np.ndarray, drop_pa: np.ndarray) -> tuple[float, float]:
        """Change of the Lagrangian ``Φ(q) − Σ Δp·q`` along ``step`` (W), and its rounding scale.

        ``drop_pa`` are the fixed node-pressure differences across the branches. On flows that
        conserve mass the Lagrangian differs from Φ by a constant, but it ignores the rounding
        error of ``A·step = 0``, which near the solution would swamp Φ's own change. The change
        is summed from per-branch differences (``b³ − a³ = (b − a)(a² + ab + b²)``), never as a
        difference of two large energies.
        """
        q1 = q + step
        cube = step * (q * q + q * q1 + q1 * q1)
        square = step * (q + q1)
        same_sign = q * q1 >= 0
        abs_cube = np.where(same_sign, np.sign(q + q1) * cube, np.abs(q1) ** 3 - np.abs(q) ** 3)
        terms = (
            self.r * abs_cube / 3.0
            - (self.a0 * step + self.a1 * square / 2.0 + self.a2 * cube / 3.0)
            - (self.nvp + drop_pa) * step
        )
        return float(np.sum(terms)), float(np.sum(np.abs(terms)))


def _residual(system: System, laws: _Laws, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Loop-law residual per free branch (zero on the tree, Pa) and the tree's node pressures (Pa)."""
    law = laws.law(q)
    pressures = system.tree_pressures(law)
    ft, fh = system.tail[system.free], system.head[system.free]
    return law - (pressures[ft] - pressures[fh]), pressures


def _largest(values: np.ndarray) -> float:
    return float(np.max(np.abs(values))) if values.size else 0.0


def _newton_step(system: System, laws: _Laws, q: np.ndarray, flow_floor_m3_s: float) -> np.ndarray:
    """A descent direction of Φ that keeps conservation (``A·step = 0``).

    From the KKT system ``[D Aᵀ; A 0]`` through its node-size Schur complement ``A D⁻¹ Aᵀ``,
    with ``D`` the branch stiffnesses made positive.
    """
    stiffness = np.abs(laws.stiffness(q))
    # A branch without stiffness (no air yet, or none at the solution; a fan at the top of its
    # curve) is given that of its airway at a small flow, and never less than 1e-10 of the
    # stiffest branch: the condition of the system stays bounded, the line search cuts back a
    # step that is too long, and an airway that carries no air at the solution still converges.
    floor = np.maximum(2.0 * laws.r * flow_floor_m3_s, max(1e-10 * float(stiffness.max(initial=0.0)), 1e-12))
    inverse = 1.0 / np.maximum(stiffness, floor)
    a = system.incidence
    law = laws.law(q)
    if a.shape[0] == 0:
        return -inverse * law
    import scipy.sparse as sp  # at the first solve, like _system
    import scipy.sparse.linalg as spla

    lam = spla.splu((a @ sp.diags(inverse) @ a.T).tocsc()).solve(a @ (inverse * law))
    return system.conserve(inverse * (a.T @ lam - law), np.zeros(system.n_nodes))


def _start(system: System, start: StartName) -> tuple[np.ndarray, str]:
    if start == "max-flow":
        q = max_flow_start(system)
        if q is not None:
            return q, "max-flow"
    return laminar_start(system), "laminar"


def _iterate(
    system: System, q: np.ndarray, tol_pa: float, tol_flow_m3_s: float, max_iter: int
) -> tuple[np.ndarray, int, bool, str]:
    laws = _Laws(system)
    scale = max(float(np.max(np.abs(system.supply), initial=0.0)), float(np.max(np.abs(q), initial=0.0)), 1.0)
    for iteration in range(max_iter + 1):
        q = system.conserve(q)
        loop, pressures = _residual(system, laws, q)
        residual = _largest(loop)
        step = _newton_step(system, laws, q, _FLOW_FLOOR * scale)
        # Both tests: a loop of tiny resistance meets tol_pa with its flow still off, and the
        # flow of an airway that carries no air at the solution converges only linearly.
        if residual <= tol_pa and _largest(step) <= tol_flow_m3_s:
            return q, iteration, True, f"converged: largest loop residual {residual:.3g} Pa ≤ {tol_pa:g} Pa"
        if iteration == max_iter:
            break
        drop = pressures[system.tail[system.free]] - pressures[system.head[system.free]]
        slope = min(float(np.dot(loop, step)), 0.0)
        alpha = 1.0
        while True:  # Armijo on the Lagrangian, with room for the rounding of the change itself
            change, scale_w = laws.merit_change(q, alpha * step, drop)
            if change <= _ARMIJO * alpha * slope + 1e-12 * scale_w:
                break
            alpha *= 0.5
            if alpha < _MIN_STEP:
                if residual <= tol_pa:  # the flows are right to rounding: no step can improve them
                    return (
                        q,
                        iteration,
                        True,
                        f"converged: largest loop residual {residual:.3g} Pa ≤ {tol_pa:g} Pa",
                    )
                return (
                    q,
                    iteration,
                    False,
                    "stopped: the line search found no decrease (no stable steady state nearby)",
                )
        q = q + alpha * step
        if not np.all(np.isfinite(q)) or float(np.max(np.abs(q))) > _DIVERGED_FACTOR * scale:
            return (
                q,
                iteration + 1,
                False,
                "diverged: flows grew without bound (check fan curves and resistances)",
            )
    return (
        q,
        max_iter,
        False,
        f"not converged after {max_iter} iterations (largest loop residual {residual:.3g} Pa)",
    )


def _driven(network: Network) -> bool:
    """Whether anything in the network moves air: a fan, a natural ventilation pressure, a fixed quantity."""
    return any(a.fan is not None or a.nvp_pa != 0 or bool(a.fixed_flow_m3_s) for a in network.airways)


def solve_network(
    network: Network,
    total_flow_m3_s: float | None = None,
    *,
    tol_pa: float = 1e-6,
    tol_flow_m3_s: float = 1e-8,
    max_iter: int = 100,
    start: StartName = "max-flow",
) -> NetworkSolution:
    """Solve the steady-state airflow distribution of a ventilation network.

    Branch law (Atkinson's square law with fan and natural ventilation pressure)::

        p_from − p_to + (a0 + a1·q + a2·q²) + N = (R + R_reg)·q·|q|

    and conservation of volume flow at every node. Intakes (nodes with no incoming airway)
    share atmospheric pressure 0 Pa; exits (no outgoing airway) are joined into one node and,
    when ``total_flow_m3_s`` is given, that flow is fixed from the exit back to the atmosphere
    (otherwise the exits are at atmospheric pressure and fans drive the flow).

    Parameters
    ----------
    network : Network
        The airways (validated on construction).
    total_flow_m3_s : float, optional
        Fixed total flow ``Q`` through the network, m³/s.
    tol_pa : float
        Largest allowed loop-law residual, Pa.
    tol_flow_m3_s : float
        Largest allowed flow correction of the next Newton step, m³/s (waived when rounding
        stops any further decrease of Φ and the residual is already below ``tol_pa``).
    max_iter : int
        Newton steps before giving up.
    start : {"max-flow", "laminar"}
        Starting flows: the max-flow allocation along the airways' orientation (the benchmark's
        cold start; falls back to laminar when infeasible) or the linear-law distribution.

    Returns
    -------
    NetworkSolution
        Flows, pressure drops, node pressures, fan duty points and convergence information.

    Raises
    ------
    NetworkError
        The boundary model cannot be applied (``no_path``, ``disconnected``), or nothing drives
        the air (``no_driver``: no ``total_flow_m3_s``, no fan, no natural ventilation pressure,
        no fixed quantity — the solution would be zero flow everywhere).

    References
    ----------
    McPherson, *Subsurface Ventilation Engineering*, 2nd ed. (2009), ch. 7; Nocedal & Wright,
    *Numerical Optimization*, 2nd ed. (2006), ch. 3 and 16; the module docstring.
    """
    if total_flow_m3_s is None and not _driven(network):
        raise NetworkError(
            "no_driver",
            "Nothing drives the air: the network has no fan, no natural ventilation pressure and no "
            "fixed-quantity airway, and no total airflow was given, so every flow would be 0 m³/s. "
            "Give the total airflow (m³/s) or the main fan's curve (is_fan with a0_Pa, a1_Pa_s_m3, a2_Pa_s2_m6).",
        )
    system = build_system(network, total_flow_m3_s)
    q0, used = _start(system, start)
    q_free, iterations, converged, message = _iterate(system, q0, tol_pa, tol_flow_m3_s, max_iter)
    loop, pressures = _residual(system, _Laws(system), q_free)
    residual = _largest(loop)

    flows = system.fixed_flow.copy()
    flows[system.free] = q_free
    airways = network.airways
    drops = pressures[system.tail] - pressures[system.head]
    fans = tuple(
        FanDuty(
            edge_id=a.edge_id,
            flow_m3_s=float(q),
            fan_pressure_pa=a.fan.pressure_pa(float(q)),
            slope_pa_s_m3=a.fan.slope_pa_s_m3(float(q)),
            unstable=a.fan.slope_pa_s_m3(float(q)) > 0,
        )
        for a, q in zip(airways, flows, strict=True)
        if a.fan is not None
    )
    return NetworkSolution(
        converged=converged,
        iterations=iterations,
        max_residual_pa=residual,
        message=message,
        flows_m3_s={a.edge_id: float(q) for a, q in zip(airways, flows, strict=True)},
        pressure_drops_pa={a.edge_id: float(h) for a, h in zip(airways, drops, strict=True)},
        node_pressures_pa={node: float(pressures[i]) for node, i in system.node_index.items()},
        fans=fans,
        reversed_edges=tuple(a.edge_id for a, q in zip(airways, flows, strict=True) if q < 0),
        total_flow_m3_s=None if total_flow_m3_s is None else float(total_flow_m3_s),
        boundary_pressure_pa=None if total_flow_m3_s is None else float(-pressures[EXIT]),
        start=used,
    )

"""Typed inputs of the airflow network solver: airways, fan curves and the network.

The boundary model follows the benchmark of Jia et al. (``changtian0509/mine-ventilation-
network-benchmark``, CC BY 4.0): Atkinson's square law on every airway, fans with a quadratic
characteristic in their from→to direction, intakes joined at atmospheric pressure, exits joined
into one node, and an optional fixed total flow from the exit back to the atmosphere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

ErrorCode = Literal[
    "unreadable",
    "not_found",
    "empty",
    "missing_column",
    "no_network_sheet",
    "bad_value",
    "unknown_node",
    "negative_resistance",
    "duplicate_edge",
    "self_loop",
    "no_path",
    "disconnected",
    "no_driver",
]
"""Why a network file or network was refused; shown to the user with the message."""


class NetworkError(ValueError):
    """A network (or the file it came from) cannot be solved as given.

    Attributes
    ----------
    code : ErrorCode
        Machine-readable reason, e.g. ``"missing_column"``.
    fields : dict of str to tuple of str
        What the person's sentence names (the catalogue's placeholders, each a list the UI joins
        in its language), e.g. ``{"columns": ("r_N_s2_m8",)}`` or ``{"row": ("7",), "column":
        ("r_N_s2_m8",), "value": ("abc",)}``; the English message says the same for the model.
        Values are as the file has them (ids may hold any character); numbers are formatted
        with ``:g`` and the sentence gives their unit.
    variant : str
        Which sentence of the code, when one code covers several cases (``bad_value``: an empty
        cell, a word, a non-positive cross-section …): the catalogue's
        ``solver.refused.<code>.<variant>``; "" for ``solver.refused.<code>``.
    """

    def __init__(
        self, code: ErrorCode, message: str, *, variant: str = "", **fields: tuple[str, ...]
    ) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.variant = variant
        self.fields: dict[str, tuple[str, ...]] = fields


@dataclass(frozen=True)
class FanCurve:
    """Quadratic fan characteristic acting in the airway's from→to direction.

    ``p_fan(q) = a0 + a1·q + a2·q²`` with ``q`` in m³/s and ``p_fan`` in Pa.

    Attributes
    ----------
    a0_pa : float
        Shut-off pressure, Pa.
    a1_pa_s_m3 : float
        Linear coefficient, Pa·s/m³.
    a2_pa_s2_m6 : float
        Quadratic coefficient, Pa·s²/m⁶ (negative for a real fan).
    """

    a0_pa: float
    a1_pa_s_m3: float = 0.0
    a2_pa_s2_m6: float = 0.0

    def pressure_pa(self, flow_m3_s: float) -> float:
        """Fan pressure ``a0 + a1·q + a2·q²`` at ``flow_m3_s``, Pa."""
        q = flow_m3_s
        return self.a0_pa + self.a1_pa_s_m3 * q + self.a2_pa_s2_m6 * q * q

    def slope_pa_s_m3(self, flow_m3_s: float) -> float:
        """``dp_fan/dq = a1 + 2·a2·q``, Pa·s/m³; positive means the unstable part of the curve."""
        return self.a1_pa_s_m3 + 2.0 * self.a2_pa_s2_m6 * flow_m3_s


@dataclass(frozen=True)
class Airway:
    """One branch of the network (an airway, possibly with a fan, regulator or fixed quantity).

    Attributes
    ----------
    edge_id : str
        Unique id of the branch.
    from_node, to_node : str
        Node ids; the orientation defines the sign of the flow and of the fan pressure.
    resistance_ns2_m8 : float
        Atkinson resistance ``R`` of the airway, N·s²/m⁸ (≥ 0).
    regulator_ns2_m8 : float
        Added regulator resistance, N·s²/m⁸ (≥ 0); the branch law uses the sum.
    fan : FanCurve or None
        Fan in the branch, if any.
    nvp_pa : float
        Natural ventilation pressure acting from→to, Pa.
    fixed_flow_m3_s : float or None
        Fixed airflow (from→to) of a fixed-quantity branch; its pressure drop is then free.
    name : str
        Human-readable name, e.g. "+730m轨道运输大巷".
    area_m2 : float or None
        Cross-section, m² (only for velocity checks; the solver does not need it).
    airway_type : str
        Key of the velocity table (e.g. ``"coal_face"``), or "" when unknown.
    """

    edge_id: str
    from_node: str
    to_node: str
    resistance_ns2_m8: float
    regulator_ns2_m8: float = 0.0
    fan: FanCurve | None = None
    nvp_pa: float = 0.0
    fixed_flow_m3_s: float | None = None
    name: str = ""
    area_m2: float | None = None
    airway_type: str = ""

    @property
    def total_resistance_ns2_m8(self) -> float:
        """Airway plus regulator resistance, N·s²/m⁸."""
        return self.resistance_ns2_m8 + self.regulator_ns2_m8


def _check_airway(airway: Airway) -> None:
    label = f"airway {airway.edge_id!r}"
    named = {"airway": (airway.edge_id,)}
    for node in (airway.from_node, airway.to_node):
        if not str(node).strip():
            raise NetworkError(
                "unknown_node",
                f"{label} has a blank node id; every airway needs 'from' and 'to'.",
                variant="blank",
                **named,
            )
    if airway.from_node == airway.to_node:
        raise NetworkError(
            "self_loop",
            f"{label} starts and ends at node {airway.from_node!r}; an airway must join two nodes.",
            node=(airway.from_node,),
            **named,
        )
    # (English word, the file's column): the person reads the column their file has.
    values = {
        ("resistance", "r_N_s2_m8"): airway.resistance_ns2_m8,
        ("regulator resistance", "adjust_r"): airway.regulator_ns2_m8,
        ("natural ventilation pressure", "nvp_Pa"): airway.nvp_pa,
    }
    if airway.fan is not None:
        values[("a0", "a0_Pa")] = airway.fan.a0_pa
        values[("a1", "a1_Pa_s_m3")] = airway.fan.a1_pa_s_m3
        values[("a2", "a2_Pa_s2_m6")] = airway.fan.a2_pa_s2_m6
    if airway.fixed_flow_m3_s is not None:
        values[("fixed flow", "fixed_q_m3_s")] = airway.fixed_flow_m3_s
    if airway.area_m2 is not None:
        values[("cross-section", "area_m2")] = airway.area_m2
        if airway.area_m2 <= 0:
            raise NetworkError(
                "bad_value",
                f"{label}: the cross-section must be positive.",
                variant="area",
                value=(f"{airway.area_m2:g}",),
                **named,
            )
    for (what, column), value in values.items():
        if not math.isfinite(value):
            raise NetworkError(
                "bad_value",
                f"{label}: the {what} is not a finite number.",
                variant="airway_not_finite",
                column=(column,),
                value=(f"{value:g}",),
                **named,
            )
    if airway.resistance_ns2_m8 < 0 or airway.regulator_ns2_m8 < 0:
        raise NetworkError(
            "negative_resistance",
            f"{label} has a negative resistance ({airway.resistance_ns2_m8:g} + "
            f"{airway.regulator_ns2_m8:g} N·s²/m⁸); resistances must be zero or positive.",
            resistance=(f"{airway.resistance_ns2_m8:g}",),
            regulator=(f"{airway.regulator_ns2_m8:g}",),
            **named,
        )


@dataclass(frozen=True)
class Network:
    """A ventilation network: an ordered tuple of airways.

    Validation happens on construction, so a ``Network`` that exists can be solved.

    Raises
    ------
    NetworkError
        ``empty`` (no airway), ``duplicate_edge``, ``unknown_node`` (blank id), ``self_loop``,
        ``bad_value`` (NaN or infinity) or ``negative_resistance``.
    """

    airways: tuple[Airway, ...]

    def __post_init__(self) -> None:
        if not self.airways:
            raise NetworkError("empty", "The network has no airways.")
        seen: set[str] = set()
        for airway in self.airways:
            if airway.edge_id in seen:
                raise NetworkError(
                    "duplicate_edge",
                    f"Airway id {airway.edge_id!r} appears more than once.",
                    airway=(airway.edge_id,),
                )
            seen.add(airway.edge_id)
            _check_airway(airway)

    @property
    def nodes(self) -> list[str]:
        """Node ids in order of first appearance."""
        ordered: dict[str, None] = {}
        for airway in self.airways:
            ordered.setdefault(airway.from_node)
            ordered.setdefault(airway.to_node)
        return list(ordered)

    @property
    def intakes(self) -> list[str]:
        """Nodes with no incoming airway: surface intakes, all at atmospheric pressure."""
        heads = {a.to_node for a in self.airways}
        return [n for n in self.nodes if n not in heads]

    @property
    def exits(self) -> list[str]:
        """Nodes with no outgoing airway: tops of return shafts, joined into one exit node."""
        tails = {a.from_node for a in self.airways}
        return [n for n in self.nodes if n not in tails]

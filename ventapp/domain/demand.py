"""Airflow demand, natural ventilation pressure and the air-velocity check, each with its rule.

References
----------
.. [McP] M. J. McPherson, *Subsurface Ventilation Engineering*, 2nd ed. (2009), ch. 8 "Natural
   ventilation" (NVP from the densities of the air columns) and ch. 9 "Ventilation planning"
   (air quantities for people, gas dilution and diesel equipment).
.. [KB] The project's knowledge base, ``ventapp/tools/kb/air-requirements.md``: Chinese practice
   ``Q = 100·q_CH4·k`` for a working face's methane, and ``Q ≥ v_min·A``.
.. [Reg] The rows of :mod:`ventapp.domain.regulations` (《煤矿安全规程》 first), with their status.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ventapp.domain.regulations import AIR_PER_PERSON, DIESEL_AIR_PER_KW, VELOCITY_LIMITS, RegulationRow

GRAVITY_M_S2 = 9.81


def natural_ventilation_pressure_pa(
    depth_m: float,
    mean_density_downcast_kg_m3: float,
    mean_density_upcast_kg_m3: float,
    gravity_m_s2: float = GRAVITY_M_S2,
) -> float:
    """Natural ventilation pressure of two connected air columns.

    .. math:: \\mathrm{NVP} = g \\, Z \\, (\\bar\\rho_{down} - \\bar\\rho_{up})

    Positive when the denser (colder) column is the downcast, i.e. natural ventilation helps
    the intended direction.

    Parameters
    ----------
    depth_m : float
        Vertical height ``Z`` of the columns, m.
    mean_density_downcast_kg_m3, mean_density_upcast_kg_m3 : float
        Mean air densities of the downcast and upcast columns, kg/m³.
    gravity_m_s2 : float
        ``g``, m/s².

    References
    ----------
    [McP] ch. 8.
    """
    if depth_m < 0 or mean_density_downcast_kg_m3 <= 0 or mean_density_upcast_kg_m3 <= 0:
        raise ValueError("depth must be ≥ 0 and densities positive")
    return gravity_m_s2 * depth_m * (mean_density_downcast_kg_m3 - mean_density_upcast_kg_m3)


@dataclass(frozen=True)
class Requirement:
    """One airflow requirement and the rule behind it."""

    basis: str
    flow_m3_s: float
    formula: str
    rule: RegulationRow | None
    note: str = ""


def air_for_people(people: int, rule: RegulationRow = AIR_PER_PERSON) -> Requirement:
    """``Q = N·q_person`` with ``q_person`` from the regulation row (m³/min per person)."""
    if people < 0:
        raise ValueError("the number of people must not be negative")
    per_person = float(rule.minimum or 0.0)
    return Requirement(
        "people", people * per_person / 60.0, f"Q = {people} × {per_person:g} m³/min / 60", rule
    )


def air_for_gas(
    emission_m3_min: float, max_fraction: float, intake_fraction: float = 0.0, *, unevenness_k: float = 1.0
) -> Requirement:
    """Dilution of a gas make: ``Q = k·G / (c_max − c_in)`` (fractions by volume).

    ``G`` is the mean emission (m³/min of pure gas) and ``k`` the emission-unevenness coefficient
    [瓦斯涌出不均匀系数], the ratio of the peak to the mean emission. ``k = 1`` is the plain mass
    balance of a steady source; a working face's methane is not steady, and Chinese practice sizes
    it as ``Q = 100·q_CH4·k`` (1% return limit, methane-free intake) with ``k`` measured or taken
    from AQ 1056-2008 (roughly 1.2–2.0).

    Raises
    ------
    ValueError
        A negative emission, ``k < 1`` or not finite, or concentrations outside
        ``0 ≤ c_in < c_max ≤ 1``.

    References
    ----------
    [McP] ch. 9; a mass balance of the gas in the airway. [KB] ``air-requirements``:
    "Q = 100 · q_CH4 · k"; AQ 1056-2008 煤矿通风能力核定标准 (k ranges).
    """
    if emission_m3_min < 0:
        raise ValueError("the gas emission must not be negative")
    if not (math.isfinite(unevenness_k) and unevenness_k >= 1):
        raise ValueError(
            f"the emission-unevenness coefficient k must be ≥ 1 (peak / mean), got {unevenness_k}"
        )
    if not 0 <= intake_fraction < max_fraction <= 1:
        raise ValueError(
            "need 0 ≤ intake concentration < allowed concentration ≤ 1 (fractions, e.g. 0.01 for 1%)"
        )
    flow = unevenness_k * emission_m3_min / (max_fraction - intake_fraction) / 60.0
    formula = f"Q = {unevenness_k:g} × {emission_m3_min:g} / ({max_fraction:g} − {intake_fraction:g}) / 60"
    return Requirement("gas dilution", flow, formula, None)


def air_for_min_velocity(area_m2: float, airway_type: str) -> Requirement:
    """``Q = v_min·A``: the least flow that keeps the mean velocity at the airway type's minimum.

    A type whose row has no minimum (shafts, main airways) needs no flow on this count (0 m³/s,
    with a note).

    Raises
    ------
    ValueError
        A non-positive area or an unknown airway type (see :func:`check_velocity`).

    References
    ----------
    [Reg] :data:`~ventapp.domain.regulations.VELOCITY_LIMITS`; [KB] ``air-requirements``, "Minimum and
    maximum velocity": Q ≥ v_min·A.
    """
    rule = _velocity_rule(area_m2, airway_type)
    v_min = rule.minimum or 0.0
    note = "" if rule.minimum is not None else "this airway type has no minimum velocity"
    return Requirement("minimum velocity", v_min * area_m2, f"Q = {v_min:g} m/s × {area_m2:g} m²", rule, note)


def air_for_diesel(rated_power_kw: float, rule: RegulationRow = DIESEL_AIR_PER_KW) -> Requirement:
    """``Q = P·q_kW`` with ``q_kW`` from the regulation row (m³/min per kW)."""
    if rated_power_kw < 0:
        raise ValueError("the diesel power must not be negative")
    per_kw = float(rule.minimum or 0.0)
    return Requirement(
        "diesel", rated_power_kw * per_kw / 60.0, f"Q = {rated_power_kw:g} kW × {per_kw:g} m³/min / 60", rule
    )


def air_for_output(output_t_per_day: float, air_per_tonne_m3_min: float) -> Requirement:
    """``Q = T·q_t`` for a rate per tonne of daily output that the caller supplies (no regulation row)."""
    if output_t_per_day < 0 or air_per_tonne_m3_min < 0:
        raise ValueError("output and rate must not be negative")
    return Requirement(
        "output",
        output_t_per_day * air_per_tonne_m3_min / 60.0,
        f"Q = {output_t_per_day:g} t/d × {air_per_tonne_m3_min:g} m³/min per t/d / 60",
        None,
        "rate per tonne supplied by the user; no regulation row",
    )


@dataclass(frozen=True)
class VelocityCheck:
    """Mean air velocity against the permitted range of an airway type."""

    velocity_m_s: float
    minimum_m_s: float | None
    maximum_m_s: float | None
    within_limits: bool
    verdict: str
    rule: RegulationRow


def _velocity_rule(area_m2: float, airway_type: str) -> RegulationRow:
    if not (math.isfinite(area_m2) and area_m2 > 0):
        raise ValueError("the cross-section must be positive")
    rule = VELOCITY_LIMITS.get(airway_type)
    if rule is None:
        raise ValueError(f"unknown airway type {airway_type!r}; known: {', '.join(VELOCITY_LIMITS)}")
    return rule


def check_velocity(flow_m3_s: float, area_m2: float, airway_type: str) -> VelocityCheck:
    """``v = Q/A`` checked against :data:`~ventapp.domain.regulations.VELOCITY_LIMITS`.

    Raises
    ------
    ValueError
        Unknown airway type (the message lists the known ones) or a non-positive area.
    """
    rule = _velocity_rule(area_m2, airway_type)
    v = abs(flow_m3_s) / area_m2
    low, high = rule.minimum, rule.maximum
    if low is not None and v < low:
        verdict = f"too slow: {v:.2f} m/s < {low:g} m/s"
    elif high is not None and v > high:
        verdict = f"too fast: {v:.2f} m/s > {high:g} m/s"
    else:
        verdict = f"within limits: {v:.2f} m/s"
    return VelocityCheck(v, low, high, verdict.startswith("within"), verdict, rule)

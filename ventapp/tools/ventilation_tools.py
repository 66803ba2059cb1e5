"""Engineering calculation tools: each computes with :mod:`ventapp.domain` and cites its formula.

Flows may be given as a number in m³/s or as text with a unit ("1200 m³/min", "40000 cfm");
pressures as Pa or text ("1.5 inH2O"). Every result carries its sources (invariant 4), and
every regulation value carries the row's verification status. A knowledge-base source is titled
as its document in the run's language (:func:`~ventapp.tools.knowledge.kb_source`); its snippet and a
rule's citation and status are worded in that language too (:mod:`ventapp.tools.citations`).

A tool refuses bad input as ``[code] sentence (detail)`` (as the network solver does): the
sentence is the catalogue's ``tool.refused.<code>`` in the run's language, for the person's tool
card; the detail is English, for the model, and names the argument to fix.
"""

from __future__ import annotations

from ventapp.domain import airways, demand, fans
from ventapp.domain.regulations import METHANE_FACE_RETURN, VELOCITY_LIMITS, RegulationRow
from ventapp.domain.units import to_si
from ventapp.tools.citations import cite, friction_source, rule_citation, rule_status
from ventapp.tools.knowledge import kb_source
from ventapp.tools.refused import Refused, refusing
from ventapp.tools.registry import register, sourced

_GROUP = "通风计算"


def _velocity_type(airway_type: str) -> str:
    if airway_type not in VELOCITY_LIMITS:
        raise Refused(
            "unknown_airway_type",
            f"unknown airway type {airway_type!r}; known: {', '.join(VELOCITY_LIMITS)}",
            name=airway_type,
        )
    return airway_type


def _flow(value: float | str | None, what: str = "flow") -> float | None:
    return None if value is None else to_si(value, "m**3/s", what=what)


def _rule(row: RegulationRow) -> dict:
    return {
        "rule": row.quantity,
        "citation": rule_citation(row),
        "minimum": row.minimum,
        "maximum": row.maximum,
        "unit": row.unit,
        "verified": row.verified,
        "status": rule_status(row),
    }


@register(
    group=_GROUP,
    label="巷道风阻",
    label_en="Airway resistance",
    summary="Airway resistance from geometry (Atkinson), with shock losses.",
)
@refusing
def airway_resistance(
    length_m: float,
    area_m2: float,
    perimeter_m: float,
    airway_type: str | None = None,
    friction_factor_kg_m3: float | None = None,
    air_density_kg_m3: float = 1.2,
    shock_x_factors: list[float] | None = None,
    flow: float | str | None = None,
) -> dict:
    """Compute an airway's Atkinson resistance R = k·(ρ/1.2)·per·L/A³ plus shock losses X·ρ/(2A²).

    Give either a tabulated airway_type or your own friction_factor_kg_m3 (at 1.2 kg/m³).
    Tabulated types: coal.smooth_lined, coal.unlined_bolted, coal.timbered, shaft.concrete_smooth,
    shaft.brick, shaft.concrete_fittings, shaft.brick_fittings, shaft.tubbing, shaft.timber,
    arch.concrete, arch.lagged, rect.concrete, rect.girders_brick, rect.unlined_straight,
    rect.unlined_rough, rect.timber_legs.

    Args:
        length_m: Airway length in m.
        area_m2: Cross-section in m².
        perimeter_m: Perimeter in m.
        airway_type: Key of the friction-factor table (see above), or null.
        friction_factor_kg_m3: Atkinson k in kg/m³ at 1.2 kg/m³, overrides airway_type.
        air_density_kg_m3: Actual air density in kg/m³.
        shock_x_factors: Dimensionless shock-loss factors X of bends, junctions etc. in the airway.
        flow: Optional airflow (m³/s number, or text such as "1200 m³/min") to get the pressure drop.

    Returns:
        JSON with resistance_ns2_m8 (friction, shock, total), the friction factor used and its
        table, and pressure_drop_pa and air_power_w when a flow is given.
    """
    if friction_factor_kg_m3 is None:
        factor = airways.FRICTION_FACTORS.get(airway_type or "")
        if factor is None:
            detail = (
                f"give friction_factor_kg_m3 or an airway_type from: {', '.join(airways.FRICTION_FACTORS)}"
            )
            if airway_type:
                raise Refused("unknown_friction_type", detail, name=airway_type)
            raise Refused("no_friction_factor", detail)
        k, k_source = factor.k_kg_m3, f"{factor.description} — {factor.source}"
    else:
        k, k_source = friction_factor_kg_m3, "given by the user"
    cited_factor = friction_source(factor if friction_factor_kg_m3 is None else None)
    friction = airways.atkinson_resistance(k, perimeter_m, length_m, area_m2, air_density_kg_m3)
    shock = sum(airways.shock_resistance(x, area_m2, air_density_kg_m3) for x in shock_x_factors or [])
    data: dict = {
        "resistance_ns2_m8": {"friction": friction, "shock": shock, "total": friction + shock},
        "friction_factor_kg_m3": k,
        "friction_factor_source": k_source,
        "formula": "R = k·(ρ/1.2)·per·L/A³ + Σ X·ρ/(2A²)",
    }
    q = _flow(flow)
    if q is not None:
        drop = (friction + shock) * q * abs(q)
        data.update(flow_m3_s=q, pressure_drop_pa=drop, air_power_w=airways.air_power_w(drop, q))
    return sourced(
        data,
        [kb_source("atkinson-resistance", cite("airway_resistance", factor=cited_factor))],
    )


@register(
    group=_GROUP,
    label="串并联风阻",
    label_en="Series/parallel resistance",
    summary="Combine airway resistances in series or in parallel.",
)
@refusing
def combine_resistances(
    resistances_ns2_m8: list[float], arrangement: str, total_flow: float | str | None = None
) -> dict:
    """Combine resistances: series R = ΣRᵢ, parallel 1/√R = Σ1/√Rᵢ (with the natural flow split).

    Args:
        resistances_ns2_m8: Branch resistances in N·s²/m⁸.
        arrangement: "series" or "parallel".
        total_flow: Optional total airflow (m³/s or text with a unit) for pressure and split.

    Returns:
        JSON with the combined resistance, and the pressure drop and per-branch flows when a flow is given.
    """
    if arrangement not in ("series", "parallel"):
        raise Refused("bad_arrangement", "arrangement must be 'series' or 'parallel'")
    combine = airways.series_resistance if arrangement == "series" else airways.parallel_resistance
    r = combine(resistances_ns2_m8)
    data: dict = {"arrangement": arrangement, "resistance_ns2_m8": r}
    q = _flow(total_flow, "total flow")
    if q is not None:
        data.update(flow_m3_s=q, pressure_drop_pa=r * q * q)
        if arrangement == "parallel":
            data["branch_flows_m3_s"] = airways.parallel_split(resistances_ns2_m8, q)
    return sourced(
        data,
        [kb_source("atkinson-resistance", cite("combine"))],
    )


@register(
    group=_GROUP,
    label="风机定律",
    label_en="Fan laws",
    summary="Scale a fan's flow, pressure and power with speed, size and density.",
)
@refusing
def fan_laws_scale(
    speed_ratio: float = 1.0,
    diameter_ratio: float = 1.0,
    density_ratio: float = 1.0,
    flow: float | str | None = None,
    pressure: float | str | None = None,
    power_kw: float | None = None,
) -> dict:
    """Apply the fan laws: Q ∝ n·D³, p ∝ n²·D²·ρ, P ∝ n³·D⁵·ρ (ratios are new/old).

    Args:
        speed_ratio: New speed / old speed.
        diameter_ratio: New impeller diameter / old.
        density_ratio: New air density / old.
        flow: Old airflow (m³/s or text with a unit).
        pressure: Old fan pressure (Pa or text such as "1 inH2O").
        power_kw: Old power in kW.

    Returns:
        JSON with the new flow (m³/s), pressure (Pa) and power (kW) for the quantities given.
    """
    result = fans.fan_laws(
        flow_m3_s=_flow(flow),
        pressure_pa=None if pressure is None else to_si(pressure, "Pa", what="pressure"),
        power_w=None if power_kw is None else power_kw * 1000.0,
        speed_ratio=speed_ratio,
        diameter_ratio=diameter_ratio,
        density_ratio=density_ratio,
    )
    data = {
        "flow_m3_s": result.flow_m3_s,
        "pressure_pa": result.pressure_pa,
        "power_kw": None if result.power_w is None else result.power_w / 1000.0,
    }
    return sourced(
        data,
        [kb_source("fan-laws", cite("fan_laws"))],
    )


@register(
    group=_GROUP,
    label="风机工况点",
    label_en="Fan operating point",
    summary="Operating point of a fan curve against a system curve p = R·q².",
)
@refusing
def fan_operating_point(
    a0_pa: float, a1_pa_s_m3: float, a2_pa_s2_m6: float, system_resistance_ns2_m8: float
) -> dict:
    """Find where the fan curve p = a0 + a1·q + a2·q² meets the system curve p = R·q², and whether it is stable.

    Args:
        a0_pa: Fan curve constant term in Pa.
        a1_pa_s_m3: Linear coefficient in Pa·s/m³.
        a2_pa_s2_m6: Quadratic coefficient in Pa·s²/m⁶ (negative for a real fan).
        system_resistance_ns2_m8: System resistance R in N·s²/m⁸.

    Returns:
        JSON with found (true), flow_m3_s, pressure_pa, air_power_w, fan slope and stable; the
        call fails (no_duty) when the curves do not cross at a positive flow.
    """
    duty = fans.operating_point(a0_pa, a1_pa_s_m3, a2_pa_s2_m6, system_resistance_ns2_m8)
    data = {
        k: getattr(duty, k)
        for k in (
            "found",
            "flow_m3_s",
            "pressure_pa",
            "air_power_w",
            "fan_slope_pa_s_m3",
            "stable",
            "message",
        )
    }
    if not duty.found:  # a curve that gives no duty is bad input, not an answer: the call failed
        raise Refused(
            "no_duty",
            f"fan curve p = {a0_pa:g} + {a1_pa_s_m3:g}·q + {a2_pa_s2_m6:g}·q² against system curve "
            f"p = {system_resistance_ns2_m8:g}·q²: {duty.message}; check the coefficients (a0 > 0, a2 < 0)",
        )
    return sourced(
        data,
        [kb_source("fan-operating-point", cite("operating_point"))],
    )


@register(
    group=_GROUP,
    label="自然风压",
    label_en="Natural ventilation pressure",
    summary="Natural ventilation pressure from the densities of two air columns.",
)
@refusing
def natural_ventilation_pressure(
    depth_m: float, density_downcast_kg_m3: float, density_upcast_kg_m3: float
) -> dict:
    """Natural ventilation pressure NVP = g·Z·(ρ̄down − ρ̄up); positive helps the downcast→upcast direction.

    Args:
        depth_m: Vertical depth Z of the columns in m.
        density_downcast_kg_m3: Mean air density of the downcast column in kg/m³.
        density_upcast_kg_m3: Mean air density of the upcast column in kg/m³.

    Returns:
        JSON with nvp_pa and the formula.
    """
    nvp = demand.natural_ventilation_pressure_pa(depth_m, density_downcast_kg_m3, density_upcast_kg_m3)
    return sourced(
        {"nvp_pa": nvp, "formula": "NVP = g·Z·(ρ̄down − ρ̄up), g = 9.81 m/s²"},
        [kb_source("natural-ventilation", cite("nvp"))],
    )


@register(
    group=_GROUP,
    label="需风量",
    label_en="Airflow demand",
    summary="Airflow demand of a working place: people, gas, diesel, output, minimum velocity; the largest governs.",
)
@refusing
def airflow_demand(
    people: int = 0,
    methane_emission_m3_min: float = 0.0,
    methane_limit_percent: float | None = None,
    methane_intake_percent: float = 0.0,
    diesel_kw: float = 0.0,
    output_t_per_day: float = 0.0,
    air_per_tonne_m3_min: float = 0.0,
    methane_unevenness_k: float | None = None,
    area_m2: float | None = None,
    airway_type: str | None = None,
) -> dict:
    """Compute each airflow requirement and the governing (largest) one, each with its rule.

    People: 4 m³/min per person; methane: Q = k·q/(c_max − c_in) with k the emission-unevenness
    coefficient and c_max the return limit (default the face-return limit 1.0%), i.e. the Chinese
    Q = 100·q_CH4·k; diesel: per-kW rate; output: a per-tonne rate you supply; with a
    cross-section: Q ≥ v_min·A for the airway type, and the governing flow's velocity is checked
    against the type's maximum. A methane emission needs methane_unevenness_k: ask the engineer
    (measured, or from AQ 1056-2008, commonly 1.2–2.0); never assume it. At least one
    requirement must be given. Rule rows say whether they were verified against the official text.

    Args:
        people: Largest number of people at the place at once.
        methane_emission_m3_min: Absolute methane emission q_CH4 in m³/min of pure gas (mean).
        methane_limit_percent: Allowed methane in the return air in %, default the regulation row.
        methane_intake_percent: Methane already in the intake air in %.
        diesel_kw: Rated diesel power working there in kW.
        output_t_per_day: Daily output in t/d, used with air_per_tonne_m3_min.
        air_per_tonne_m3_min: Air per t/d of output in m³/min (your mine's rule).
        methane_unevenness_k: Methane emission-unevenness coefficient k (peak / mean, ≥ 1);
            required with a methane emission.
        area_m2: Net cross-section of the place in m², for the minimum-velocity term and the
            maximum-velocity check (needs airway_type).
        airway_type: Velocity-table key with area_m2: coal_face (coal faces, coal and half-coal
            headings), rock_heading, district_airway, main_airway, other_roadway, …

    Returns:
        JSON with requirements (basis, flow_m3_s, flow_m3_min, formula, rule; unevenness_k for
        methane), governing, required_flow_m3_s and, with a cross-section, velocity (velocity_m_s
        of the governing flow, minimum_m_s, maximum_m_s, within_limits, verdict).
    """
    if not any((people, methane_emission_m3_min, diesel_kw, output_t_per_day, area_m2)):
        raise Refused(
            "no_requirement",
            "no requirement given: give at least one of people, methane_emission_m3_min, diesel_kw, "
            "output_t_per_day with air_per_tonne_m3_min, or area_m2 with airway_type",
        )
    if area_m2 is not None and not airway_type:
        raise Refused(
            "area_needs_type",
            f"area_m2 needs an airway_type for its velocity limits, one of: {', '.join(VELOCITY_LIMITS)}",
        )
    if area_m2 is not None:
        _velocity_type(airway_type or "")
    limit = METHANE_FACE_RETURN.maximum if methane_limit_percent is None else methane_limit_percent
    reqs = [demand.air_for_people(people)] if people else []
    if methane_emission_m3_min:
        if methane_unevenness_k is None:
            raise Refused(
                "methane_k_missing",
                "a methane emission needs methane_unevenness_k, the emission-unevenness coefficient "
                "(peak / mean, measured or from AQ 1056-2008, commonly 1.2–2.0): ask the engineer, do not assume it",
            )
        gas = demand.air_for_gas(
            methane_emission_m3_min,
            float(limit) / 100.0,
            methane_intake_percent / 100.0,
            unevenness_k=methane_unevenness_k,
        )
        reqs.append(
            gas
            if methane_limit_percent is not None
            else demand.Requirement(gas.basis, gas.flow_m3_s, gas.formula, METHANE_FACE_RETURN)
        )
    if diesel_kw:
        reqs.append(demand.air_for_diesel(diesel_kw))
    if output_t_per_day:
        reqs.append(demand.air_for_output(output_t_per_day, air_per_tonne_m3_min))
    if area_m2 is not None:
        reqs.append(demand.air_for_min_velocity(area_m2, airway_type or ""))
    rows = [
        {
            "basis": r.basis,
            "flow_m3_s": r.flow_m3_s,
            "flow_m3_min": r.flow_m3_s * 60,
            "formula": r.formula,
            "rule": None if r.rule is None else _rule(r.rule),
            "note": r.note,
        }
        for r in reqs
    ]
    for row in rows:
        if row["basis"] == "gas dilution":
            row["unevenness_k"] = methane_unevenness_k
    governing = max(rows, key=lambda r: r["flow_m3_s"])
    if governing["flow_m3_s"] <= 0:
        raise Refused(
            "no_requirement",
            "no requirement given: every requirement came out 0 m³/s (e.g. output_t_per_day without "
            "air_per_tonne_m3_min, or an airway type without a minimum velocity)",
        )
    data: dict = {
        "requirements": rows,
        "governing": governing["basis"],
        "required_flow_m3_s": governing["flow_m3_s"],
    }
    if area_m2 is not None:
        check = demand.check_velocity(governing["flow_m3_s"], area_m2, airway_type or "")
        data["velocity"] = {
            "velocity_m_s": check.velocity_m_s,
            "minimum_m_s": check.minimum_m_s,
            "maximum_m_s": check.maximum_m_s,
            "within_limits": check.within_limits,
            "verdict": check.verdict,
        }
    return sourced(
        data,
        [kb_source("air-requirements", cite("demand"))],
    )


@register(
    group=_GROUP,
    label="风速校核",
    label_en="Air velocity check",
    summary="Check an airway's mean air velocity against the regulation's limits.",
)
@refusing
def check_air_velocity(flow: float | str, area_m2: float, airway_type: str) -> dict:
    """Check v = Q/A against the permitted range for the airway type (《煤矿安全规程》 velocity table).

    Airway types: ventilation_shaft, materials_hoisting_shaft, air_crossing, people_hoisting_shaft,
    main_airway, trolley_roadway, district_airway, coal_face, rock_heading, other_roadway.

    Args:
        flow: Airflow (m³/s number or text such as "1200 m³/min").
        area_m2: Net cross-section in m².
        airway_type: One of the types above.

    Returns:
        JSON with velocity_m_s, the limits, within_limits, a verdict and the rule with its status.
    """
    check = demand.check_velocity(_flow(flow) or 0.0, area_m2, _velocity_type(airway_type))
    data = {
        "velocity_m_s": check.velocity_m_s,
        "minimum_m_s": check.minimum_m_s,
        "maximum_m_s": check.maximum_m_s,
        "within_limits": check.within_limits,
        "verdict": check.verdict,
        "rule": _rule(check.rule),
    }
    return sourced(data, [kb_source("air-velocity-limits", rule_citation(check.rule))])

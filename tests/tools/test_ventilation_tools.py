"""The engineering calculation tools: values from ventapp.domain, sources and rule status attached."""

from __future__ import annotations

import pytest

from ventapp.tools import ventilation_tools as vt


def test_airway_resistance_from_a_table_with_flow_in_m3_per_min() -> None:
    result = vt.airway_resistance(1000, 12, 14, airway_type="shaft.brick", flow="1200 m³/min")
    data = result["data"]
    assert data["friction_factor_source"].endswith("Table 4-3 (NCB 1979)")
    assert data["flow_m3_s"] == pytest.approx(20.0)
    assert data["pressure_drop_pa"] == pytest.approx(data["resistance_ns2_m8"]["total"] * 400)
    assert result["sources"][0]["url"] == "/kb/atkinson-resistance"


def test_airway_resistance_needs_a_factor() -> None:
    with pytest.raises(ValueError, match=r"shaft\.brick"):
        vt.airway_resistance(1000, 12, 14, airway_type="granite")


def test_parallel_combination_and_split() -> None:
    data = vt.combine_resistances([0.4, 0.1], "parallel", total_flow=30)["data"]
    assert data["resistance_ns2_m8"] == pytest.approx(1 / (1 / 0.4**0.5 + 1 / 0.1**0.5) ** 2)
    assert sum(data["branch_flows_m3_s"]) == pytest.approx(30)


def test_fan_laws_accept_imperial_inputs() -> None:
    data = vt.fan_laws_scale(speed_ratio=2, flow="40000 cfm", pressure="1 inH2O", power_kw=5.22)["data"]
    assert data["flow_m3_s"] == pytest.approx(2 * 18.8779, rel=1e-4)
    assert data["power_kw"] == pytest.approx(5.22 * 8)


def test_operating_point_tool_flags_instability() -> None:
    assert vt.fan_operating_point(100, 10, -0.5, 2)["data"]["stable"] is False
    with pytest.raises(ValueError, match=r"^\[no_duty\] .*does not meet the system curve"):
        vt.fan_operating_point(-10, 0, -1, 1)


def test_airflow_demand_names_the_governing_requirement_and_rule_status() -> None:
    result = vt.airflow_demand(people=60, methane_emission_m3_min=2.5, methane_unevenness_k=1.5, diesel_kw=50)
    data = result["data"]
    assert data["governing"] == "gas dilution"
    # The KB's worked example (air-requirements.md): q = 2.5 m³/min, k = 1.5 → 375 m³/min.
    assert data["required_flow_m3_s"] == pytest.approx(375 / 60)
    assert all(
        r["rule"]["verified"] is False and "尚未对照" in r["rule"]["status"]  # a zh-CN run
        for r in data["requirements"]
    )


def test_velocity_check_tool() -> None:
    data = vt.check_air_velocity("3000 m³/min", 10, "coal_face")["data"]
    assert data["velocity_m_s"] == pytest.approx(5.0) and not data["within_limits"]
    assert data["rule"]["citation"].startswith("《煤矿安全规程》")


def test_nvp_tool() -> None:
    assert vt.natural_ventilation_pressure(400, 1.26, 1.16)["data"]["nvp_pa"] == pytest.approx(
        9.81 * 400 * 0.1
    )


def test_methane_demand_applies_the_unevenness_coefficient_and_says_which() -> None:
    """Tester #6: 3 m³/min of methane gave 300 m³/min (100·q); Q = 100·q_CH4·k is 450 for k = 1.5."""
    data = vt.airflow_demand(methane_emission_m3_min=3, methane_unevenness_k=1.5)["data"]
    assert data["required_flow_m3_s"] * 60 == pytest.approx(450)
    (gas,) = [r for r in data["requirements"] if r["basis"] == "gas dilution"]
    assert gas["unevenness_k"] == 1.5 and "1.5" in gas["formula"]


def test_methane_demand_without_a_coefficient_is_refused_not_guessed() -> None:
    with pytest.raises(ValueError, match="methane_unevenness_k"):
        vt.airflow_demand(people=10, methane_emission_m3_min=3)
    with pytest.raises(ValueError, match="unevenness coefficient k must be ≥ 1"):
        vt.airflow_demand(methane_emission_m3_min=3, methane_unevenness_k=0.8)


def test_airflow_demand_with_no_requirement_is_refused() -> None:
    """Tester #6: a call with no inputs answered "需风量 0.0 m³/s" as a success."""
    with pytest.raises(ValueError, match="no requirement"):
        vt.airflow_demand()
    with pytest.raises(ValueError, match="no requirement"):
        vt.airflow_demand(people=0, diesel_kw=0)


def test_airflow_demand_adds_the_minimum_velocity_term_and_checks_the_maximum() -> None:
    """KB air-requirements: a 12 m² face needs Q ≥ 0.25 × 12 = 3 m³/s and allows at most 48 m³/s."""
    data = vt.airflow_demand(people=10, area_m2=12, airway_type="coal_face")["data"]
    assert data["governing"] == "minimum velocity"
    assert data["required_flow_m3_s"] == pytest.approx(3.0)
    assert data["velocity"]["within_limits"] and data["velocity"]["maximum_m_s"] == 4.0
    fast = vt.airflow_demand(
        methane_emission_m3_min=30, methane_unevenness_k=2, area_m2=12, airway_type="coal_face"
    )
    assert fast["data"]["required_flow_m3_s"] == pytest.approx(100.0)
    assert not fast["data"]["velocity"]["within_limits"]
    with pytest.raises(ValueError, match="airway_type"):
        vt.airflow_demand(people=10, area_m2=12)

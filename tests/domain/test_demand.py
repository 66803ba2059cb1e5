"""Airflow demand, natural ventilation pressure, velocity checks and the regulation table.

No published worked answers were available in this project for these formulas; the expected
values are computed by hand from the formulas cited in ``ventapp/domain/demand.py`` (McPherson,
*Subsurface Ventilation Engineering*, 2nd ed., chs. 8–9) and from the regulation rows.
"""

from __future__ import annotations

import pytest

from ventapp.domain import demand, regulations


def test_nvp_is_g_z_delta_rho_and_signed_by_the_colder_column() -> None:
    assert demand.natural_ventilation_pressure_pa(500, 1.25, 1.15) == pytest.approx(9.81 * 500 * 0.10)
    assert demand.natural_ventilation_pressure_pa(500, 1.15, 1.25) < 0


def test_air_for_people_uses_the_regulation_row_and_says_so() -> None:
    req = demand.air_for_people(60)
    assert req.flow_m3_s == pytest.approx(60 * 4 / 60)
    assert req.rule is regulations.AIR_PER_PERSON
    assert "Not yet checked" in req.rule.status


def test_air_for_gas_dilution_is_g_over_cmax_minus_cin() -> None:
    req = demand.air_for_gas(2.5, 0.01, 0.002)
    assert req.flow_m3_s == pytest.approx(2.5 / 0.008 / 60)
    with pytest.raises(ValueError, match="intake concentration"):
        demand.air_for_gas(2.5, 0.01, 0.01)


def test_air_for_face_methane_is_100_q_k() -> None:
    """KB air-requirements (Chinese practice): Q = 100·q_CH4·k; q = 2.5 m³/min, k = 1.5 → 375 m³/min."""
    req = demand.air_for_gas(2.5, 0.01, unevenness_k=1.5)
    assert req.flow_m3_s * 60 == pytest.approx(375)
    with pytest.raises(ValueError, match="k must be ≥ 1"):
        demand.air_for_gas(2.5, 0.01, unevenness_k=0.9)


def test_air_for_minimum_velocity_is_vmin_times_area() -> None:
    """KB air-requirements: a 12 m² coal face needs Q ≥ 0.25 × 12 = 3 m³/s."""
    req = demand.air_for_min_velocity(12, "coal_face")
    assert req.flow_m3_s == pytest.approx(3.0) and req.rule is regulations.VELOCITY_LIMITS["coal_face"]
    assert demand.air_for_min_velocity(12, "main_airway").flow_m3_s == 0.0


def test_air_for_diesel_and_output() -> None:
    assert demand.air_for_diesel(150).flow_m3_s == pytest.approx(150 * 4 / 60)
    req = demand.air_for_output(3000, 1.0)
    assert req.flow_m3_s == pytest.approx(50.0) and req.rule is None and "user" in req.note


@pytest.mark.parametrize(
    ("flow", "area", "kind", "ok", "word"),
    [
        (20.0, 10.0, "coal_face", True, "within"),
        (50.0, 10.0, "coal_face", False, "too fast"),
        (1.0, 10.0, "coal_face", False, "too slow"),
        (2.0, 10.0, "rock_heading", True, "within"),
        (100.0, 10.0, "main_airway", False, "too fast"),
    ],
)
def test_velocity_check_against_the_table(flow: float, area: float, kind: str, ok: bool, word: str) -> None:
    check = demand.check_velocity(flow, area, kind)
    assert check.velocity_m_s == pytest.approx(flow / area)
    assert check.within_limits is ok and check.verdict.startswith(word)


def test_unknown_airway_type_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="coal_face"):
        demand.check_velocity(1, 1, "tunnel")


def test_no_row_claims_an_article_it_has_not_verified() -> None:
    for row in regulations.ALL_ROWS:
        assert (row.article is not None) == row.verified, row.key
        if not row.verified:
            assert "not confirmed" in row.citation and "Not yet checked" in row.status
        assert row.minimum is not None or row.maximum is not None

"""Airway resistance, friction factors, shock losses, series/parallel and air power.

Published numbers used here:
* Thakur, *Advanced Mine Ventilation* (Woodhead, 2019), ch. 2, p. 24: Atkinson K = 20 and 200
  (× 10⁻¹⁰ lbf·min²/ft⁴) correspond to Darcy λ = 0.0246 and 0.246.
* "Mine Ventilation", Appendix B "Problems", §45, p. 124 (Google Books id pf0JAAAAIAAJ):
  problem 9, 1.85 in. water gauge = 9.62 lb/ft²; problem 10, 60,000 ft³/min at 1.5 in. w.g.
  = 468,000 "units of work" (ft·lb/min); problem 8, 8 ft × 9 ft airway at 15 ft/s passes
  64,800 ft³/min.
"""

from __future__ import annotations

import pytest

from ventapp.domain import airways
from ventapp.domain.network import Airway, Network, solve_network
from ventapp.domain.units import Quantity, to_si


def test_friction_factor_conversion_matches_thakurs_darcy_equivalents() -> None:
    # k = ρ·λ/8 (Atkinson factor from the Darcy coefficient) at the standard 1.2 kg/m³.
    for k_imperial, darcy in ((20, 0.0246), (200, 0.246)):
        k = airways.FrictionFactor("x", "x", k_imperial, "x").k_kg_m3
        assert 8 * k / airways.STANDARD_DENSITY_KG_M3 == pytest.approx(darcy, rel=0.01)


def test_every_tabulated_friction_factor_names_its_table_and_is_plausible() -> None:
    for factor in airways.FRICTION_FACTORS.values():
        assert "Table" in factor.source
        assert 0.002 < factor.k_kg_m3 < 0.02  # kg/m³: smooth shafts to timbered airways


def test_atkinson_resistance_agrees_with_the_imperial_form_of_the_same_equation() -> None:
    # Thakur eq. 2.10 (imperial): H [in. w.g.] = K·P·L·Q² / (5.2·A³), K in lbf·min²/ft⁴ × 10⁻¹⁰.
    # No published worked answer was available here; this checks the SI form and the units.
    k_imp, per_ft, length_ft, area_ft2, q_cfm = 65, 56, 3000, 160, 200_000
    h_inwg = k_imp * 1e-10 * per_ft * length_ft * q_cfm**2 / (5.2 * area_ft2**3)
    r = airways.atkinson_resistance(
        airways.FrictionFactor("x", "x", k_imp, "x").k_kg_m3,
        to_si(f"{per_ft} ft", "m"),
        to_si(f"{length_ft} ft", "m"),
        to_si(f"{area_ft2} ft**2", "m**2"),
    )
    pressure_pa = r * to_si(f"{q_cfm} cfm", "m**3/s") ** 2
    assert pressure_pa == pytest.approx(Quantity(h_inwg, "inH2O").to("Pa").magnitude, rel=0.005)


def test_resistance_scales_with_density() -> None:
    base = airways.atkinson_resistance(0.012, 14, 1000, 12)
    assert airways.atkinson_resistance(0.012, 14, 1000, 12, density_kg_m3=1.0) == pytest.approx(base / 1.2)
    assert base == pytest.approx(0.012 * 14 * 1000 / 12**3)


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_non_positive_geometry_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        airways.atkinson_resistance(0.012, 14, 1000, bad)


def test_water_gauge_and_air_power_match_the_textbook_problems() -> None:
    assert Quantity(1.85, "inH2O").to("lbf/ft**2").magnitude == pytest.approx(9.62, abs=0.01)
    power = airways.air_power_w(to_si("1.5 inH2O", "Pa"), to_si("60000 cfm", "m**3/s"))
    assert Quantity(power, "W").to("ft*lbf/min").magnitude == pytest.approx(468_000, rel=0.002)
    flow = to_si("15 ft/s", "m/s") * to_si("72 ft**2", "m**2")
    assert Quantity(flow, "m**3/s").to("cfm").magnitude == pytest.approx(64_800)


def test_shock_loss_is_x_rho_u2_over_2_and_its_resistance_reproduces_it() -> None:
    p = airways.shock_loss_pa(0.5, 4.0, 1.2)
    assert p == pytest.approx(0.5 * 1.2 * 16 / 2)
    r = airways.shock_resistance(0.5, area_m2=10.0, density_kg_m3=1.2)
    assert r * (4.0 * 10.0) ** 2 == pytest.approx(p)


def test_shock_equivalent_lengths_are_thakurs_table() -> None:
    assert airways.SHOCK_EQUIVALENT_LENGTH_FT["right_angle_bend_sharp"] == 70
    assert airways.SHOCK_EQUIVALENT_LENGTH_FT["overcast"] == 65


def test_parallel_resistance_and_split_agree_with_the_network_solver() -> None:
    resistances = [0.4, 0.1, 0.25]
    network = Network(tuple(Airway(f"a{i}", "in", "out", r) for i, r in enumerate(resistances)))
    solution = solve_network(network, 30.0)

    combined = airways.parallel_resistance(resistances)
    assert solution.boundary_pressure_pa == pytest.approx(combined * 30.0**2)
    split = airways.parallel_split(resistances, 30.0)
    assert [solution.flows_m3_s[f"a{i}"] for i in range(3)] == pytest.approx(split)
    assert airways.series_resistance(resistances) == pytest.approx(0.75)


def test_series_and_parallel_refuse_negative_resistances() -> None:
    with pytest.raises(ValueError, match="not negative"):
        airways.series_resistance([0.1, -0.2])
    with pytest.raises(ValueError, match="at least one"):
        airways.parallel_resistance([])

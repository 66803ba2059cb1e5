"""Fan laws and operating points.

Published numbers: Thakur, *Advanced Mine Ventilation* (Woodhead, 2019), §6.4 "Fan laws",
p. 86: a fan at 500 rpm giving 40,000 cfm at 1 in. w.g. with 7 hp gives, at 1000 rpm,
80,000 cfm, 4 in. and 56 hp; with the diameter doubled at constant tip speed, 160,000 cfm,
1 in. and 28 hp.
"""

from __future__ import annotations

import math

import pytest

from ventapp.domain.fans import fan_laws, operating_point
from ventapp.domain.units import Quantity, to_si

Q1, P1, W1 = to_si("40000 cfm", "m**3/s"), to_si("1 inH2O", "Pa"), to_si("7 hp", "W")


def _imperial(result) -> tuple[float, float, float]:
    return (
        Quantity(result.flow_m3_s, "m**3/s").to("cfm").magnitude,
        Quantity(result.pressure_pa, "Pa").to("inH2O").magnitude,
        Quantity(result.power_w, "W").to("hp").magnitude,
    )


def test_doubling_the_speed_matches_thakurs_example() -> None:
    result = fan_laws(flow_m3_s=Q1, pressure_pa=P1, power_w=W1, speed_ratio=1000 / 500)
    assert _imperial(result) == pytest.approx((80_000, 4, 56))


def test_doubling_the_diameter_at_constant_tip_speed_matches_thakurs_example() -> None:
    result = fan_laws(flow_m3_s=Q1, pressure_pa=P1, power_w=W1, speed_ratio=0.5, diameter_ratio=2)
    assert _imperial(result) == pytest.approx((160_000, 1, 28))


def test_density_changes_pressure_and_power_but_not_flow() -> None:
    result = fan_laws(flow_m3_s=10, pressure_pa=1000, power_w=12_000, density_ratio=1.1 / 1.2)
    assert (result.flow_m3_s, result.pressure_pa, result.power_w) == pytest.approx(
        (10, 1000 * 1.1 / 1.2, 11_000)
    )


def test_fan_law_refuses_a_zero_ratio() -> None:
    with pytest.raises(ValueError, match="speed ratio"):
        fan_laws(flow_m3_s=1, speed_ratio=0)


def test_operating_point_solves_the_quadratic_and_flags_the_rising_part() -> None:
    # 100 + 10q − 0.5q² = 2q²  ->  q = 2 + √44 (rising part of the curve: slope 10 − q > 0).
    duty = operating_point(100, 10, -0.5, 2.0)
    assert duty.found and duty.flow_m3_s == pytest.approx(2 + math.sqrt(44))
    assert duty.pressure_pa == pytest.approx(2 * duty.flow_m3_s**2)
    assert not duty.stable and "UNSTABLE" in duty.message


def test_operating_point_on_the_falling_part_is_stable() -> None:
    duty = operating_point(3000, 0, -0.05, 0.25)  # q = √(3000/0.3) = 100 m³/s
    assert duty.flow_m3_s == pytest.approx(100) and duty.stable
    assert duty.air_power_w == pytest.approx(0.25 * 100**3)


def test_operating_point_reports_no_crossing() -> None:
    assert not operating_point(-10, 0, -1, 1).found

"""Fan laws and the operating point of a fan against a system curve.

References
----------
.. [McP] M. J. McPherson, *Subsurface Ventilation Engineering*, 2nd ed. (2009), ch. 10 "Fans":
   the fan laws and the operating point where the fan and system characteristic curves cross.
.. [Thakur] P. Thakur, *Advanced Mine Ventilation* (Woodhead Publishing, 2019), §6.4 "Fan laws",
   Table 6.1 and the worked example on p. 86.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class FanLawResult:
    """Duty of a fan scaled by the fan laws (quantities the caller did not give are None)."""

    flow_m3_s: float | None
    pressure_pa: float | None
    power_w: float | None


def fan_laws(
    *,
    flow_m3_s: float | None = None,
    pressure_pa: float | None = None,
    power_w: float | None = None,
    speed_ratio: float = 1.0,
    diameter_ratio: float = 1.0,
    density_ratio: float = 1.0,
) -> FanLawResult:
    """Scale a fan's duty to another speed, size or air density (geometrically similar fans).

    .. math::

        Q_2 = Q_1 \\frac{n_2}{n_1} \\Big(\\frac{D_2}{D_1}\\Big)^3, \\quad
        p_2 = p_1 \\Big(\\frac{n_2}{n_1}\\Big)^2 \\Big(\\frac{D_2}{D_1}\\Big)^2 \\frac{\\rho_2}{\\rho_1}, \\quad
        P_2 = P_1 \\Big(\\frac{n_2}{n_1}\\Big)^3 \\Big(\\frac{D_2}{D_1}\\Big)^5 \\frac{\\rho_2}{\\rho_1}

    Ratios are new/old (``n`` speed, ``D`` impeller diameter, ``ρ`` density); efficiency is
    unchanged. Inputs and results in m³/s, Pa and W.

    Raises
    ------
    ValueError
        A ratio that is not positive.

    References
    ----------
    [McP] ch. 10; [Thakur] §6.4, Table 6.1.
    """
    for name, ratio in (("speed", speed_ratio), ("diameter", diameter_ratio), ("density", density_ratio)):
        if not ratio > 0:
            raise ValueError(f"the {name} ratio must be positive, got {ratio}")
    n, d, rho = speed_ratio, diameter_ratio, density_ratio
    return FanLawResult(
        flow_m3_s=None if flow_m3_s is None else flow_m3_s * n * d**3,
        pressure_pa=None if pressure_pa is None else pressure_pa * n**2 * d**2 * rho,
        power_w=None if power_w is None else power_w * n**3 * d**5 * rho,
    )


@dataclass(frozen=True)
class OperatingPoint:
    """Where a fan curve ``p = a0 + a1·q + a2·q²`` meets the system curve ``p = R·q²``.

    Attributes
    ----------
    found : bool
        False when the curves do not cross at a positive flow.
    flow_m3_s, pressure_pa, air_power_w : float
        The duty (NaN when not found).
    fan_slope_pa_s_m3 : float
        ``dp/dq`` of the fan curve at the duty; positive means the unstable (rising) part.
    stable : bool
        True when the fan curve is falling at the duty.
    message : str
        Explanation, in particular when no duty exists.
    """

    found: bool
    flow_m3_s: float
    pressure_pa: float
    air_power_w: float
    fan_slope_pa_s_m3: float
    stable: bool
    message: str


def operating_point(
    a0_pa: float, a1_pa_s_m3: float, a2_pa_s2_m6: float, system_resistance_ns2_m8: float
) -> OperatingPoint:
    """Intersect a quadratic fan curve with a square-law system curve.

    Solves ``(a2 − R)·q² + a1·q + a0 = 0`` for the largest positive root (the duty on the
    falling side of the fan curve when two exist).

    References
    ----------
    [McP] ch. 10 (fan and system characteristics); Atkinson's square law, [McP] §5.2.
    """
    if system_resistance_ns2_m8 < 0:
        raise ValueError("the system resistance must not be negative")
    a, b, c = a2_pa_s2_m6 - system_resistance_ns2_m8, a1_pa_s_m3, a0_pa
    roots: list[float]
    if abs(a) < 1e-15:
        roots = [-c / b] if b != 0 else []
    else:
        disc = b * b - 4 * a * c
        roots = [] if disc < 0 else [(-b + s * math.sqrt(disc)) / (2 * a) for s in (1.0, -1.0)]
    positive = sorted(q for q in roots if q > 0)
    if not positive:
        nan = float("nan")
        return OperatingPoint(
            False,
            nan,
            nan,
            nan,
            nan,
            False,
            "the fan curve does not meet the system curve at a positive flow",
        )
    q = positive[-1]
    p = system_resistance_ns2_m8 * q * q
    slope = a1_pa_s_m3 + 2 * a2_pa_s2_m6 * q
    note = (
        "stable: the fan curve falls at the duty"
        if slope < 0
        else "UNSTABLE: the duty is on the rising part of the fan curve (stall risk)"
    )
    return OperatingPoint(True, q, p, p * q, slope, slope < 0, note)

"""Airway resistance from geometry, shock losses, series and parallel combination, air power.

References
----------
.. [McP] M. J. McPherson, *Subsurface Ventilation Engineering*, 2nd ed. (Mine Ventilation Services,
   2009), ch. 5 "Incompressible flow relationships": §5.2 Atkinson's equation (the square law),
   §5.3 determination of the friction factor (density correction ``k ∝ ρ``), §5.4 airway
   resistance and shock losses ``p = X·ρ·u²/2``, §5.5 air power.
.. [Tien] J. C. Tien, *Practical Mine Ventilation Engineering* (Intertec), ch. 4 "Airflow in mines",
   pp. 56–58, Tables 4-2 (coal mine airways) and 4-3 (NCB 1979 values for shafts and arched
   roadways), in ``K × 10¹⁰ lbf·min²/ft⁴``.
.. [Thakur] P. Thakur, *Advanced Mine Ventilation* (Woodhead Publishing, 2019), ch. 2, Table 2.4
   (rectangular coal airways, ``K × 10¹⁰``) and Table 2.6 (equivalent lengths for shock losses,
   feet, adapted from Hartman et al., *Mine Ventilation and Air Conditioning*).

McPherson's own Table 5.1 is not reproduced: its values were not checked against the book in
this project, so the friction-factor rows below come only from tables whose text was read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ventapp.domain import units

STANDARD_DENSITY_KG_M3 = 1.2
"""Air density at which tabulated friction factors are quoted (McPherson §5.3)."""


@functools.cache
def _k_imperial() -> float:
    # kg/m³ per 10⁻¹⁰ lbf·min²/ft⁴, from pint at the first use (not at import: issue 18).
    return float(units.registry().Quantity(1e-10, "lbf * min**2 / ft**4").to("kg / m**3").magnitude)


@dataclass(frozen=True)
class FrictionFactor:
    """A tabulated Atkinson friction factor.

    Attributes
    ----------
    key : str
        Id the tools accept, e.g. ``"shaft.concrete_smooth"``.
    description : str
        The table's wording.
    k_imperial : float
        Published value in ``lbf·min²/ft⁴ × 10⁻¹⁰``.
    source : str
        Book, chapter and table.
    """

    key: str
    description: str
    k_imperial: float
    source: str

    @property
    def k_kg_m3(self) -> float:
        """The factor in kg/m³ at standard density (1.2 kg/m³)."""
        return self.k_imperial * _k_imperial()


_TIEN_42 = "Tien, Practical Mine Ventilation Engineering, ch. 4, Table 4-2 (straight, clean)"
_TIEN_43 = "Tien, Practical Mine Ventilation Engineering, ch. 4, Table 4-3 (NCB 1979)"
_THAKUR_24 = "Thakur, Advanced Mine Ventilation (2019), ch. 2, Table 2.4"
FRICTION_FACTORS: dict[str, FrictionFactor] = {
    f.key: f
    for f in (
        FrictionFactor("coal.smooth_lined", "coal mine airway, smooth lined, straight, clean", 25, _TIEN_42),
        FrictionFactor(
            "coal.unlined_bolted", "coal mine airway, unlined (roof-bolted), straight, clean", 43, _TIEN_42
        ),
        FrictionFactor("coal.timbered", "coal mine airway, timbered, straight, clean", 67, _TIEN_42),
        FrictionFactor("shaft.concrete_smooth", "shaft, smooth concrete-lined, unobstructed", 16, _TIEN_43),
        FrictionFactor("shaft.brick", "shaft, brick-lined, unobstructed", 20, _TIEN_43),
        FrictionFactor(
            "shaft.concrete_fittings",
            "shaft, smooth concrete-lined, rope guides and pipe ranges on buntons",
            34,
            _TIEN_43,
        ),
        FrictionFactor(
            "shaft.brick_fittings", "shaft, brick-lined, rope guides and pipe ranges on buntons", 39, _TIEN_43
        ),
        FrictionFactor("shaft.tubbing", "shaft, tubbing-lined, no guides or cages", 73, _TIEN_43),
        FrictionFactor("shaft.timber", "shaft, timber-lined, no middle buntons", 88, _TIEN_43),
        FrictionFactor("arch.concrete", "steel-arched roadway, smooth concrete all round", 20, _TIEN_43),
        FrictionFactor(
            "arch.lagged",
            "steel-arched roadway, concrete slabs or timber lagging between flanges all round",
            39,
            _TIEN_43,
        ),
        FrictionFactor("rect.concrete", "rectangular coal airway, smooth, concrete-lined", 20, _THAKUR_24),
        FrictionFactor(
            "rect.girders_brick", "rectangular coal airway, steel girders on brick walls", 50, _THAKUR_24
        ),
        FrictionFactor("rect.unlined_straight", "rectangular coal airway, unlined, straight", 65, _THAKUR_24),
        FrictionFactor("rect.unlined_rough", "rectangular coal airway, unlined, rough", 85, _THAKUR_24),
        FrictionFactor(
            "rect.timber_legs", "rectangular coal airway, wood beams on timber legs", 100, _THAKUR_24
        ),
    )
}

_THAKUR_26 = "Thakur, Advanced Mine Ventilation (2019), ch. 2, Table 2.6 (after Hartman et al.)"
SHOCK_EQUIVALENT_LENGTH_FT: dict[str, float] = {
    "acute_bend_sharp": 150,
    "acute_bend_round": 3,
    "right_angle_bend_round": 1,
    "right_angle_bend_sharp": 70,
    "obtuse_bend_round": 1,
    "obtuse_bend_sharp": 15,
    "doorway": 70,
    "overcast": 65,
    "duct_inlet": 20,
    "duct_discharge": 65,
    "split_90_degrees": 200,
    "mine_car_20_percent": 100,
    "mine_car_45_percent": 500,
}
"""Equivalent length (feet of airway) of a shock loss, [Thakur] Table 2.6."""


def atkinson_resistance(
    friction_factor_kg_m3: float,
    perimeter_m: float,
    length_m: float,
    area_m2: float,
    density_kg_m3: float = STANDARD_DENSITY_KG_M3,
) -> float:
    """Atkinson resistance of an airway from its geometry.

    .. math:: R = k \\frac{\\rho}{1.2} \\frac{\\mathrm{per} \\cdot L}{A^3}

    Parameters
    ----------
    friction_factor_kg_m3 : float
        Atkinson friction factor ``k`` at 1.2 kg/m³, kg/m³.
    perimeter_m, length_m, area_m2 : float
        Perimeter ``per`` (m), length ``L`` (m) and cross-section ``A`` (m²).
    density_kg_m3 : float
        Actual air density ``ρ``; ``k`` scales with it ([McP] §5.3).

    Returns
    -------
    float
        ``R`` in N·s²/m⁸.

    Raises
    ------
    ValueError
        A non-positive input.

    References
    ----------
    [McP] §5.2–5.4.
    """
    for name, value in (
        ("friction factor", friction_factor_kg_m3),
        ("perimeter", perimeter_m),
        ("length", length_m),
        ("area", area_m2),
        ("density", density_kg_m3),
    ):
        if not value > 0:
            raise ValueError(f"the {name} must be positive, got {value}")
    k = friction_factor_kg_m3 * density_kg_m3 / STANDARD_DENSITY_KG_M3
    return k * perimeter_m * length_m / area_m2**3


def shock_loss_pa(
    x_factor: float, velocity_m_s: float, density_kg_m3: float = STANDARD_DENSITY_KG_M3
) -> float:
    """Shock (local) pressure loss ``p = X·ρ·u²/2`` in Pa ([McP] §5.4)."""
    if x_factor < 0 or density_kg_m3 <= 0:
        raise ValueError("the shock loss factor must be ≥ 0 and the density positive")
    return x_factor * density_kg_m3 * velocity_m_s**2 / 2.0


def shock_resistance(x_factor: float, area_m2: float, density_kg_m3: float = STANDARD_DENSITY_KG_M3) -> float:
    """Resistance equivalent to a shock loss, ``R = X·ρ/(2A²)`` (N·s²/m⁸), from ``p = X·ρ·u²/2``, ``u = Q/A``."""
    if area_m2 <= 0:
        raise ValueError("the area must be positive")
    return shock_loss_pa(x_factor, 1.0, density_kg_m3) / area_m2**2


def series_resistance(resistances_ns2_m8: Sequence[float]) -> float:
    """Airways in series: ``R = ΣRᵢ`` (the same flow, pressure drops add)."""
    _check_resistances(resistances_ns2_m8)
    return float(sum(resistances_ns2_m8))


def parallel_resistance(resistances_ns2_m8: Sequence[float]) -> float:
    """Airways in parallel: ``1/√R = Σ 1/√Rᵢ`` (the same pressure drop, flows add)."""
    _check_resistances(resistances_ns2_m8)
    if any(r == 0 for r in resistances_ns2_m8):
        return 0.0
    return 1.0 / sum(1.0 / math.sqrt(r) for r in resistances_ns2_m8) ** 2


def parallel_split(resistances_ns2_m8: Sequence[float], total_flow_m3_s: float) -> list[float]:
    """Natural split of ``total_flow_m3_s`` between parallel airways: ``Qᵢ = Q·√(R/Rᵢ)`` (m³/s)."""
    combined = parallel_resistance(resistances_ns2_m8)
    if combined == 0:
        raise ValueError("a zero-resistance branch takes all the flow; the split is undefined")
    return [total_flow_m3_s * math.sqrt(combined / r) for r in resistances_ns2_m8]


def air_power_w(pressure_pa: float, flow_m3_s: float) -> float:
    """Air power ``P = p·Q`` in W ([McP] §5.5)."""
    return pressure_pa * flow_m3_s


def _check_resistances(values: Sequence[float]) -> None:
    if not values:
        raise ValueError("give at least one resistance")
    if any(not math.isfinite(r) or r < 0 for r in values):
        raise ValueError("resistances must be finite and not negative")

"""Units at the boundary of the engineering calculations (pint).

Inside :mod:`ventapp.domain` numbers are plain floats in SI units named in the variable
(``flow_m3_s``, ``pressure_pa``); callers that speak other units (m³/min, cfm, inches of water)
convert here, once, with the `pint <https://pint.readthedocs.io>`_ registry.

The registry is made at its first use (:func:`registry`), not at import: importing pint and
parsing its definitions is ~0.5 s of CPU that every start of the app paid before its first
request (issue 18). ``Quantity`` and ``ureg`` are still this module's names (made on first access).
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pint

_made = threading.Lock()


@functools.cache
def _registry() -> pint.UnitRegistry:
    import pint

    ureg = pint.UnitRegistry()
    # pint reads "cfm" as centi-fermi; ventilation engineers mean cubic feet per minute.
    ureg.define("cubic_foot_per_minute = foot ** 3 / minute = cfm")
    return ureg


def registry() -> pint.UnitRegistry:
    """The one unit registry (quantities of two registries cannot be mixed, hence the lock)."""
    with _made:
        return _registry()


def __getattr__(name: str) -> Any:
    if name == "Quantity":
        return registry().Quantity
    if name == "ureg":
        return registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def to_si(value: float | str, unit: str, *, default_unit: str | None = None, what: str = "value") -> float:
    """Convert ``value`` to ``unit`` and return the magnitude.

    Parameters
    ----------
    value : float or str
        A number (taken in ``default_unit``, or in ``unit`` when that is None) or a text with its
        unit, e.g. ``"1200 m³/min"``, ``"40000 cfm"``, ``"1.5 inH2O"``.
    unit : str
        The target unit, e.g. ``"m**3/s"``.
    default_unit : str, optional
        The unit of a bare number.
    what : str
        Name of the quantity for messages.

    Raises
    ------
    ValueError
        The text is not a quantity, or its dimension does not match ``unit``.
    """
    import pint

    Quantity = registry().Quantity
    try:
        if isinstance(value, str):
            quantity = Quantity(value.strip().replace("³", "**3").replace("²", "**2"))
            if not isinstance(quantity, pint.Quantity) or quantity.dimensionless:
                quantity = Quantity(
                    float(quantity.magnitude if hasattr(quantity, "magnitude") else quantity),
                    default_unit or unit,
                )
        else:
            quantity = Quantity(float(value), default_unit or unit)
        return float(quantity.to(unit).magnitude)
    except pint.DimensionalityError:
        raise ValueError(f"the {what} {value!r} is not convertible to {unit}") from None
    except (
        pint.UndefinedUnitError,
        pint.errors.DefinitionSyntaxError,
        TypeError,
        ValueError,
        AttributeError,
    ):
        raise ValueError(f"the {what} {value!r} is not a number with a unit (e.g. '20 m³/s')") from None

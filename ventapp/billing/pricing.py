"""Model prices: the seed table, look-ups, and what a call costs (integer micro-units).

Prices are per million tokens in micro-units of the row's currency (CNY or USD):
``150_000`` means 0.15 per million tokens. A call's cost is rounded half up to a
whole micro-unit, per ledger row, so a day's cost is the exact sum of its rows.

Prices are matched on the exact model name as configured in ``MODEL_NAME``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlalchemy.engine import Engine

from ventapp.db import billing_store
from ventapp.db.billing_models import CURRENCIES, ModelPrice
from ventapp.db.billing_store import PriceRow

Currency = Literal["CNY", "USD"]
MICROS_PER_UNIT = 1_000_000
"""Micro-units in one yuan or dollar."""
TOKENS_PER_PRICE_UNIT = 1_000_000
"""Prices are quoted per this many tokens."""


@dataclass(frozen=True)
class Price:
    """A model's price per million tokens.

    Attributes:
        model: Model name as sent to the endpoint.
        input_micros_per_mtok: Micro-units of ``currency`` per million input tokens.
        output_micros_per_mtok: Micro-units of ``currency`` per million output tokens.
        currency: ``CNY`` or ``USD``.
    """

    model: str
    input_micros_per_mtok: int
    output_micros_per_mtok: int
    currency: str

    def cost_micros(self, input_tokens: int, output_tokens: int) -> int:
        """What a call costs in micro-units of ``currency`` (rounded half up, never negative)."""
        scaled = input_tokens * self.input_micros_per_mtok + output_tokens * self.output_micros_per_mtok
        return max(0, (scaled + TOKENS_PER_PRICE_UNIT // 2) // TOKENS_PER_PRICE_UNIT)

    def public(self) -> dict[str, object]:
        """JSON shape for ``GET /api/usage/pricing``: micro-units plus a readable per-Mtok figure."""
        return {
            "model": self.model,
            "currency": self.currency,
            "input_micros_per_mtok": self.input_micros_per_mtok,
            "output_micros_per_mtok": self.output_micros_per_mtok,
            "input_per_mtok": format_amount(self.input_micros_per_mtok),
            "output_per_mtok": format_amount(self.output_micros_per_mtok),
        }


SEED_PRICES: tuple[Price, ...] = (
    Price("gpt-4o-mini", 150_000, 600_000, "USD"),
    Price("gpt-4o", 2_500_000, 10_000_000, "USD"),
    Price("deepseek-chat", 2_000_000, 8_000_000, "CNY"),
    Price("qwen-plus", 800_000, 2_000_000, "CNY"),
    Price("scripted-demo", 100_000, 200_000, "CNY"),
)
"""Prices the database starts with (migration 0003 holds a frozen copy). ``scripted-demo`` has a
small non-zero price so the demo and the tests exercise billing."""


def price_of(row: ModelPrice | PriceRow) -> Price:
    """The :class:`Price` of a stored price row (the table model or the per-turn read's tuple)."""
    return Price(row.model, row.input_micros_per_mtok, row.output_micros_per_mtok, row.currency)


def get_price(engine: Engine, model: str) -> Price | None:
    """The model's price, or None when it has none (the guard then refuses or bills at zero)."""
    row = billing_store.get_price(engine, model)
    return price_of(row) if row is not None else None


def list_prices(engine: Engine) -> list[Price]:
    """The whole pricing table, by model name."""
    return [price_of(row) for row in billing_store.list_prices(engine)]


def seed_prices(engine: Engine, prices: tuple[Price, ...] = SEED_PRICES) -> int:
    """Add the seed prices of models that have no price yet; an existing (edited) price is kept.

    Returns:
        How many prices were added.
    """
    return billing_store.insert_prices_if_missing(
        engine,
        [
            ModelPrice(
                model=price.model,
                input_micros_per_mtok=price.input_micros_per_mtok,
                output_micros_per_mtok=price.output_micros_per_mtok,
                currency=price.currency,
            )
            for price in prices
        ],
    )


def set_price(engine: Engine, model: str, input_micros: int, output_micros: int, currency: str) -> Price:
    """Set (or replace) a model's price per million tokens, in micro-units of ``currency``.

    Raises:
        ValueError: Blank model, negative price, or a currency other than CNY/USD.
    """
    model = model.strip()
    if not model or len(model) > 128:
        raise ValueError("model must be 1–128 characters")
    if input_micros < 0 or output_micros < 0:
        raise ValueError("prices must be ≥ 0 micro-units per million tokens")
    currency = currency.upper()
    if currency not in CURRENCIES:
        raise ValueError(f"currency must be one of {', '.join(CURRENCIES)}, got {currency!r}")
    billing_store.upsert_price(engine, model, input_micros, output_micros, currency)
    return Price(model, input_micros, output_micros, currency)


def format_amount(micros: int) -> str:
    """Micro-units as a decimal string without float rounding: ``1_234_500`` → ``"1.2345"``."""
    sign = "-" if micros < 0 else ""
    whole, frac = divmod(abs(micros), MICROS_PER_UNIT)
    digits = f"{frac:06d}".rstrip("0")
    return f"{sign}{whole}.{digits}" if digits else f"{sign}{whole}"


def format_money(micros: int, currency: str | None) -> str:
    """A cost for people: ``"¥0.0123"``, ``"$1.5"``; ``"0 (unpriced)"`` without a currency."""
    if currency is None:
        return "0 (unpriced)"
    symbol = {"CNY": "¥", "USD": "$"}.get(currency, currency + " ")
    return f"{symbol}{format_amount(micros)}"


def unpriced_models(engine: Engine, models: list[str]) -> list[str]:
    """The models among ``models`` that have no price, each once, in their order. Blocking: use a thread.

    Such a model's runs are refused (503 ``model_unpriced``) unless ``BILLING_ALLOW_UNPRICED=1``.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The database cannot be read.
    """
    return [model for model in dict.fromkeys(models) if get_price(engine, model) is None]

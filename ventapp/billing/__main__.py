"""Operator commands for the pricing table (the fix named by the ``model_unpriced`` error).

    python -m ventapp.billing list-prices
    python -m ventapp.billing set-price deepseek-chat 2 8 CNY   # per million tokens: input, output
    python -m ventapp.billing retry-pending

Works on ``DATABASE_URL`` from ``ventapp.config``; run ``make migrate`` first on a new database.
"""

from __future__ import annotations

import argparse
import sys
from decimal import Decimal, InvalidOperation

from ventapp.billing.pricing import MICROS_PER_UNIT, list_prices, set_price
from ventapp.billing.settlement import retry_pending
from ventapp.config import get_settings
from ventapp.db.engine import make_engine


def to_micros(amount: str) -> int:
    """A decimal amount (``"0.15"``) as whole micro-units (``150000``), exactly.

    Raises:
        ValueError: Not a number, negative, or finer than one micro-unit.
    """
    try:
        value = Decimal(amount) * MICROS_PER_UNIT
    except InvalidOperation:
        raise ValueError(f"{amount!r} is not a number") from None
    if value < 0 or value != value.to_integral_value():
        raise ValueError(f"{amount!r} must be ≥ 0 with at most 6 decimals")
    return int(value)


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the process exit status."""
    parser = argparse.ArgumentParser(prog="python -m ventapp.billing", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list-prices", help="print the pricing table")
    setter = commands.add_parser("set-price", help="set a model's price per million tokens")
    setter.add_argument("model")
    setter.add_argument("input", help="price per million input tokens, e.g. 0.15")
    setter.add_argument("output", help="price per million output tokens, e.g. 0.60")
    setter.add_argument("currency", nargs="?", default="CNY", choices=["CNY", "USD"])
    commands.add_parser("retry-pending", help="book settlements waiting in billing_pending")
    args = parser.parse_args(argv)

    engine = make_engine(get_settings().database_url)
    try:
        if args.command == "list-prices":
            for price in list_prices(engine):
                info = price.public()
                print(
                    f"{price.model:<32} {price.currency} in {info['input_per_mtok']:>10} out {info['output_per_mtok']:>10} /Mtok"
                )
        elif args.command == "set-price":
            try:
                price = set_price(
                    engine, args.model, to_micros(args.input), to_micros(args.output), args.currency
                )
            except ValueError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            print(f"{price.model}: {price.public()}")
        else:
            report = retry_pending(engine)
            print(f"booked {report.settled}, failed {report.failed}, still pending {report.remaining}")
    finally:
        engine.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

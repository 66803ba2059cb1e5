"""The pricing table: seeded by the migration, seeding never overwrites, integer money."""

from __future__ import annotations

import sqlalchemy as sa

from ventapp.billing.__main__ import main as billing_cli
from ventapp.billing.__main__ import to_micros
from ventapp.billing.pricing import (
    SEED_PRICES,
    Price,
    format_amount,
    format_money,
    get_price,
    list_prices,
    seed_prices,
    set_price,
)
from ventapp.db.billing_store import upsert_price


def test_migration_seeds_every_seed_price(engine: sa.Engine) -> None:
    assert {p.model: p for p in list_prices(engine)} == {p.model: p for p in SEED_PRICES}
    demo = get_price(engine, "scripted-demo")
    assert demo is not None and demo.input_micros_per_mtok > 0 and demo.output_micros_per_mtok > 0
    assert {p.model for p in SEED_PRICES} >= {"gpt-4o-mini", "gpt-4o", "deepseek-chat", "qwen-plus"}


def test_seeding_never_overwrites_an_edited_price(engine: sa.Engine) -> None:
    set_price(engine, "deepseek-chat", 1_000_000, 2_000_000, "CNY")

    added = seed_prices(engine)

    assert added == 0
    assert get_price(engine, "deepseek-chat") == Price("deepseek-chat", 1_000_000, 2_000_000, "CNY")


def test_seeding_adds_only_missing_models(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.execute(sa.text("DELETE FROM model_prices WHERE model = 'qwen-plus'"))
    upsert_price(engine, "gpt-4o", 1, 2, "USD")

    assert seed_prices(engine) == 1
    assert get_price(engine, "qwen-plus") is not None
    assert get_price(engine, "gpt-4o") == Price("gpt-4o", 1, 2, "USD")


def test_cost_rounds_half_up_to_whole_micro_units() -> None:
    price = Price("m", 2_000_000, 8_000_000, "CNY")  # ¥2 / ¥8 per million tokens
    assert price.cost_micros(1_000_000, 0) == 2_000_000
    assert price.cost_micros(1, 0) == 2  # 2 micro-CNY per token
    assert Price("m", 150_000, 0, "USD").cost_micros(3, 0) == 0  # 0.45 -> 0
    assert Price("m", 150_000, 0, "USD").cost_micros(4, 0) == 1  # 0.6 -> 1
    assert price.cost_micros(0, 0) == 0


def test_amounts_format_without_float_drift() -> None:
    assert format_amount(150_000) == "0.15"
    assert format_amount(2_000_000) == "2"
    assert format_amount(1) == "0.000001"
    assert format_money(123_400, "CNY") == "¥0.1234"
    assert format_money(10_000_000, "USD") == "$10"
    assert format_money(0, None) == "0 (unpriced)"


def test_set_price_validates_its_input(engine: sa.Engine) -> None:
    for bad in [("", 1, 1, "CNY"), ("m", -1, 1, "CNY"), ("m", 1, 1, "EUR")]:
        try:
            set_price(engine, *bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")


def test_cli_set_price_parses_decimals_exactly(engine: sa.Engine, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    assert to_micros("0.15") == 150_000 and to_micros("2") == 2_000_000
    for bad in ["abc", "-1", "0.0000001"]:
        try:
            to_micros(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")

    monkeypatch.setattr("ventapp.billing.__main__.make_engine", lambda _url: engine)
    monkeypatch.setattr(engine, "dispose", lambda: None)
    assert billing_cli(["set-price", "my-model", "0.3", "1.2", "USD"]) == 0
    assert get_price(engine, "my-model") == Price("my-model", 300_000, 1_200_000, "USD")
    assert billing_cli(["set-price", "my-model", "x", "1"]) == 2
    assert billing_cli(["list-prices"]) == 0
    assert "my-model" in capsys.readouterr().out

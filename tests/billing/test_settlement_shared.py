"""Billing retries from several processes on one PostgreSQL: every pending settlement is booked once.

Every process runs the retry loop (issue 14); the stable ledger ids are the claim: a pass that
loses the race books nothing, and the daily totals match the ledger. Real PostgreSQL.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.billing.conftest import WriteBreaker
from tests.billing.test_settlement import _assert_daily_matches_ledger, _ledger, _pending_count, _settle
from ventapp.billing.settlement import retry_pending
from ventapp.db.engine import make_engine, upgrade_to_head


def test_three_processes_retrying_at_once_book_each_pending_settlement_once(postgres_server) -> None:  # type: ignore[no-untyped-def]
    url = postgres_server.create_database()
    upgrade_to_head(url)
    engine = make_engine(url)
    breaker = WriteBreaker(engine)
    breaker.break_writes("usage_ledger")
    for n in range(5):
        assert _settle(engine, run_id=f"run-{n}").status == "pending"
    breaker.heal()
    engines = [make_engine(url) for _ in range(3)]  # one pool per "process"

    with ThreadPoolExecutor(3) as pool:
        list(pool.map(retry_pending, engines))

    assert len(_ledger(engine)) == 5 * 3 and _pending_count(engine) == 0
    _assert_daily_matches_ledger(engine)
    for each in (engine, *engines):
        each.dispose()

"""``rename-user`` against the app's other stores (``ventapp.auth.rename`` with ``settings``): the
spool, the graph-state checkpoints, the login throttle, and the refusal while work is under way.

Every store is the real one the app opens with its default settings (SQLite database, SQLite
checkpointer, spool file under ``DATA_DIR``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from langgraph.checkpoint.base import empty_checkpoint
from sqlmodel import Session, select

from ventapp.agent.sqlite_saver import OneTripSqliteSaver
from ventapp.agent.writeback import write_back
from ventapp.auth.rename import rename_user
from ventapp.auth.service import AuthRejected
from ventapp.billing.settlement import spool_payload
from ventapp.billing.usage import CallUsage
from ventapp.config import Settings, load_settings
from ventapp.db import auth_store, user_rename
from ventapp.db.auth_models import LoginThrottle
from ventapp.db.billing_models import UsageLedger
from ventapp.db.engine import make_engine, upgrade_to_head
from ventapp.db.models import ChatSession, ExecutionRun
from ventapp.db.schedule_models import Schedule, ScheduleRun
from ventapp.db.spool import Spool

OLD, NEW = "ops/admin", "ops-admin"
SESSION = "11111111-2222-4333-8444-555555555555"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "DATA_DIR": str(tmp_path)})


@pytest.fixture
def engine(settings: Settings) -> Iterator[sa.Engine]:
    upgrade_to_head(settings.database_url)
    engine = make_engine(settings.database_url)
    with Session(engine) as db:
        db.add(ChatSession(id=SESSION, user_name=OLD, title="fan curve"))
        db.commit()
    yield engine
    engine.dispose()


def _park_usage(settings: Settings, run_id: str = "run-parked", **extra: object) -> None:
    """A settlement of OLD the database refused, parked in the spool as the pipeline parks it."""
    payload = spool_payload(
        run_id=run_id,
        session_id=SESSION,
        user_name=OLD,
        model="scripted-demo",
        calls=[CallUsage(call_key="0", input_tokens=120, output_tokens=30, source="provider")],
        occurred_at=datetime(2026, 12, 1, 8, 0),
    )
    Spool(settings.spool_path).append("settlement", {**payload, **extra})


def _ledger_owners(engine: sa.Engine) -> set[str]:
    with Session(engine) as db:
        return {row.user_name for row in db.exec(select(UsageLedger)).all()}


def test_usage_parked_in_the_spool_is_booked_under_the_new_name(
    engine: sa.Engine, settings: Settings
) -> None:
    """Before: the parked usage stayed in the spool and was booked under the old name at the next start."""
    _park_usage(settings)

    done = rename_user(engine, settings.workspaces_dir, OLD, NEW, settings=settings)

    assert done.rows.get("usage_ledger") == 1, done.rows
    spool = Spool(settings.spool_path)
    assert spool.count() == 0, "the spool was written back before the rows moved"
    write_back(engine, spool)  # what the app does at its next start
    assert _ledger_owners(engine) == {NEW}
    assert user_rename.rows_of(engine, OLD) == {}, "nothing is left under the old name"


def test_a_parked_write_the_database_still_refuses_stops_the_rename(
    engine: sa.Engine, settings: Settings
) -> None:
    _park_usage(settings, model=None)  # a write the database refuses (model is NOT NULL)

    with pytest.raises(AuthRejected) as refused:
        rename_user(engine, settings.workspaces_dir, OLD, NEW, settings=settings)

    assert refused.value.status == 409 and refused.value.code == "busy"
    assert "spool.jsonl" in refused.value.message and "old name" in refused.value.message
    assert refused.value.message.startswith("1 answer or usage record of 'ops/admin' waits in ")
    assert refused.value.worded("zh-CN").startswith("'ops/admin' 有 1 条回答或用量记录")
    assert user_rename.rows_of(engine, OLD) == {"chat_sessions": 1}, "nothing moved"
    assert Spool(settings.spool_path).count() == 1


@pytest.mark.parametrize("table", ["execution_runs", "schedule_runs"])
def test_a_run_or_schedule_claim_under_way_refuses_the_rename(
    engine: sa.Engine, settings: Settings, table: str
) -> None:
    """A running run would write its answer, usage and files under the old name after the move."""
    with Session(engine) as db:
        if table == "execution_runs":
            db.add(ExecutionRun(id="run-live", session_id=SESSION, user_name=OLD, status="running"))
        else:
            db.add(Schedule(id="sched-1", user_name=OLD, name="gas", prompt="p", cron="0 9 * * *"))
            db.flush()
            db.add(
                ScheduleRun(
                    id="run-live",
                    schedule_id="sched-1",
                    user_name=OLD,
                    trigger="cron",
                    scheduled_for=datetime(2026, 12, 1, 1, 0),
                )
            )
        db.commit()

    with pytest.raises(AuthRejected) as refused:
        rename_user(engine, settings.workspaces_dir, OLD, NEW, settings=settings)

    assert (refused.value.status, refused.value.code) == (409, "busy")
    assert f"{table}: run-live" in refused.value.message and "start the app once" in refused.value.message
    assert refused.value.worded("zh-CN").startswith(f"'ops/admin' 有正在进行的工作（{table}: run-live）")
    assert user_rename.rows_of(engine, NEW) == {}, "nothing moved"

    with Session(engine) as db:  # once it has ended, the same rename goes through
        row = db.get(ExecutionRun if table == "execution_runs" else ScheduleRun, "run-live")
        assert row is not None
        row.status = "success" if table == "execution_runs" else "skipped"
        db.add(row)
        db.commit()
    assert rename_user(engine, settings.workspaces_dir, OLD, NEW, settings=settings).rows[table] == 1


async def test_the_owner_in_the_checkpoints_metadata_moves(engine: sa.Engine, settings: Settings) -> None:
    """LangGraph copies ``configurable.user_name`` into every checkpoint's metadata."""
    async with OneTripSqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        for user, thread in ((OLD, SESSION), ("someone", "other-thread")):
            config = {
                "configurable": {"thread_id": thread, "checkpoint_ns": "", "user_name": user, "mode": "full"}
            }
            await saver.aput(config, empty_checkpoint(), {"source": "input", "step": -1}, {})  # type: ignore[arg-type]

    done = rename_user(engine, settings.workspaces_dir, OLD, NEW, settings=settings)

    assert done.checkpoints == 1
    async with OneTripSqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        assert [c async for c in saver.alist(None, filter={"user_name": OLD})] == []
        [moved] = [c async for c in saver.alist(None, filter={"user_name": NEW})]
        assert moved.config["configurable"]["thread_id"] == SESSION
        assert moved.metadata["mode"] == "full" and moved.metadata["step"] == -1, "the rest stays"
        [other] = [c async for c in saver.alist(None, filter={"user_name": "someone"})]
        assert other.config["configurable"]["thread_id"] == "other-thread"


async def test_the_checkpoints_are_put_back_when_the_rows_cannot_move(
    engine: sa.Engine, settings: Settings
) -> None:
    async with OneTripSqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        config = {"configurable": {"thread_id": SESSION, "checkpoint_ns": "", "user_name": OLD}}
        await saver.aput(config, empty_checkpoint(), {"source": "input", "step": -1}, {})  # type: ignore[arg-type]
    with engine.begin() as connection:  # the database refuses the row move
        connection.exec_driver_sql(
            "CREATE TRIGGER refuse BEFORE UPDATE ON chat_sessions BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )

    with pytest.raises(sa.exc.DatabaseError):
        rename_user(engine, settings.workspaces_dir, OLD, NEW, settings=settings)

    async with OneTripSqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        assert len([c async for c in saver.alist(None, filter={"user_name": OLD})]) == 1


def test_the_accounts_login_throttle_moves_with_it(engine: sa.Engine, settings: Settings) -> None:
    """Failed logins still count against the account under its new name (a stale count of the
    new name, an account that did not exist, gives way)."""
    for _ in range(3):
        auth_store.record_failure(engine, f"account:{OLD}", 900, 5)
    auth_store.record_failure(engine, f"account:{NEW}", 900, 5)
    auth_store.record_failure(engine, "address:10.0.0.7", 900, 20)

    done = rename_user(engine, settings.workspaces_dir, OLD, NEW, settings=settings)

    assert done.rows.get("auth_login_throttle") == 1
    with Session(engine) as db:
        counts = {row.key: row.failures for row in db.exec(select(LoginThrottle)).all()}
    assert counts == {f"account:{NEW}": 3, "address:10.0.0.7": 1}


def test_a_checkpoint_store_that_cannot_be_written_moves_nothing_and_says_so(
    engine: sa.Engine, settings: Settings
) -> None:
    settings.checkpoint_path.write_bytes(b"this is not an SQLite file" * 100)

    with pytest.raises(AuthRejected) as refused:
        rename_user(engine, settings.workspaces_dir, OLD, NEW, settings=settings)

    assert (refused.value.status, refused.value.code) == (503, "storage")
    assert "CHECKPOINTER=sqlite" in refused.value.message and "nothing moved" in refused.value.message
    assert refused.value.worded("zh-CN").startswith("图状态存储（CHECKPOINTER=sqlite）无法写入")
    assert user_rename.rows_of(engine, NEW) == {}

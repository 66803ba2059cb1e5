"""Renaming a user whose saved name the rule refuses (``ventapp.auth.rename``; tester's item 4b)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session

from ventapp.agent.workspace import session_dir, user_dir
from ventapp.auth import service
from ventapp.auth.passwords import hash_password
from ventapp.auth.rename import refused_names, rename_user
from ventapp.auth.service import AuthRejected
from ventapp.config_auth import AuthSettings
from ventapp.db import auth_store, session_store
from ventapp.db.models import ChatSession

OLD, NEW = "ops/admin", "ops-admin"
PASSWORD = "a long enough secret"
SESSION = "11111111-2222-4333-8444-555555555555"


def _saved_before_the_rule(engine: sa.Engine, workspaces: Path) -> None:
    """An account, a conversation and its files, all under a name the rule now refuses."""
    auth_store.save_account(engine, OLD, role="operator", password_hash=hash_password(PASSWORD))
    with Session(engine) as db:
        db.add(ChatSession(id=SESSION, user_name=OLD, title="fan curve"))
        db.commit()
    folder = session_dir(workspaces, OLD, SESSION) / "workspace"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("airflow 42 m3/s")


def test_a_refused_name_moves_with_its_conversations_files_and_account(
    engine: sa.Engine, tmp_path: Path
) -> None:
    _saved_before_the_rule(engine, tmp_path)
    assert refused_names(engine) == [
        (OLD, "user_name may hold only letters, digits, spaces and . _ - @ + ' (not '/').")
    ]

    done = rename_user(engine, tmp_path, OLD, f" {NEW} ")

    assert (done.new, done.files_moved) == (NEW, True)
    assert done.rows == {"auth_accounts": 1, "chat_sessions": 1}
    assert session_store.get_owned_session(engine, SESSION, NEW) is not None
    assert (session_dir(tmp_path, NEW, SESSION) / "workspace" / "notes.txt").read_text() == "airflow 42 m3/s"
    assert not user_dir(tmp_path, OLD).exists()
    caller, _token = service.login(engine, AuthSettings(mode="local"), NEW, PASSWORD, "127.0.0.1")
    assert (caller.name, caller.role) == (NEW, "operator"), "the account, password and role moved"
    assert refused_names(engine) == []


@pytest.mark.parametrize(
    ("new", "status", "said"),
    [
        ("ops\\admin", 400, "(not '\\\\')"),
        (OLD, 400, "(not '/')"),
        ("ops", 409, "chat_sessions"),
    ],
)
def test_a_target_the_rule_refuses_or_that_has_data_moves_nothing(
    engine: sa.Engine, tmp_path: Path, new: str, status: int, said: str
) -> None:
    _saved_before_the_rule(engine, tmp_path)
    with Session(engine) as db:
        db.add(ChatSession(user_name="ops", title="someone else's"))
        db.commit()

    with pytest.raises(AuthRejected) as refused:
        rename_user(engine, tmp_path, OLD, new)

    assert (refused.value.status, said in refused.value.message) == (status, True), refused.value.message
    assert session_store.get_owned_session(engine, SESSION, OLD) is not None
    assert user_dir(tmp_path, OLD).exists()


def test_a_target_with_only_a_workspace_folder_is_taken_too(engine: sa.Engine, tmp_path: Path) -> None:
    _saved_before_the_rule(engine, tmp_path)
    user_dir(tmp_path, NEW).mkdir(parents=True)
    with pytest.raises(AuthRejected, match="workspace folder") as refused:
        rename_user(engine, tmp_path, OLD, NEW)
    assert refused.value.status == 409


def test_a_name_with_nothing_stored_is_404(engine: sa.Engine, tmp_path: Path) -> None:
    with pytest.raises(AuthRejected) as refused:
        rename_user(engine, tmp_path, "nobody/here", NEW)
    assert refused.value.status == 404


def test_a_renames_refusals_are_worded_by_the_catalogue(engine: sa.Engine, tmp_path: Path) -> None:
    """The command line says them in English (``message``, as its other refusals); the catalogue
    holds every language, so an API answering them words them as any refusal."""
    _saved_before_the_rule(engine, tmp_path)
    with Session(engine) as db:
        db.add(ChatSession(user_name="ops", title="someone else's"))
        db.commit()
    user_dir(tmp_path, "ops-2").mkdir(parents=True)
    cases = [
        ("nobody/here", NEW, "refusal.rename.nothing_stored", "名字 'nobody/here' 下没有存储任何数据"),
        (NEW, NEW, "refusal.rename.same", "'ops-admin' 和 'ops-admin' 是同一个用户名"),
        (OLD, "ops", "refusal.rename.taken", "'ops' 已经有数据（chat_sessions）"),
        (OLD, "ops-2", "refusal.rename.taken_folder", "'ops-2' 已经有数据（它的工作区文件夹）"),
    ]
    for old, new, key, chinese in cases:
        with pytest.raises(AuthRejected) as refused:
            rename_user(engine, tmp_path, old, new)
        assert refused.value.key == key
        assert refused.value.worded("zh-CN").startswith(chinese), refused.value.worded("zh-CN")
        assert refused.value.worded("en") == refused.value.message

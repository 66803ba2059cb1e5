"""``python -m ventapp.auth``: the first operator comes from the command line, never with a default password."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlmodel import Session

from ventapp.config import PROJECT_ROOT
from ventapp.db.engine import make_engine
from ventapp.db.models import ChatSession


def _run(tmp_path: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {"DEEP_AGENT_ENV_PRIORITY": "none", "DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "ventapp.auth", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        env=env,
        timeout=120,
    )


def test_create_user_reads_the_password_from_stdin_and_never_prints_it(tmp_path: Path) -> None:
    secret = "a long enough secret"
    created = _run(tmp_path, "create-user", "ops", "--operator", stdin=secret + "\n")
    assert created.returncode == 0, created.stderr
    assert "operator" in created.stdout and secret not in created.stdout + created.stderr
    listed = _run(tmp_path, "list-users")
    assert listed.stdout.split() == ["ops", "operator", "password"]


def test_an_empty_or_short_password_creates_nothing(tmp_path: Path) -> None:
    refused = _run(tmp_path, "create-user", "ops", "--operator", stdin="\n")
    assert refused.returncode == 2 and "at least" in refused.stderr
    assert _run(tmp_path, "list-users").stdout == ""


def test_create_user_on_an_existing_operator_keeps_the_role(tmp_path: Path) -> None:
    assert _run(tmp_path, "create-user", "ops", "--operator", stdin="a long enough secret\n").returncode == 0
    again = _run(tmp_path, "create-user", "ops", stdin="another long secret\n")
    assert again.returncode == 0 and "operator" in again.stdout, again.stdout + again.stderr
    assert _run(tmp_path, "list-users").stdout.split() == ["ops", "operator", "password"]


def test_create_user_refuses_a_slash_and_other_unsafe_characters_before_asking_a_password(
    tmp_path: Path,
) -> None:
    for name in ("ops/admin", "../ops", "ops:x", "ops<x>"):
        refused = _run(tmp_path, "create-user", name, "--operator", stdin="a long enough secret\n")
        assert refused.returncode == 2, refused.stdout
        assert "may hold only letters, digits" in refused.stderr and refused.stdout == ""
    assert _run(tmp_path, "list-users").stdout == "", "nothing was created"
    assert _run(tmp_path, "set-role", "ops/admin", "user").returncode == 2


def test_rename_user_moves_a_refused_name_and_refuses_a_bad_or_taken_target(tmp_path: Path) -> None:
    """Tester: users whose saved name the rule now refuses had no way back to their conversations."""
    assert _run(tmp_path, "list-users").returncode == 0  # migrates the database under DATA_DIR
    engine = make_engine(f"sqlite:///{tmp_path / 'ventagent.db'}")
    with Session(engine) as db:
        db.add(ChatSession(user_name="ops/admin", title="fan curve"))
        db.add(ChatSession(user_name="ops", title="someone else's"))
        db.commit()
    engine.dispose()
    listed = _run(tmp_path, "refused-names")
    assert listed.returncode == 0 and listed.stdout.startswith("'ops/admin'\t"), listed.stdout

    for target, said in (("ops:admin", "(not ':')"), ("ops", "already has data (chat_sessions)")):
        refused = _run(tmp_path, "rename-user", "ops/admin", target)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
    renamed = _run(tmp_path, "rename-user", "ops/admin", "ops-admin")

    assert renamed.returncode == 0, renamed.stderr
    assert renamed.stdout.splitlines() == ["chat_sessions\t1", "'ops/admin' is now 'ops-admin'"]
    clean = _run(tmp_path, "refused-names")
    assert clean.stdout == "" and "Every stored user name passes the rule." in clean.stderr
    assert _run(tmp_path, "rename-user", "ops/admin", "ops-admin-2").returncode == 2, "nothing left to move"

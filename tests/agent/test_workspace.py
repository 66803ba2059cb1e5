"""Per-session workspaces (spec 002, "文件隔离"): isolation, traversal refusal, permission order.

The attacks are made the way a model would make them — tool calls through the real
deep agent, its permission checks and our backend — against the scripted model.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from deepagents import FilesystemPermission
from langchain_core.runnables import RunnableLambda

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent import agent_factory
from ventapp.agent import events as ev
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.workspace import (
    HISTORY_AREA,
    WORKSPACE_AREA,
    NoSessionError,
    SessionFilesystemBackend,
    area_dir,
    current_session,
    session_dir,
)
from ventapp.config import load_settings

HOST_SECRET = "TOPSECRET-host-file"
OTHER_SECRET = "TOPSECRET-bob-file"


@pytest.fixture
async def llm() -> AsyncIterator[ScriptedServer]:
    # One server per async test: langchain-openai caches its async client per base_url and loop.
    with ScriptedServer() as server:
        yield server


@pytest.fixture
async def runtime(tmp_path: Path, llm: ScriptedServer) -> AsyncIterator[AgentRuntime]:
    settings = load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "DATA_DIR": str(tmp_path / "data"),
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "x",
            "MODEL_NAME": "scripted-demo",
            "MODEL_MAX_RETRIES": "0",
            "CHECKPOINTER": "memory",
        }
    )
    opened = await AgentRuntime.open(settings)
    try:
        yield opened
    finally:
        await opened.close()


async def _turn(
    runtime: AgentRuntime, llm: ScriptedServer, calls: list[dict[str, Any]], user: str, session_id: str
) -> dict[str, ev.ToolResult]:
    """One turn whose model makes ``calls`` (in one step), then answers; tool results by call id."""
    for index, call in enumerate(calls):
        call.setdefault("id", f"call_{index}")
    llm.push({"tool_calls": calls}, {"content": "done"})
    run = await start_chat(
        runtime, ChatRequest(message="go", user_name=user, session_id=session_id, new_session=True)
    )
    results = {}
    async for event in run.events():
        if isinstance(event, ev.ToolResult):
            results[event.tool_call_id] = event
        assert not isinstance(event, ev.Error), event
    return results


def _workspace(runtime: AgentRuntime, user: str, session_id: str) -> Path:
    folder = area_dir(runtime.settings.workspaces_dir, user, session_id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def test_traversal_attempts_are_refused_with_readable_errors(
    runtime: AgentRuntime, llm: ScriptedServer, tmp_path: Path
) -> None:
    alice, session = "alice", str(uuid.uuid4())
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(HOST_SECRET)
    bob_folder = _workspace(runtime, "bob", str(uuid.uuid4()))
    (bob_folder / "bob.txt").write_text(OTHER_SECRET)
    work = _workspace(runtime, alice, session)
    (work / "ok.txt").write_text("fine")
    os.symlink(outside, work / "link_out")
    os.symlink(outside / "secret.txt", work / "secret_link")
    os.symlink(outside / "secret.txt", work / "secret_link2")
    os.symlink(bob_folder, work / "link_bob")
    os.symlink("..", work / "up")
    os.symlink("../../..", work / "up3")

    attempts: dict[str, dict[str, Any]] = {
        "dotdot": {"name": "read_file", "arguments": {"file_path": "/workspace/../../../../etc/passwd"}},
        "dot_dotdot": {"name": "read_file", "arguments": {"file_path": "/workspace/./../workspace/ok.txt"}},
        "relative": {"name": "read_file", "arguments": {"file_path": "../../outside/secret.txt"}},
        "home": {"name": "read_file", "arguments": {"file_path": "~/.ssh/id_rsa"}},
        "backslashes": {"name": "read_file", "arguments": {"file_path": "/workspace\\..\\..\\secret.txt"}},
        "windows_drive": {"name": "read_file", "arguments": {"file_path": "C:\\Windows\\win.ini"}},
        "nul_byte": {"name": "read_file", "arguments": {"file_path": "/workspace/ok.txt\x00.png"}},
        "host_absolute": {"name": "read_file", "arguments": {"file_path": str(outside / "secret.txt")}},
        "dir_symlink_out": {
            "name": "read_file",
            "arguments": {"file_path": "/workspace/link_out/secret.txt"},
        },
        "file_symlink_out": {"name": "read_file", "arguments": {"file_path": "/workspace/secret_link"}},
        "symlink_other_session": {
            "name": "read_file",
            "arguments": {"file_path": "/workspace/link_bob/bob.txt"},
        },
        "symlink_parent": {"name": "ls", "arguments": {"path": "/workspace/up"}},
        "symlink_grandparent": {"name": "ls", "arguments": {"path": "/workspace/up3"}},
        "ls_symlink_out": {"name": "ls", "arguments": {"path": "/workspace/link_out"}},
        "write_through_dir_link": {
            "name": "write_file",
            "arguments": {"file_path": "/workspace/link_out/planted.txt", "content": "x"},
        },
        "write_through_file_link": {
            "name": "write_file",
            "arguments": {"file_path": "/workspace/secret_link", "content": "overwritten"},
        },
        "edit_through_file_link": {
            "name": "edit_file",
            "arguments": {"file_path": "/workspace/secret_link2", "old_string": "TOP", "new_string": "x"},
        },
        "write_host_path": {
            "name": "write_file",
            "arguments": {"file_path": str(outside / "planted.txt"), "content": "x"},
        },
        "write_skills": {
            "name": "write_file",
            "arguments": {"file_path": "/skills/ventilation-calc/SKILL.md", "content": "x"},
        },
        "write_history": {
            "name": "write_file",
            "arguments": {"file_path": "/conversation_history/fake.md", "content": "x"},
        },
        "glob_everything": {"name": "glob", "arguments": {"pattern": "**/*", "path": "/workspace"}},
        "grep_secret": {"name": "grep", "arguments": {"pattern": "TOPSECRET", "path": "/workspace"}},
    }
    calls = [{**call, "id": key} for key, call in attempts.items()]

    results = await _turn(runtime, llm, calls, alice, session)

    assert set(results) == set(attempts)
    for key, result in results.items():
        assert HOST_SECRET not in result.content and OTHER_SECRET not in result.content, key
    refused = {key for key in attempts if not key.startswith(("glob", "grep"))}
    for key in refused:
        assert results[key].error, (key, results[key].content)
        assert results[key].content.startswith("Error"), (key, results[key].content)
    assert "secret.txt" not in results["glob_everything"].content
    assert "bob.txt" not in results["glob_everything"].content
    assert "ok.txt" in results["glob_everything"].content, "the session's own files stay visible"
    for key in ("dir_symlink_out", "symlink_other_session", "symlink_parent", "write_through_file_link"):
        assert results[key].content.startswith("Error: cannot resolve /workspace/"), key
    assert "permission denied" in results["write_skills"].content
    assert "Path traversal not allowed" in results["dotdot"].content
    # Nothing outside the session's folder changed.
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == HOST_SECRET
    assert (bob_folder / "bob.txt").read_text() == OTHER_SECRET


async def test_the_session_folder_is_keyed_by_user_and_session(
    runtime: AgentRuntime, llm: ScriptedServer
) -> None:
    session = str(uuid.uuid4())
    write = {"name": "write_file", "arguments": {"file_path": "/workspace/notes.md", "content": "alice"}}
    results = await _turn(runtime, llm, [write], "alice", session)
    assert not results["call_0"].error, results["call_0"].content

    root = runtime.settings.workspaces_dir
    assert (session_dir(root, "alice", session) / "workspace" / "notes.md").read_text() == "alice"
    assert "alice" not in str(session_dir(root, "alice", session)), "folder names are hashes"
    assert session_dir(root, "alice", session.upper()) == session_dir(root, "alice", session)
    assert session_dir(root, "bob", session) != session_dir(root, "alice", session)

    other = str(uuid.uuid4())
    read = {"name": "read_file", "arguments": {"file_path": "/workspace/notes.md"}}
    results = await _turn(runtime, llm, [read], "alice", other)
    assert results["call_0"].error, "another session of the same user does not see the file"


async def test_sub_agent_shares_its_parents_folder(runtime: AgentRuntime, llm: ScriptedServer) -> None:
    session = str(uuid.uuid4())
    (_workspace(runtime, "alice", session) / "brief.md").write_text("parent's file")
    llm.push(
        {
            "tool_calls": [
                {
                    "id": "task_1",
                    "name": "task",
                    "arguments": {"description": "read the brief", "subagent_type": "researcher"},
                }
            ]
        },
        {
            "tool_calls": [
                {"id": "sub_ls", "name": "read_file", "arguments": {"file_path": "/workspace/brief.md"}}
            ]
        },
        {"content": "The brief says hello."},
        {"content": "done"},
    )
    run = await start_chat(
        runtime, ChatRequest(message="go", user_name="alice", session_id=session, new_session=True)
    )
    results = {e.tool_call_id: e async for e in run.events() if isinstance(e, ev.ToolResult)}

    assert results["sub_ls"].agent_id != "main"
    assert "parent's file" in results["sub_ls"].content and not results["sub_ls"].error


async def test_permission_order_matters(
    runtime: AgentRuntime, llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pitfall 10: first match wins. The same rules with the broad deny first refuse every write."""
    rules = agent_factory._permissions()
    broad_deny = next(rule for rule in rules if rule.mode == "deny" and rule.paths == ["/**"])
    assert rules.index(broad_deny) == len(rules) - 1, "the broad deny must come last"
    write = {"name": "write_file", "arguments": {"file_path": "/workspace/a.txt", "content": "x"}}

    allowed = await _turn(runtime, llm, [dict(write)], "alice", str(uuid.uuid4()))

    reordered: list[FilesystemPermission] = [broad_deny, *(rule for rule in rules if rule is not broad_deny)]
    monkeypatch.setattr(agent_factory, "_permissions", lambda: reordered)
    await runtime.agents.reload()  # rebuild with the reordered rules
    refused = await _turn(runtime, llm, [dict(write)], "alice", str(uuid.uuid4()))

    assert not allowed["call_0"].error, allowed["call_0"].content
    assert refused["call_0"].error and "permission denied" in refused["call_0"].content


async def test_the_agent_does_not_see_the_tools_own_records(
    runtime: AgentRuntime, llm: ScriptedServer
) -> None:
    """``results/.network-sources/`` (which upload each network result name belongs to) is the
    network tool's: the agent's ls, glob and grep list what is around it, never it."""
    alice, session = "alice", str(uuid.uuid4())
    results = _workspace(runtime, alice, session) / "results"
    (results / ".network-sources").mkdir(parents=True)
    (results / ".network-sources" / "mine").write_text("/workspace/uploads/mine.csv")
    (results / "mine-airflow.csv").write_text("from /workspace/uploads/mine.csv\n")

    seen = await _turn(
        runtime,
        llm,
        [
            {"name": "ls", "arguments": {"path": "/workspace/results"}},
            {"name": "glob", "arguments": {"pattern": "*", "path": "/workspace/results"}},
            {"name": "glob", "arguments": {"pattern": "**", "path": "/workspace/"}},
            {"name": "grep", "arguments": {"pattern": "uploads/mine", "path": "/workspace/"}},
            {"name": "ls", "arguments": {"path": "/workspace/results/.network-sources"}},
        ],
        alice,
        session,
    )

    assert len(seen) == 5
    for call_id, result in seen.items():
        assert ".network-sources" not in result.content, (call_id, result.content)
    for call_id in ("call_0", "call_1", "call_3"):
        assert "mine-airflow.csv" in seen[call_id].content, seen[call_id].content


def _in_run(user: str, session_id: str, operation: Any) -> Any:
    """Call ``operation()`` inside a runnable whose config names the session, as tools are called."""
    config = {"configurable": {"thread_id": session_id, "user_name": user}}
    return RunnableLambda(lambda _: operation()).invoke(None, config=config)  # type: ignore[arg-type]  # RunnableConfig is a TypedDict


def test_backend_itself_refuses_paths_leading_out(tmp_path: Path) -> None:
    """Defence in depth: even without permission rules the backend never follows a path out."""
    session = str(uuid.uuid4())
    backend = SessionFilesystemBackend(tmp_path, WORKSPACE_AREA)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(HOST_SECRET)
    work = area_dir(tmp_path, "alice", session)
    work.mkdir(parents=True)
    os.symlink(outside, work / "link_out")

    read = _in_run("alice", session, lambda: backend.read("/link_out/secret.txt"))
    write = _in_run("alice", session, lambda: backend.write("/link_out/planted.txt", "x"))
    dotdot = _in_run("alice", session, lambda: backend.read("/../../outside/secret.txt"))
    listing = _in_run("alice", session, lambda: backend.ls("/link_out"))
    own = _in_run("alice", session, lambda: backend.write("/notes.md", "mine"))

    for result in (read, write, dotdot, listing):
        assert result.error and "outside this conversation's workspace" in result.error, result
    assert own.error is None and (work / "notes.md").read_text() == "mine"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_backend_outside_a_run_is_an_error_not_a_folder(tmp_path: Path) -> None:
    backend = SessionFilesystemBackend(tmp_path, HISTORY_AREA)

    listing = backend.ls("/")

    assert listing.error and "only available while an agent run" in listing.error
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(NoSessionError):
        current_session()

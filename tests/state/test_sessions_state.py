"""The sidebar's state headless: search, rename, pin, delete and mode against a real store.

Runs the real Reflex event processor (``BaseStateEventProcessor`` + ``StateManagerMemory``)
with a real runtime (SQLite, in-memory checkpointer); no model is needed.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.headless import HeadlessTab, headless_processor, page_env, served_runtime
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.uploads import save_upload
from ventapp.agent.workspace import session_dir
from ventapp.config import load_settings
from ventapp.db import chat_store, session_store
from ventapp.i18n import t
from ventapp.state.chat_state import ChatState
from ventapp.state.lang_state import LangState
from ventapp.state.sessions_state import SessionsState, clean_title

USER = "Ann"


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[AgentRuntime]:
    settings = load_settings(page_env(tmp_path))
    async with served_runtime(settings) as opened:
        yield opened


class Tab(HeadlessTab[SessionsState]):
    """One browser tab: the sidebar's state beside the chat page's."""

    page_state = SessionsState


@pytest.fixture
async def tab(runtime: AgentRuntime) -> AsyncIterator[Tab]:
    async with headless_processor() as processor:
        opened = Tab(processor)
        await opened.fire_on(ChatState, "save_user_name", form_data={"user_name": USER})
        yield opened


def _session(runtime: AgentRuntime, title: str, user: str = USER) -> str:
    session_id = str(uuid.uuid4())
    chat_store.create_session(runtime.engine, session_id, user, title, "full")
    chat_store.add_message(runtime.engine, session_id, "user", title)
    return session_id


async def _titles(tab: Tab) -> list[str]:
    return [s.title for s in (await tab.get(ChatState)).sessions]


def test_clean_title() -> None:
    assert clean_title("  Fan \n room  ") == ("Fan room", "")
    assert clean_title("   ")[0] == "" and clean_title("x" * 201)[1]


@pytest.mark.parametrize(
    ("title", "kept"),
    [
        ("红砂岗风量报告\u202egpj.exe", "红砂岗风量报告gpj.exe"),
        ("a\x00b", "ab"),
        ("巷道\u200b风量", "巷道风量"),
    ],
)
def test_the_rename_dialog_keeps_the_title_it_showed_without_invisible_characters(
    title: str, kept: str
) -> None:
    """try19: "报告\u202egpj.exe" showed as "报告exe.jpg" in the sidebar; try21: refused instead, a zero-width
    space pasted from a chat app could not be found to remove. The API still refuses them."""
    assert clean_title(title, "zh-CN") == (kept, "")
    assert clean_title("\u200b\u200b", "zh-CN") == ("", t("sidebar.title_empty", "zh-CN"))


def test_a_refused_attachment_is_worded_wholly_in_the_ui_language() -> None:
    """The attach box put the upload's English reason inside its Chinese sentence."""
    from ventapp.agent.uploads import UploadRejected, check_upload
    from ventapp.state.sessions_state import upload_problem

    with pytest.raises(UploadRejected) as caught:
        check_upload("a.txt", b"", 1024)
    assert upload_problem(caught.value, 1024, "zh-CN") == "无法附加这个文件（文件是空的）。", (
        "one full stop (tester)"
    )
    assert upload_problem(caught.value, 1024, "en") == "This file cannot be attached (The file is empty)."


@pytest.mark.parametrize(
    ("chosen", "empty", "too_long"),
    [("", "请输入标题。", "标题最多 200 个字符。"), ("en", "Enter a title.", "Use at most 200 characters.")],
)
async def test_the_rename_boxs_error_is_in_the_ui_language(
    tab: Tab, runtime: AgentRuntime, chosen: str, empty: str, too_long: str
) -> None:
    """A title refused in the rename box is worded in the page's language (Chinese by default)."""
    first = _session(runtime, "first about fans")
    if chosen:
        await tab.fire_on(LangState, "set_lang", value=chosen)
    await tab.fire_on(ChatState, "load_page")
    await tab.fire_on(SessionsState, "start_rename", session_id=first, title="first about fans")
    await tab.fire_on(SessionsState, "save_rename", form_data={"title": " \u3000 "})
    assert (await tab.get(SessionsState)).rename_error == empty
    await tab.fire_on(SessionsState, "save_rename", form_data={"title": "x" * 201})
    assert (await tab.get(SessionsState)).rename_error == too_long
    assert await _titles(tab) == ["first about fans"], "a refused title changes nothing"


async def test_search_rename_pin(tab: Tab, runtime: AgentRuntime) -> None:
    first = _session(runtime, "first about fans")
    _session(runtime, "second about ducts")
    _session(runtime, "bob's fans", user="bob")
    await tab.fire_on(ChatState, "load_page")
    assert await _titles(tab) == ["second about ducts", "first about fans"]

    await tab.fire_on(SessionsState, "set_search", query=" FANS ")
    assert [s.title for s in (await tab.get(SessionsState)).search_results] == ["first about fans"]

    await tab.fire_on(SessionsState, "start_rename", session_id=first, title="first about fans")
    await tab.fire_on(SessionsState, "save_rename", form_data={"title": "   "})
    assert (await tab.get(SessionsState)).rename_error
    await tab.fire_on(SessionsState, "save_rename", form_data={"title": " Fan  room A "})
    assert (await tab.get(SessionsState)).rename_id == ""
    assert [s.title for s in (await tab.get(SessionsState)).search_results] == [], "the search is refreshed"

    await tab.fire_on(SessionsState, "toggle_pin", session_id=first, pinned=False)
    sessions = (await tab.get(ChatState)).sessions
    assert [(s.title, s.pinned) for s in sessions] == [("Fan room A", True), ("second about ducts", False)]


async def test_delete_of_the_open_session_clears_the_chat(tab: Tab, runtime: AgentRuntime) -> None:
    doomed = _session(runtime, "doomed chat")
    save_upload(runtime.settings, USER, doomed, "notes.txt", b"data")
    await tab.fire_on(ChatState, "load_page")
    await tab.fire_on(ChatState, "open_session", session_id=doomed)
    assert (await tab.get(ChatState)).session_id == doomed

    await tab.fire_on(SessionsState, "ask_delete", session_id=doomed, title="doomed chat")
    await tab.fire_on(SessionsState, "cancel_delete")
    assert session_store.get_owned_session(runtime.engine, doomed, USER) is not None
    await tab.fire_on(SessionsState, "ask_delete", session_id=doomed, title="doomed chat")
    await tab.fire_on(SessionsState, "confirm_delete")

    chat = await tab.get(ChatState)
    assert (chat.session_id, chat.messages, chat.sessions) == ("", [], [])
    assert session_store.get_owned_session(runtime.engine, doomed, USER) is None
    assert not session_dir(runtime.settings.workspaces_dir, USER, doomed).exists()


async def test_another_users_session_cannot_be_changed_or_opened(tab: Tab, runtime: AgentRuntime) -> None:
    bobs = _session(runtime, "bob's secret", user="bob")

    await tab.fire_on(ChatState, "open_session", session_id=bobs)
    await tab.fire_on(SessionsState, "toggle_pin", session_id=bobs, pinned=False)
    await tab.fire_on(SessionsState, "start_rename", session_id=bobs, title="x")
    await tab.fire_on(SessionsState, "save_rename", form_data={"title": "stolen"})
    await tab.fire_on(SessionsState, "ask_delete", session_id=bobs, title="x")
    await tab.fire_on(SessionsState, "confirm_delete")

    assert (await tab.get(ChatState)).session_id == ""
    row = session_store.get_owned_session(runtime.engine, bobs, "bob")
    assert row is not None and (row.title, row.pinned) == ("bob's secret", False)


async def test_mode_switch_sets_the_open_session_or_the_next_one(tab: Tab, runtime: AgentRuntime) -> None:
    await tab.fire_on(SessionsState, "set_mode", mode="plan")
    assert (await tab.get(ChatState)).mode == "plan"
    await tab.fire_on(SessionsState, "set_mode", mode="yolo")
    assert (await tab.get(ChatState)).mode == "plan"

    session_id = _session(runtime, "a chat")
    await tab.fire_on(ChatState, "open_session", session_id=session_id)
    assert (await tab.get(ChatState)).mode == "full", "opening a session shows its own mode"
    await tab.fire_on(SessionsState, "set_mode", mode="plan")
    row = session_store.get_owned_session(runtime.engine, session_id, USER)
    assert row is not None and row.mode == "plan"


class _Answering:
    """A run of the session in ``runtime.active_runs``: it holds the session lock until it is stopped."""

    def __init__(self, runtime: AgentRuntime, session_id: str) -> None:
        self.user_name, self.stops = USER, 0
        self.lock = runtime.session_lock(session_id)
        self._runtime, self._session_id = runtime, session_id

    def request_stop(self) -> bool:
        self.stops += 1
        asyncio.get_running_loop().call_later(0.3, self._end)  # it saves its partial answer first
        return True

    def _end(self) -> None:
        self._runtime.active_runs.pop(self._session_id, None)
        self.lock.release()


async def test_a_running_conversation_is_said_to_be_running_and_stopped_then_deleted(
    tab: Tab, runtime: AgentRuntime
) -> None:
    """Issue 12: the dialog asked to confirm, then refused because the session was answering."""
    busy = _session(runtime, "busy chat")
    run = runtime.active_runs[busy] = _Answering(runtime, busy)  # holds the lock (the runtime's are weak)
    await run.lock.acquire()
    await tab.fire_on(ChatState, "load_page")

    await tab.fire_on(SessionsState, "ask_delete", session_id=busy, title="busy chat")
    assert (await tab.get(SessionsState)).delete_running is True, "the dialog says so up front"
    await tab.fire_on(SessionsState, "confirm_delete")
    for _ in range(50):  # the delete follows the stop in the background
        if session_store.get_owned_session(runtime.engine, busy, USER) is None:
            break
        await asyncio.sleep(0.1)

    assert run.stops == 1 and session_store.get_owned_session(runtime.engine, busy, USER) is None
    state = await tab.get(SessionsState)
    assert state.delete_running is False and await _titles(tab) == []


async def test_an_idle_conversation_is_not_said_to_be_running(tab: Tab, runtime: AgentRuntime) -> None:
    idle = _session(runtime, "idle chat")
    await tab.fire_on(SessionsState, "ask_delete", session_id=idle, title="idle chat")
    assert (await tab.get(SessionsState)).delete_running is False


async def test_a_file_over_the_limit_is_refused_saying_why_and_the_sentence_goes_with_a_new_chat(
    tmp_path: Path,
) -> None:
    """Tester: a 25 MiB file vanished (``/_upload`` answered 413: no chip, no sentence), and the
    20 MiB file's sentence stayed under the box after 新对话."""
    settings = load_settings(page_env(tmp_path, UPLOAD_MAX_BYTES=str(5 * 1024 * 1024)))
    async with served_runtime(settings), headless_processor() as processor:
        tab = Tab(processor)
        await tab.fire_on(ChatState, "save_user_name", form_data={"user_name": USER})
        await tab.fire_on(ChatState, "load_page")
        assert (await tab.get(ChatState)).upload_max_bytes == 5 * 1024 * 1024, "the browser's maxSize"

        await tab.fire_on(SessionsState, "refuse_drop", codes=["file-too-large"])
        await tab.fire_on(SessionsState, "handle_upload", files=[])  # onDrop, with no file accepted
        chat = await tab.get(ChatState)
        assert chat.upload_error == "文件超过了上传上限 5 MB。" and chat.attachments == []

        await tab.fire_on(ChatState, "new_chat")
        assert (await tab.get(ChatState)).upload_error == ""


async def test_a_file_dropped_beside_one_over_the_limit_is_attached_and_the_refusal_stays(
    tab: Tab,
) -> None:
    """Tester (try17, B): of two files dropped together the allowed one was attached, the
    oversized one vanished unsaid (``handle_upload`` cleared ``refuse_drop``'s sentence)."""
    from io import BytesIO

    import reflex as rx

    await tab.fire_on(ChatState, "load_page")
    await tab.fire_on(SessionsState, "drop_started")  # the zone's on_drop, before refuse_drop
    await tab.fire_on(SessionsState, "refuse_drop", codes=["file-too-large"])
    upload = rx.UploadFile(file=BytesIO(b"q,1\n"), path=Path("airflow.csv"))
    await tab.fire_on(SessionsState, "handle_upload", files=[upload])  # its request came later
    chat = await tab.get(ChatState)
    assert chat.attachments == ["/workspace/uploads/airflow.csv"]
    assert chat.upload_error == "文件超过了上传上限 20 MB。"

    await tab.fire_on(SessionsState, "drop_started")  # the next drop forgets it
    assert (await tab.get(ChatState)).upload_error == ""


async def test_a_refused_files_sentence_is_worded_again_after_a_language_switch(tab: Tab) -> None:
    """Tester (try17, D): the sentence stayed in Chinese after 中文 → English."""
    await tab.fire_on(ChatState, "load_page")
    await tab.fire_on(SessionsState, "refuse_drop", codes=["file-too-large"])
    await tab.fire_on(ChatState, "relocalise", lang="en")
    assert (await tab.get(ChatState)).upload_error == "The file is larger than the 20 MB an upload may have."
    await tab.fire_on(ChatState, "relocalise", lang="zh-CN")
    assert (await tab.get(ChatState)).upload_error == "文件超过了上传上限 20 MB。"

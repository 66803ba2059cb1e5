"""The UI's identity check (issue 15): the socket's handshake headers, verified like the API's."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa
from reflex.event import Event
from reflex.istate.manager.memory import StateManagerMemory
from reflex.state import State
from reflex_base.constants import CompileVars
from reflex_base.event.processor import BaseStateEventProcessor
from reflex_base.utils.format import format_event_handler

from tests.state.chat_harness import (
    SESSION,
    USAGE,
    Browser,
    Client,
    chat_vars,
    paused,
)
from tests.support import patched_env
from ventapp.agent import events as ev
from ventapp.auth import service
from ventapp.config_auth import AuthSettings
from ventapp.db.engine import make_engine
from ventapp.state import auth_state, ui_identity
from ventapp.state import chat_state as cs
from ventapp.state.auth_state import AuthState
from ventapp.state.schedules_state import SchedulesState
from ventapp.state.sessions_state import SessionsState
from ventapp.state.settings_state import SettingsState

PASSWORD = "correct horse battery"


@pytest.fixture
def engine(migrated_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sa.Engine]:
    shutil.copyfile(migrated_template, tmp_path / "db.sqlite")
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    monkeypatch.setattr(ui_identity, "get_runtime", lambda: SimpleNamespace(engine=engine))
    monkeypatch.setattr(auth_state, "get_runtime", lambda: SimpleNamespace(engine=engine))
    yield engine
    engine.dispose()


def test_local_mode_takes_the_session_cookie_and_nothing_else(engine: sa.Engine) -> None:
    service.create_account(engine, "alice", PASSWORD, "operator")
    _, token = service.login(engine, AuthSettings(mode="local"), "alice", PASSWORD, "127.0.0.1")
    with patched_env({"AUTH_MODE": "local"}):
        caller = ui_identity._verify({"cookie": f"lang=en; ventagent_session={token}"}, "127.0.0.1")
        assert caller is not None and (caller.name, caller.role) == ("alice", "operator")
        assert ui_identity._verify({"cookie": "ventagent_session=forged"}, "127.0.0.1") is None
        assert ui_identity._verify({"x-forwarded-user": "alice"}, "127.0.0.1") is None, (
            "no header in local mode"
        )
        assert ui_identity._verify({"cookie": 'broken="'}, "127.0.0.1") is None


def test_header_mode_trusts_the_header_only_from_the_proxy(engine: sa.Engine) -> None:
    with patched_env({"AUTH_MODE": "header", "AUTH_TRUSTED_PROXIES": "10.0.0.0/8"}):
        caller = ui_identity._verify({"x-forwarded-user": " Bob "}, "10.1.2.3")
        assert caller is not None and caller.name == "Bob" and caller.method == "header"
        assert ui_identity._verify({"x-forwarded-user": "Bob"}, "127.0.0.1") is None, "around the proxy"
        assert ui_identity._verify({}, "10.1.2.3") is None


# --- a tab opened before a logout or a password reset (tester's item 1) -----------------------


class _Browser(Browser):
    """Also records the names of every frontend event (a redirect is ``_redirect``)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def emit_update(self, update: Any, token: str) -> None:
        await super().emit_update(update, token)
        self.sent.extend((event.name, dict(event.payload)) for event in update.events)


class _Tab(Client):
    """A tab of a browser holding the login cookie: every event carries the socket's headers."""

    cookie = ""
    page = "/"
    """The browser's address (path and query): Reflex sends it with every event as ``asPath``."""

    async def connect(self, cookie: str) -> None:
        """The socket's handshake: Reflex's hydrate event carries the headers the server keeps."""
        self.cookie = cookie
        await self.fire_on(State, CompileVars.HYDRATE)
        await Client.fire(self, "relocalise", lang="en")

    async def fire_on(self, state_cls: type, name: str, **payload: Any) -> Any:
        event = Event(
            name=format_event_handler(state_cls.event_handlers[name]),  # type: ignore[attr-defined]
            router_data={"headers": {"cookie": self.cookie}, "pathname": "/", "asPath": self.page},
            payload=payload,
        )
        return [delta async for delta in self.processor.enqueue_stream_delta(self.token, event)]

    async def fire(self, name: str, **payload: Any) -> list[dict[str, Any]]:
        return chat_vars(await self.fire_on(cs.ChatState, name, **payload))


@contextlib.asynccontextmanager
async def _local_tab(cookie: str, page: str = "/") -> AsyncIterator[_Tab]:
    """A tab at ``page`` (``AUTH_MODE=local``), its socket connected with ``cookie``."""
    browser = _Browser()
    processor = BaseStateEventProcessor().configure(
        state_manager=StateManagerMemory(),
        event_namespace=browser,  # type: ignore[arg-type]  # only emit_update is used
    )
    with patched_env({"AUTH_MODE": "local"}):
        async with processor:
            tab = _Tab(processor, browser)
            tab.page = page
            await tab.connect(cookie)
            yield tab


@pytest.fixture
async def alice_tab(engine: sa.Engine, pipeline: SimpleNamespace) -> AsyncIterator[_Tab]:
    """Alice signed in (``AUTH_MODE=local``), the chat page loaded, one answer given."""
    service.create_account(engine, "alice", PASSWORD)
    _, token = service.login(engine, AuthSettings(mode="local"), "alice", PASSWORD, "127.0.0.1")
    pipeline.events = [ev.Token(content="hi"), ev.Done(duration_ms=1, usage=USAGE)]
    async with _local_tab(f"ventagent_session={token}") as tab:
        await tab.fire_on(AuthState, "check_login")
        await tab.fire("send", form_data={"message": "first"})
        assert [r.user_name for r in pipeline.requests] == ["alice"], "signed in: it is answered"
        yield tab


def _login_redirects(tab: _Tab) -> list[str]:
    sent = tab.browser.sent  # type: ignore[attr-defined]
    return [str(payload.get("path")) for name, payload in sent if name == "_redirect"]


def _sent_to_login(tab: _Tab) -> bool:
    return any(path.split("?")[0] == "/login" for path in _login_redirects(tab))


@pytest.mark.parametrize("how", ["logout", "password_reset"])
async def test_an_open_tab_loses_its_identity_when_the_login_ends(
    how: str,
    alice_tab: _Tab,
    engine: sa.Engine,
    pipeline: SimpleNamespace,
) -> None:
    if how == "logout":  # in another tab of the same browser: the server-side session ends
        other = _Tab(alice_tab.processor, alice_tab.browser)
        await other.connect(alice_tab.cookie)
        await other.fire_on(AuthState, "logout")
    else:  # the operator's `create-user alice` with a new password
        service.create_account(engine, "alice", "another good passphrase")
    alice_tab.browser.sent.clear()  # type: ignore[attr-defined]

    await alice_tab.fire("send", form_data={"message": "second"})

    assert len(pipeline.requests) == 1, "nothing runs as alice any more"
    state = await alice_tab.state()
    assert (state.user_name, state.messages, state.is_streaming) == ("", [], False)
    assert _sent_to_login(alice_tab)


async def test_session_changes_and_opening_need_a_live_login_too(
    alice_tab: _Tab,
    engine: sa.Engine,
    pipeline: SimpleNamespace,
) -> None:
    service.create_account(engine, "alice", "another good passphrase")
    await alice_tab.fire_on(SessionsState, "start_rename", session_id=SESSION, title="calc")
    await alice_tab.fire_on(SessionsState, "save_rename", form_data={"title": "renamed by a dead tab"})
    assert _sent_to_login(alice_tab)
    assert (await alice_tab.state()).user_name == ""

    alice_tab.browser.sent.clear()  # type: ignore[attr-defined]
    await alice_tab.fire("open_session", session_id=SESSION)
    assert _sent_to_login(alice_tab)


async def test_a_cards_answer_needs_a_live_login(
    alice_tab: _Tab,
    engine: sa.Engine,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    await paused(alice_tab, pipeline)
    assert (await alice_tab.state()).interrupt.kind == "tool_approval"
    service.create_account(engine, "alice", "another good passphrase")  # a reset ends her sessions

    await alice_tab.fire("submit_approval", form_data={})

    assert resume.requests == [], "the approval is not answered as alice"
    assert _sent_to_login(alice_tab)
    assert (await alice_tab.state()).interrupt.kind == ""


async def test_schedules_and_settings_need_a_live_login_too(alice_tab: _Tab, engine: sa.Engine) -> None:
    other = _Tab(alice_tab.processor, alice_tab.browser)
    await other.connect(alice_tab.cookie)
    await other.fire_on(AuthState, "logout")

    for state_cls, name, payload in (
        (SchedulesState, "confirm_delete", {}),
        (SchedulesState, "save", {"form_data": {"name": "n", "prompt": "p", "cron": "0 8 * * *"}}),
        (SettingsState, "save_preferences", {"form_data": {"preferences": "metric units"}}),
        (SettingsState, "set_thinking", {"level": "high"}),
    ):
        alice_tab.browser.sent.clear()  # type: ignore[attr-defined]
        await alice_tab.fire_on(state_cls, name, **payload)
        assert _sent_to_login(alice_tab), f"{state_cls.__name__}.{name}"


# --- the draft across a trip to /login, and a runtime still starting (tester's login items) ------


def _scripts(tab: _Tab) -> list[str]:
    return [str(payload) for name, payload in tab.browser.sent if name == "_call_script"]  # type: ignore[attr-defined]


async def test_a_message_refused_because_the_login_ended_is_kept_for_the_same_user(
    alice_tab: _Tab,
    engine: sa.Engine,
    pipeline: SimpleNamespace,
) -> None:
    service.create_account(engine, "alice", "another good passphrase")  # her sessions end
    alice_tab.browser.sent.clear()  # type: ignore[attr-defined]

    await alice_tab.fire("send", form_data={"message": "my long unsent question"})

    assert _sent_to_login(alice_tab)
    kept = [s for s in _scripts(alice_tab) if ui_identity.DRAFT_KEY in s and "setItem" in s]
    assert kept and '"my long unsent question"' in kept[0] and '"alice"' in kept[0], _scripts(alice_tab)


async def test_the_login_check_puts_the_draft_back_for_the_verified_user_only(alice_tab: _Tab) -> None:
    alice_tab.browser.sent.clear()  # type: ignore[attr-defined]
    await alice_tab.fire_on(AuthState, "check_login")
    restore = [s for s in _scripts(alice_tab) if ui_identity.DRAFT_KEY in s and "getItem" in s]
    assert restore and "alice" in restore[0] and "removeItem" in restore[0], restore
    assert not _sent_to_login(alice_tab)


async def test_a_starting_runtime_is_waited_for_not_taken_for_a_logout(
    engine: sa.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.create_account(engine, "alice", PASSWORD)
    _, token = service.login(engine, AuthSettings(mode="local"), "alice", PASSWORD, "127.0.0.1")
    ready_after = {"calls": 3}

    def runtime() -> SimpleNamespace:
        ready_after["calls"] -= 1
        if ready_after["calls"] > 0:
            raise RuntimeError("the agent runtime is not open")
        return SimpleNamespace(engine=engine)

    monkeypatch.setattr(ui_identity, "get_runtime", runtime)
    monkeypatch.setattr(auth_state, "_STARTUP_POLL_S", 0.01)
    async with _local_tab(f"ventagent_session={token}") as tab:
        deltas = await tab.fire_on(AuthState, "check_login")
        auth = await (await tab.state()).get_state(AuthState)
    said_starting = [
        d
        for d in deltas
        for key, values in d.items()
        if key.endswith("auth_state") and values.get("starting_rx_state_") is True
    ]
    assert said_starting, "the page said the server is starting while it waited"
    assert not _sent_to_login(tab), "a starting server is not a logout"
    assert (auth.signed_in_as, auth.starting) == ("alice", False)


async def test_a_runtime_that_never_comes_keeps_saying_starting(
    engine: sa.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    def runtime() -> SimpleNamespace:
        raise RuntimeError("the agent runtime is not open")

    monkeypatch.setattr(ui_identity, "get_runtime", runtime)
    monkeypatch.setattr(auth_state, "STARTUP_WAIT_S", 0.05)
    monkeypatch.setattr(auth_state, "_STARTUP_POLL_S", 0.01)
    async with _local_tab("ventagent_session=whatever") as tab:
        await tab.fire_on(AuthState, "check_login")
        auth = await (await tab.state()).get_state(AuthState)
    assert auth.starting and not _sent_to_login(tab)


# --- a login returns to the conversation it interrupted, and says why (tester's item) ----------


async def test_a_send_after_a_logout_elsewhere_returns_to_the_open_conversation(
    alice_tab: _Tab,
    pipeline: SimpleNamespace,
) -> None:
    other = _Tab(alice_tab.processor, alice_tab.browser)
    await other.connect(alice_tab.cookie)
    await other.fire_on(AuthState, "logout")
    alice_tab.page = f"/?session={SESSION}"
    alice_tab.browser.sent.clear()  # type: ignore[attr-defined]

    await alice_tab.fire("send", form_data={"message": "my draft"})

    assert _login_redirects(alice_tab) == [f"/login?next=/%3Fsession%3D{SESSION}&reason=ended"]
    assert len(pipeline.requests) == 1, "nothing ran as alice"


@pytest.mark.parametrize(
    ("cookie", "page", "expected"),
    [
        ("", "/?session=abc", "/login?next=/%3Fsession%3Dabc"),
        ("ventagent_session=expired", "/usage?day=2", "/login?next=/usage%3Fday%3D2&reason=ended"),
        ("", "//evil.example/", "/login?next=/"),
    ],
)
async def test_the_login_check_keeps_the_page_and_its_query(
    engine: sa.Engine, cookie: str, page: str, expected: str
) -> None:
    async with _local_tab(cookie, page) as tab:
        await tab.fire_on(AuthState, "check_login")
    assert _login_redirects(tab) == [expected]


@pytest.mark.parametrize(
    ("page", "next_path", "notice"),
    [
        (
            "/login?next=/%3Fsession%3Dabc&reason=ended",
            "/?session=abc",
            "登录已结束（在别处退出、已过期或密码已重置），请重新登录，之后会回到刚才的页面。",
        ),
        ("/login?next=/%3Fsession%3Dabc", "/?session=abc", ""),
        ("/login?next=//evil.example/&reason=ended", "/", "登录已结束"),
        ("/login?error=bad_credentials&next=/&reason=ended", "/", ""),
    ],
)
async def test_the_login_page_returns_to_the_page_and_says_when_a_login_ended(
    engine: sa.Engine, page: str, next_path: str, notice: str
) -> None:
    async with _local_tab("", page) as tab:
        await tab.fire_on(AuthState, "load_login")
        await tab.fire_on(AuthState, "relocalise_login", lang="zh-CN")
        auth = await (await tab.state()).get_state(AuthState)
        zh_notice = auth.login_notice
        await tab.fire_on(AuthState, "relocalise_login", lang="en")
        auth = await (await tab.state()).get_state(AuthState)
    assert auth.next_path == next_path
    assert zh_notice.startswith(notice) and bool(zh_notice) == bool(notice)
    assert ("Your login has ended" in auth.login_notice) == bool(notice)


# --- a logout in this tab, and sidebar actions that find the login gone (tester's items 2, 3) ----


async def test_back_after_a_logout_in_this_tab_does_not_say_the_login_ended(alice_tab: _Tab) -> None:
    """Tester: Back after logging out showed "your login ended"; the tab itself logged out."""
    other = _Tab(alice_tab.processor, alice_tab.browser)
    await other.connect(alice_tab.cookie)  # another tab of the same browser, same cookie
    await other.fire_on(AuthState, "check_login")
    alice_tab.page = f"/?session={SESSION}"
    await alice_tab.fire_on(AuthState, "logout")
    alice_tab.browser.sent.clear()  # type: ignore[attr-defined]

    await alice_tab.fire_on(AuthState, "check_login")  # Back: the chat page mounts again
    assert _login_redirects(alice_tab) == [f"/login?next=/%3Fsession%3D{SESSION}&reason=logged_out"]

    alice_tab.browser.sent.clear()  # type: ignore[attr-defined]
    await other.fire_on(AuthState, "check_login")  # that tab's login did end elsewhere
    assert _login_redirects(other) == ["/login?next=/&reason=ended"]


async def test_a_logout_says_so_on_the_login_page(engine: sa.Engine) -> None:
    async with _local_tab("", "/login?next=/&reason=logged_out") as tab:
        await tab.fire_on(AuthState, "load_login")
        await tab.fire_on(AuthState, "relocalise_login", lang="zh-CN")
        zh_notice = (await (await tab.state()).get_state(AuthState)).login_notice
        await tab.fire_on(AuthState, "relocalise_login", lang="en")
        en_notice = (await (await tab.state()).get_state(AuthState)).login_notice
    assert zh_notice.startswith("你已退出登录") and en_notice.startswith("You logged out")


# --- sidebar actions that find the login gone (tester's item 3) ----------------------------------


@pytest.mark.parametrize(
    ("name", "payload"),
    [
        ("set_search", {"query": "calc"}),
        ("toggle_pin", {"session_id": SESSION, "pinned": False}),
        ("save_rename", {"form_data": {"title": "renamed"}}),
        ("confirm_delete", {}),
        ("set_mode", {"mode": "plan"}),
        ("remove_attachment", {"path": "/workspace/uploads/a.txt"}),
    ],
)
async def test_a_sidebar_action_that_finds_the_login_gone_keeps_the_draft(
    alice_tab: _Tab, engine: sa.Engine, name: str, payload: dict[str, Any]
) -> None:
    """Tester: Send kept the chat box's text across the trip to /login, the sidebar did not."""
    service.create_account(engine, "alice", "another good passphrase")  # her sessions end
    alice_tab.browser.sent.clear()  # type: ignore[attr-defined]

    await alice_tab.fire_on(SessionsState, name, **payload)

    assert _sent_to_login(alice_tab)
    kept = [s for s in _scripts(alice_tab) if ui_identity.DRAFT_KEY in s and "setItem" in s]
    assert kept and '"alice"' in kept[0], _scripts(alice_tab)
    assert (await alice_tab.state()).user_name == ""


# --- New chat and a history click after the login ended elsewhere (tester's F12) -----------------


async def test_new_chat_after_the_login_ended_goes_to_login_saying_why(alice_tab: _Tab) -> None:
    """Tester: "New chat" after a logout in another tab did nothing visible."""
    other = _Tab(alice_tab.processor, alice_tab.browser)
    await other.connect(alice_tab.cookie)
    await other.fire_on(AuthState, "logout")
    alice_tab.page = f"/?session={SESSION}"
    alice_tab.browser.sent.clear()  # type: ignore[attr-defined]

    await alice_tab.fire("new_chat")

    assert _login_redirects(alice_tab) == ["/login?next=/&reason=ended"], "back to a new chat after login"
    assert (await alice_tab.state()).user_name == ""


async def test_a_history_click_after_the_login_ended_returns_to_the_clicked_conversation(
    alice_tab: _Tab, engine: sa.Engine
) -> None:
    """Tester: the login after a sidebar click landed on the page the click was made on."""
    service.create_account(engine, "alice", "another good passphrase")  # her sessions end
    alice_tab.page = "/"
    alice_tab.browser.sent.clear()  # type: ignore[attr-defined]

    await alice_tab.fire("open_session", session_id="clicked-one")

    assert _login_redirects(alice_tab) == ["/login?next=/%3Fsession%3Dclicked-one&reason=ended"]

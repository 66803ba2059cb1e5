"""``user_name`` is one identity on every route (issue 17 item 9): one rule, wherever it travels."""

from __future__ import annotations

import inspect
import uuid
from typing import Any

import httpx
import pytest

from tests.api.sse_client import post_chat


def _titles(client: httpx.Client, user: str | None) -> list[str]:
    params = {} if user is None else {"user_name": user}
    response = client.get("/api/sessions", params=params)
    assert response.status_code == 200, response.text
    return [session["title"] for session in response.json()["sessions"]]


@pytest.mark.parametrize("blank", ["", "   ", "\u00a0\t"])
def test_a_blank_name_is_400_on_every_route(client: httpx.Client, blank: str) -> None:
    chat, _ = post_chat(client, message="hi", user_name=blank)
    read = client.get("/api/sessions", params={"user_name": blank})
    stop = client.post("/api/chat/stop", data={"session_id": str(uuid.uuid4()), "user_name": blank})
    resume = client.post(
        "/api/chat/resume",
        json={"session_id": str(uuid.uuid4()), "interrupt_token": "t", "user_name": blank},
    )
    for response in (chat, read, stop, resume):
        assert response.status_code == 400, (response.request.url, response.text)
        body = response.json()
        assert body["code"] == "bad_request" and "user_name" in body["message"]


@pytest.mark.parametrize(
    "bad", ["al\x00ice", "alice\x1b[2J", "ali\u200bce", "\ufeffalice", "ops/admin", "a\\b", "x<y>"]
)
def test_control_and_invisible_characters_are_refused_and_nothing_is_stored(
    client: httpx.Client, bad: str
) -> None:
    chat, _ = post_chat(client, message=f"from {bad!r}", user_name=bad)
    assert chat.status_code == 400 and chat.json()["code"] == "bad_request"
    assert client.get("/api/usage/today", params={"user_name": bad}).status_code == 400
    assert not any(bad in title for title in _titles(client, None))


def test_spellings_of_one_name_reach_the_same_sessions(client: httpx.Client) -> None:
    name = f"Jos\u00e9 {uuid.uuid4().hex[:6]}"
    decomposed = name.replace("\u00e9", "e\u0301")
    response, frames = post_chat(client, message="first words", user_name=f"\t{decomposed}\u00a0\n")
    assert response.status_code == 200 and frames[-1]["type"] == "done"
    session_id = response.headers["x-session-id"]
    for spelling in (name, f"  {name} ", name.replace(" ", "\u00a0 ")):
        assert _titles(client, spelling) == ["first words"], spelling
        history = client.get(f"/api/chat/history/{session_id}", params={"user_name": spelling})
        assert history.status_code == 200
    assert _titles(client, name.upper()) == [], "case still matters: names are not folded"


def test_an_absent_name_is_default_on_every_route(client: httpx.Client) -> None:
    response, _ = post_chat(client, message=f"anonymous {uuid.uuid4().hex[:6]}")
    assert response.status_code == 200
    session_id = response.headers["x-session-id"]
    assert client.get(f"/api/chat/history/{session_id}").status_code == 200
    own = client.get(f"/api/chat/history/{session_id}", params={"user_name": "default"})
    assert own.status_code == 200


def _dependency_calls(dependant: Any) -> list[Any]:
    calls = []
    for sub in dependant.dependencies:
        calls += [sub.call, *_dependency_calls(sub)]
    return calls


def test_no_route_dependency_runs_on_a_worker_thread() -> None:
    """FastAPI runs a plain ``def`` dependency on a worker thread: a thread hop per request (issue 18).

    Every dependency here is quick and never blocks, so each is ``async def``.
    """
    from fastapi.routing import APIRoute

    from ventapp.api.app import create_api

    sync = {
        f"{route.path}: {call.__qualname__}"
        for route in create_api().routes
        if isinstance(route, APIRoute)
        for call in _dependency_calls(route.dependant)
        if call is not None and not inspect.iscoroutinefunction(call)
    }
    assert sync == set()

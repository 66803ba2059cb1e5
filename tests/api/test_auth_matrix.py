"""Every route × every identity mode, read from the app's own OpenAPI document (issue 15).

No route is listed here: the operations come from ``/openapi.json``, so a route added later is in
the matrix without editing this file. ``x-auth: public`` marks the routes anyone may call
(``/health``, login); ``x-role: operator`` the operator routes (set from their dependency).

Modes: ``local`` (accounts, cookie, API keys), ``header`` (the proxy on loopback is trusted) and
``header-elsewhere`` (the trusted proxy is 10.0.0.0/8, so the tests' loopback requests are a
client going around the proxy).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.api.auth_support import add_account, auth_server, logged_in
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer
from ventapp.config import get_settings
from ventapp.db import preference_store
from ventapp.db.engine import make_engine

MODES = {
    "local": {"AUTH_MODE": "local"},
    "header": {"AUTH_MODE": "header", "AUTH_TRUSTED_PROXIES": "127.0.0.1/32"},
    "header-elsewhere": {"AUTH_MODE": "header", "AUTH_TRUSTED_PROXIES": "10.0.0.0/8"},
}
HEADER = "X-Forwarded-User"
CHINESE = re.compile("[\u4e00-\u9fff]")
BODY_HINTS = {"mode": "plan", "level": "default", "cron": "0 8 * * *"}
"""Valid values of fields whose rule the document states only in words."""


@dataclass
class Server:
    """A server under test in one mode, with its OpenAPI operations."""

    mode: str
    api: ApiServer
    operations: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    components: dict[str, Any] = field(default_factory=dict)

    def as_user(self, name: str) -> httpx.Client:
        """A client identified as ``name`` the way this mode identifies people."""
        if self.mode == "local":
            add_account(name)
            with logged_in(self.api.url, name) as login:
                return httpx.Client(base_url=self.api.url, timeout=30, cookies=login.cookies)
        return httpx.Client(base_url=self.api.url, timeout=30, headers={HEADER: name})


@pytest.fixture(scope="module", params=list(MODES))
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    # Own scripted model per mode: langchain-openai caches its client per base URL and event loop.
    with (
        ScriptedServer() as llm,
        auth_server(tmp_path_factory.mktemp("data"), llm.base_url, **MODES[request.param]) as api,
    ):
        document = httpx.get(f"{api.url}/openapi.json").json()
        operations = [
            (method.upper(), path, op)
            for path, ops in document["paths"].items()
            for method, op in ops.items()
        ]
        yield Server(request.param, api, operations, document.get("components", {}).get("schemas", {}))


def _protected(server: Server) -> list[tuple[str, str, dict[str, Any]]]:
    protected = [op for op in server.operations if op[2].get("x-auth") != "public"]
    assert len(protected) >= 40, "the document lists the whole API"
    return protected


def _minimal(schema: dict[str, Any], components: dict[str, Any]) -> Any:
    """A small value the schema accepts (every declared field filled), for a body that passes validation."""
    if "$ref" in schema:
        return _minimal(components[schema["$ref"].rsplit("/", 1)[-1]], components)
    for combined in ("anyOf", "oneOf", "allOf"):
        if combined in schema:
            return _minimal(schema[combined][0], components)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {name: BODY_HINTS.get(name) or _minimal(prop, components) for name, prop in props.items()}
    if kind == "array":
        return []
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return 1
    if kind == "boolean":
        return True
    return "x" * max(1, schema.get("minLength", 1))


def _request(
    client: httpx.Client, server: Server, method: str, path: str, op: dict[str, Any], values: dict[str, str]
) -> httpx.Response:
    """Call one operation with its path and query parameters taken from ``values`` (else a uuid)
    and a minimal valid body."""
    url = re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), str(uuid.uuid4())), path)
    params = {
        p["name"]: values.get(p["name"], str(uuid.uuid4()))
        for p in op.get("parameters", [])
        if p["in"] == "query" and (p.get("required") or p["name"] in values)
    }
    content = op.get("requestBody", {}).get("content", {})
    kwargs: dict[str, Any] = {}
    if "application/json" in content:
        kwargs["json"] = _minimal(content["application/json"]["schema"], server.components)
    elif "multipart/form-data" in content:
        kwargs["files"] = {"message": (None, "hello"), "session_id": (None, values.get("session_id", ""))}
    elif "application/x-www-form-urlencoded" in content:
        kwargs["data"] = {"session_id": values.get("session_id", str(uuid.uuid4()))}
    elif method in ("POST", "PUT"):
        kwargs["json"] = {}
    return client.request(method, url, params=params, **kwargs)


def _assert_401(response: httpx.Response, what: str, code: str | None = None) -> None:
    assert response.status_code == 401, f"{what}: {response.status_code} {response.text[:200]}"
    body = response.json()
    assert set(body) >= {"detail", "message", "code"}, what
    # Tester: 401s were English under the default zh-CN. ``message`` is in the Accept-Language
    # (Chinese without one), ``detail`` the English sentence.
    assert not CHINESE.search(body["detail"]), (what, body)
    if response.request.headers.get("accept-language") == "en":
        assert body["message"] == body["detail"], what
    else:
        assert CHINESE.search(body["message"]), (what, body)
    if code is not None:
        assert body["code"] == code, what


def test_anonymous_is_401_on_every_route(server: Server) -> None:
    with httpx.Client(base_url=server.api.url, timeout=30) as anonymous:
        for method, path, op in _protected(server):
            _assert_401(_request(anonymous, server, method, path, op, {}), f"{method} {path}")
        assert anonymous.get("/health").status_code in (200, 503), "health stays public"


PROBES = (("GET", "/api/no-such-route"), ("POST", "/api/admin/users"), ("PATCH", "/api/sessions/x/title"))
"""An unknown path, another one, and a known path's unlisted method (404, 404, 405 once identified)."""


def test_an_unknown_api_path_is_401_before_404_so_a_probe_learns_nothing(server: Server) -> None:
    """Tester: ``/api/no-such-route`` answered 404 and ``/api/sessions`` 401 to a caller without an
    identity, so anyone could map the API. Anonymous: 401 everywhere, as the known routes answer."""
    with httpx.Client(base_url=server.api.url, timeout=30) as anonymous:
        for method, path in PROBES:
            for headers in ({}, {"Accept-Language": "en"}):
                _assert_401(
                    anonymous.request(method, path, headers=headers), f"{method} {path}", "unauthenticated"
                )
        # A public path is no secret: its wrong method stays 405 for anyone.
        assert anonymous.get("/api/auth/login").status_code == 405
    if server.mode == "header-elsewhere":
        return  # nobody gets past the proxy check
    with server.as_user(f"prober-{uuid.uuid4().hex[:6]}") as user:
        answers = [user.request(method, path) for method, path in PROBES]
        assert [answer.status_code for answer in answers] == [404, 404, 405]
        assert [answer.json()["code"] for answer in answers] == [
            "not_found",
            "not_found",
            "method_not_allowed",
        ]


def test_a_forged_identity_header_from_a_non_proxy_is_401_on_every_route(server: Server) -> None:
    if server.mode != "header-elsewhere":
        pytest.skip("needs a client that is not the trusted proxy")
    with httpx.Client(base_url=server.api.url, timeout=30, headers={HEADER: "admin"}) as forger:
        for method, path, op in _protected(server):
            _assert_401(_request(forger, server, method, path, op, {}), f"{method} {path}", "forged_identity")


def test_a_header_naming_two_users_is_401(server: Server) -> None:
    """Found by trying it: with the header twice (a proxy that appends), the first value won."""
    if server.mode != "header":
        pytest.skip("needs the trusted proxy")
    with httpx.Client(base_url=server.api.url, timeout=30, headers={"Accept-Language": "en"}) as proxy:
        assert proxy.get("/api/auth/me", headers={HEADER: "alice"}).status_code == 200
        twice = proxy.get("/api/auth/me", headers=[(HEADER, "alice"), (HEADER, "bob")])
        _assert_401(twice, "the header twice", "unauthenticated")
        _assert_401(proxy.get("/api/auth/me", headers={HEADER: "alice, bob"}), "a list", "unauthenticated")


def test_the_proxy_header_carries_utf8_names_like_every_other_name(server: Server) -> None:
    """Found by a tester: ``X-Forwarded-User: 王工`` was 401 — Starlette reads header bytes as
    Latin-1, so the UTF-8 name became mojibake the user-name rule refused."""
    if server.mode != "header":
        pytest.skip("needs the trusted proxy")
    name = f"王工{uuid.uuid4().hex[:4]}"
    with httpx.Client(base_url=server.api.url, timeout=30) as proxy:
        raw = [(HEADER.encode(), name.encode("utf-8"))]
        me = proxy.get("/api/auth/me", headers=raw)
        assert me.status_code == 200, me.text
        assert me.json()["user_name"] == name and me.json()["method"] == "header"
        with proxy.stream("POST", "/api/chat", files={"message": (None, "hello")}, headers=raw) as chat:
            assert chat.status_code == 200, chat.read()
            chat.read()
            session_id = chat.headers["x-session-id"]
        sessions = proxy.get("/api/sessions", headers=raw)
        assert session_id in sessions.text, "the chat is saved under the UTF-8 name"


def test_a_refused_proxy_name_says_which_rule_in_the_callers_language(server: Server) -> None:
    if server.mode != "header":
        pytest.skip("needs the trusted proxy")
    with httpx.Client(base_url=server.api.url, timeout=30) as proxy:
        latin1 = proxy.get("/api/auth/me", headers=[(HEADER.encode(), "Zoë".encode("latin-1"))])
        assert latin1.status_code == 401 and latin1.json()["code"] == "unauthenticated"
        assert "UTF-8" in latin1.json()["message"] and "不是有效的 UTF-8" in latin1.json()["message"]
        assert "not valid UTF-8" in latin1.json()["detail"], "detail stays English"
        slash = [(HEADER.encode(), "王/工".encode()), (b"accept-language", b"zh-CN")]
        unsafe = proxy.get("/api/auth/me", headers=slash)
        assert unsafe.status_code == 401 and "不能包含 '/'" in unsafe.json()["message"], unsafe.text
        assert HEADER in unsafe.json()["message"]
        english = proxy.get("/api/auth/me", headers={HEADER: "a/b", "Accept-Language": "en"})
        assert english.status_code == 401
        assert english.json()["message"] == english.json()["detail"]
        assert (
            "letters (of any script)" in english.json()["message"]
            and "(not '/')" in english.json()["message"]
        )
        blank = proxy.get("/api/auth/me", headers={HEADER: ""})
        assert "为空" in blank.json()["message"], blank.text
        twice = proxy.get("/api/auth/me", headers=[(HEADER, "alice"), (HEADER, "bob")])
        assert "只发送一个用户名" in twice.json()["message"], twice.text


def test_a_revoked_api_key_is_401_on_every_route(server: Server) -> None:
    if server.mode == "header-elsewhere":
        pytest.skip("nobody can create a key without the proxy")
    name = f"keyed-{uuid.uuid4().hex[:6]}"
    with server.as_user(name) as owner:
        created = owner.post("/api/auth/keys", json={"name": "to revoke"}).json()
        with httpx.Client(
            base_url=server.api.url, timeout=30, headers={"Authorization": f"Bearer {created['key']}"}
        ) as keyed:
            assert keyed.get("/api/auth/me").json()["user_name"] == name, "the key works before"
            assert owner.delete(f"/api/auth/keys/{created['id']}").status_code == 204
            for method, path, op in _protected(server):
                _assert_401(
                    _request(keyed, server, method, path, op, {}), f"{method} {path}", "unauthenticated"
                )


def test_a_user_on_operator_routes_is_403(server: Server) -> None:
    if server.mode == "header-elsewhere":
        pytest.skip("nobody gets past the proxy check")
    operator_routes = [op for op in server.operations if op[2].get("x-role") == "operator"]
    assert {path for _, path, _ in operator_routes} >= {"/api/model/thinking", "/api/model/reload"}
    with server.as_user(f"plain-{uuid.uuid4().hex[:6]}") as user:
        for method, path, op in operator_routes:
            response = _request(user, server, method, path, op, {})
            assert response.status_code == 403, f"{method} {path}: {response.status_code}"
            assert response.json()["code"] == "operator_only"


def _owned_by(server: Server, client: httpx.Client, name: str) -> dict[str, str]:
    """Resources of ``name``: a session with a message, a run and an upload, a schedule, an
    approval rule and an API key, by the parameter name routes use for them."""
    files = {"message": (None, "hello"), "file": ("note.csv", b"a,b\n1,2\n", "text/csv")}
    with client.stream("POST", "/api/chat", files=files) as chat:
        assert chat.status_code == 200, chat.read()
        chat.read()
        session_id, run_id = chat.headers["x-session-id"], chat.headers["x-run-id"]
    history = client.get(f"/api/chat/history/{session_id}").json()
    schedule = client.post("/api/schedules", json={"name": "n", "prompt": "p", "cron": "0 8 * * *"})
    assert schedule.status_code == 201, schedule.text
    engine = make_engine(get_settings().database_url)
    try:
        rule = preference_store.add_rule(engine, name, "calculate", "always", None)
    finally:
        engine.dispose()
    return {
        "session_id": session_id,
        "message_id": history["messages"][0]["id"],
        "run_id": run_id,
        "schedule_id": schedule.json()["id"],
        "rule_id": rule.id,
        "key_id": client.post("/api/auth/keys", json={}).json()["id"],
        "path": "/workspace/uploads/note.csv",
    }


def test_user_a_on_user_bs_resources_is_404(server: Server) -> None:
    if server.mode == "header-elsewhere":
        pytest.skip("nobody gets past the proxy check")
    owner, intruder = f"b-{uuid.uuid4().hex[:6]}", f"a-{uuid.uuid4().hex[:6]}"
    with server.as_user(owner) as b, server.as_user(intruder) as a:
        theirs = _owned_by(server, b, owner)
        owned_params = set(theirs) - {"path"}
        checked = []
        for method, path, op in server.operations:
            names = {p["name"] for p in op.get("parameters", []) if p["in"] in ("path", "query")}
            names |= set(re.findall(r"\{(\w+)\}", path))
            if not names & owned_params or op.get("x-role") == "operator":
                continue
            response = _request(a, server, method, path, op, theirs)
            assert response.status_code == 404, (
                f"{method} {path}: {response.status_code} {response.text[:200]}"
            )
            checked.append(path)
        assert len(checked) >= 20, checked
        assert b.get(f"/api/chat/history/{theirs['session_id']}").status_code == 200, "B's session survived"
        assert b.get(f"/api/schedules/{theirs['schedule_id']}").status_code == 200
        assert any(item["active"] for item in b.get("/api/auth/keys").json()["items"])
        assert (
            b.get(f"/api/sessions/{theirs['session_id']}/files", params={"path": theirs["path"]}).status_code
            == 200
        )

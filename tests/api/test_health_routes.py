"""``/health``: the fixed prompt against CONTEXT_LIMIT (issue 19); one entry per subsystem, 503 when one is down (issue 10)."""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.agent.endpoint_probe import EndpointProbe
from ventapp.agent.tool_profiles import LEAN_TOOLS
from ventapp.model_config import ModelRoute


def _measured(url: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        body = httpx.get(f"{url}/health").json()
        if body["model"].get("prompt") is not None or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


@pytest.mark.parametrize(("profile", "fits", "status"), [("full", False, "degraded"), ("lean", True, "ok")])
def test_fixed_prompt_in_a_4k_window(
    llm: ScriptedServer, tmp_path: Any, profile: str, fits: bool, status: str
) -> None:
    env = {**app_env(tmp_path, llm.base_url), "CONTEXT_LIMIT": "4096", "TOOLS_PROFILE": profile}
    with patched_env(env), ApiServer() as server:
        body = _measured(server.url)
        agent = httpx.get(f"{server.url}/api/model").json()["agent"]
        listed = [
            t["name"] for g in httpx.get(f"{server.url}/api/model/tools").json()["groups"] for t in g["tools"]
        ]
    prompt = body["model"]["prompt"]
    assert len(agent["tools"]) == len(listed) == prompt["tool_count"], (
        "what the settings list is what the model gets"
    )
    assert set(agent["tools"]) == set(listed) and "execute" not in listed
    assert (agent["subagents"] == []) is (profile == "lean"), "lean shows the model no `task`"
    assert prompt["fits"] is fits and (prompt["fixed_tokens"] > 0.6 * 4096) is not fits
    if profile == "lean":
        assert prompt["tool_count"] == len(LEAN_TOOLS)
    else:  # every registered tool and the framework's own: more than lean, whatever is registered
        assert prompt["tool_count"] > len(LEAN_TOOLS) + 5
    assert prompt["tools_profile"] == profile
    assert body["status"] == status and body["database"] == "ok"


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there any more


def test_model_endpoint_down_is_503_naming_it(tmp_path: Path) -> None:
    with patched_env(app_env(tmp_path, _closed_port_url())), ApiServer() as server:
        response = httpx.get(f"{server.url}/health", timeout=30)
    assert response.status_code == 503
    body = response.json()
    endpoint = body["subsystems"]["model_endpoint"]
    assert endpoint["status"] == "down" and "not reachable" in endpoint["reason"]
    assert body["status"] == "error" and body["database"] == "ok"
    assert body["subsystems"]["database"]["status"] == "ok"


def test_every_subsystem_reports_and_a_healthy_server_is_200(api: ApiServer) -> None:
    response = httpx.get(f"{api.url}/health", timeout=30)
    assert response.status_code == 200
    subsystems = response.json()["subsystems"]
    assert set(subsystems) == {
        "database",
        "checkpointer",
        "model_endpoint",
        "scheduler",
        "billing",
        "redis",
        "process_guard",
        "mcp_servers",
    }
    assert all(check["status"] == "ok" and check["reason"] for check in subsystems.values()), subsystems
    assert subsystems["model_endpoint"]["http_status"] == 200


def test_unreadable_database_file_is_503(llm: ScriptedServer, tmp_path: Path) -> None:
    with patched_env(app_env(tmp_path, llm.base_url)), ApiServer() as server:
        assert httpx.get(f"{server.url}/health", timeout=30).status_code == 200
        database = tmp_path / "ventagent.db"
        original = database.read_bytes()
        database.write_bytes(b"this is not a database file" * 1000)  # root reads any file: corrupt it instead
        try:
            response = httpx.get(f"{server.url}/health", timeout=30)
        finally:
            database.write_bytes(original)
        assert response.status_code == 503
        body = response.json()
        assert body["subsystems"]["database"]["status"] == "down" and body["database"] == "down"
        assert body["status"] == "error"


async def test_endpoint_probe_is_cached_and_never_shows_the_key() -> None:
    with ScriptedServer() as server:
        route = ModelRoute("default", "m", server.base_url.replace("://", "://user:pw@"), "sk-secret")
        probe = EndpointProbe(ttl_s=60, timeout_s=1)
        first = await probe.check(route)
        server.stop()
        cached = await probe.check(route)
        fresh = await EndpointProbe(ttl_s=0, timeout_s=1).check(route)
    assert first.status == "ok" and cached is first
    assert fresh.status == "down"
    assert "pw" not in str(first.public()) and "sk-secret" not in str(first.public())


def test_health_says_plainly_that_identities_are_not_verified_in_none_mode(client: httpx.Client) -> None:
    auth = client.get("/health").json()["auth"]
    assert auth["mode"] == "none" and auth["verified"] is False
    assert "not verified" in auth["note"] and "trusted network" in auth["note"]


def test_an_unknown_knowledge_document_is_404_worded_by_accept_language(client: httpx.Client) -> None:
    """It was English in both fields: ``message`` follows ``Accept-Language``, ``detail`` English."""
    zh = client.get("/api/kb/no-such-doc")
    en = client.get("/api/kb/no-such-doc", headers={"Accept-Language": "en"})
    assert zh.status_code == en.status_code == 404 and zh.json()["code"] == "not_found"
    assert zh.json()["detail"] == en.json()["message"] == "No such knowledge-base document."
    assert zh.json()["message"] == "找不到这篇知识库文档。"


def test_a_knowledge_document_comes_in_the_asked_language(client: httpx.Client) -> None:
    """The cited document was English only; now ``?lang=`` or ``Accept-Language`` (default Chinese) picks."""
    chinese = client.get("/api/kb/gas-limits")
    english = client.get("/api/kb/gas-limits", headers={"Accept-Language": "en-GB,en;q=0.9"})
    asked = client.get("/api/kb/gas-limits?lang=en", headers={"Accept-Language": "zh-CN"})
    assert chinese.status_code == english.status_code == asked.status_code == 200
    assert chinese.headers["content-language"] == "zh-CN" and "《煤矿安全规程》" in chinese.text
    assert english.headers["content-language"] == asked.headers["content-language"] == "en"
    assert english.text == asked.text and "Coal Mine Safety Regulations" in english.text
    assert chinese.headers["content-type"].startswith("text/markdown")
    assert client.get("/api/kb/gas-limits?lang=fr").status_code == 422


async def test_a_base_url_without_its_api_path_is_degraded_saying_so() -> None:
    """Tester #3: ``OPENAI_BASE_URL`` without ``/v1`` read ``ok`` (HTTP 404 on ``/models``) while every chat got 404."""
    with ScriptedServer() as server:
        bare = server.base_url.removesuffix("/v1")
        check = await EndpointProbe(ttl_s=0, timeout_s=1).check(ModelRoute("default", "m", bare, "k"))
        right = await EndpointProbe(ttl_s=0, timeout_s=1).check(
            ModelRoute("default", "m", server.base_url, "k")
        )
    assert check.status == "degraded" and check.detail["http_status"] == 404, check
    assert "404" in check.reason and "/v1" in check.reason and "OPENAI_BASE_URL" in check.reason
    assert right.status == "ok"


def test_an_unpriced_model_is_degraded_and_warned_at_start(
    llm: ScriptedServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Tester #3: ``MODEL_NAME`` without a price read ``ok`` everywhere, silently, while every chat got 503."""
    env = {**app_env(tmp_path, llm.base_url), "MODEL_NAME": "qwen2.5-14b-instruct"}
    with (
        caplog.at_level(logging.WARNING, logger="ventapp"),
        patched_env(env),
        ApiServer() as server,
    ):
        body = httpx.get(f"{server.url}/health", timeout=30).json()
    billing = body["subsystems"]["billing"]
    assert body["status"] == "degraded" and billing["status"] == "degraded", body
    assert "qwen2.5-14b-instruct" in billing["reason"] and "model_unpriced" in billing["reason"]
    assert billing["unpriced_models"] == ["qwen2.5-14b-instruct"]
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("qwen2.5-14b-instruct" in line and "BILLING_ALLOW_UNPRICED" in line for line in warned), warned


async def test_a_key_of_dotenv_nothing_reads_is_listed_with_the_closest_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """try19: ``CONTEXT_LIMT=64000`` in ``.env`` was ignored and ``/health`` said nothing."""
    from ventapp.api import health_routes
    from ventapp.api.app import create_api
    from ventapp.config import load_settings

    def starting() -> None:
        raise RuntimeError("the agent runtime is not open")

    dotenv = tmp_path / ".env"
    dotenv.write_text("CONTEXT_LIMT=64000\nLANGSMITH_API_KEY=ls\n")
    settings = load_settings({}, env_file=dotenv)
    monkeypatch.setattr(health_routes, "get_settings", lambda: settings)
    monkeypatch.setattr(health_routes, "get_runtime", starting)  # another test's runtime is not this one
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_api(settings=settings)), base_url="http://127.0.0.1"
    ) as client:
        body = (await client.get("/health")).json()
    assert body["config_unknown_keys"] == [
        {
            "key": "CONTEXT_LIMT",
            "suggestion": "CONTEXT_LIMIT",
            "detail": "CONTEXT_LIMT in .env is not a setting VentAgent reads; did you mean CONTEXT_LIMIT?",
        }
    ]
    assert body["config_conflicts"] == [] and body["model"]["context_limit"] == 128000

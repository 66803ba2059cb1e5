"""End to end over real HTTP: upload a network, the agent calls solve_ventilation_network, and the
figure it wrote is served to its owner only (``GET /api/sessions/{id}/files``)."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from tests.domain.network.benchmark_data import DATA_DIR
from tests.scripted_llm.server import ScriptedServer

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FIGURE = "/workspace/results/network-network.png"


def _upload_and_solve(client: httpx.Client, llm: ScriptedServer, user: str) -> tuple[str, dict]:
    llm.push(
        {
            "tool_calls": [
                {
                    "id": "solve",
                    "name": "solve_ventilation_network",
                    "arguments": {"path": "/workspace/uploads/network.csv", "total_flow": 151.295},
                }
            ]
        },
        {"content": f"Solved.\n\n![network]({FIGURE})"},
    )
    data = (DATA_DIR / "A_hongshagang_1" / "topology.csv").read_bytes()
    form = {"message": "solve my network", "user_name": user}
    with client.stream("POST", "/api/chat", data=form, files={"file": ("network.csv", data)}) as response:
        assert response.status_code == 200
        frames = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
        session_id = response.headers["x-session-id"]
    (result,) = [f for f in frames if f["type"] == "tool_result" and f["tool_call_id"] == "solve"]
    return session_id, result


def test_the_tool_solves_the_upload_and_its_figure_is_served_to_the_owner(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    user = f"user-{uuid.uuid4().hex[:8]}"
    session_id, result = _upload_and_solve(client, llm, user)
    payload = json.loads(result["content"])

    assert result["error"] is False
    assert payload["data"]["converged"] is True and FIGURE in payload["data"]["figures"]
    figure = client.get(f"/api/sessions/{session_id}/files", params={"user_name": user, "path": FIGURE})
    assert figure.status_code == 200 and figure.headers["content-type"] == "image/png"
    assert figure.content.startswith(PNG_MAGIC)
    assert figure.headers["cache-control"] == "private, no-store"
    table = client.get(
        f"/api/sessions/{session_id}/files",
        params={"user_name": user, "path": "/workspace/results/network-airways.csv"},
    )
    assert table.status_code == 200 and "副立井" in table.content.decode("utf-8-sig")


@pytest.mark.parametrize(
    "path",
    [
        "/workspace/results/nothing.png",
        "/workspace/../../checkpoints.db",
        "/workspace/uploads/network.csv/../../../x.png",
        "/conversation_history/x.png",
        "/workspace/uploads/network.txt",
        "/etc/passwd",
    ],
)
def test_paths_outside_the_workspace_or_of_other_types_are_404(
    client: httpx.Client, llm: ScriptedServer, path: str
) -> None:
    user = f"user-{uuid.uuid4().hex[:8]}"
    session_id, _ = _upload_and_solve(client, llm, user)
    response = client.get(f"/api/sessions/{session_id}/files", params={"user_name": user, "path": path})
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    # Worded like the other refusals (tester): Chinese by default, the English sentence as detail.
    assert (response.json()["message"], response.json()["detail"]) == ("找不到这个文件。", "File not found.")


def test_another_user_gets_404_for_the_same_figure(client: httpx.Client, llm: ScriptedServer) -> None:
    owner = f"user-{uuid.uuid4().hex[:8]}"
    session_id, _ = _upload_and_solve(client, llm, owner)
    stolen = client.get(f"/api/sessions/{session_id}/files", params={"user_name": "mallory", "path": FIGURE})
    assert stolen.status_code == 404 and stolen.json()["detail"] == "Session not found."


def test_workspace_lists_the_upload_and_what_the_agent_wrote_to_its_owner_only(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    owner = f"user-{uuid.uuid4().hex[:8]}"
    session_id, _ = _upload_and_solve(client, llm, owner)
    listing = client.get(f"/api/sessions/{session_id}/workspace", params={"user_name": owner})
    assert listing.status_code == 200
    files = {f["path"]: f for f in listing.json()["files"]}
    assert "/workspace/uploads/network.csv" in files and FIGURE in files
    assert files[FIGURE]["size_bytes"] > 1000 and files[FIGURE]["modified"].endswith("Z")
    other = client.get(f"/api/sessions/{session_id}/workspace", params={"user_name": "mallory"})
    assert other.status_code == 404 and other.json()["code"] == "not_found"

    download = client.get(
        f"/api/sessions/{session_id}/files", params={"user_name": owner, "path": FIGURE, "download": "1"}
    )
    assert download.status_code == 200 and download.content.startswith(PNG_MAGIC)
    assert download.headers["content-disposition"].startswith("attachment")
    stolen = client.get(
        f"/api/sessions/{session_id}/files", params={"user_name": "mallory", "path": FIGURE, "download": "1"}
    )
    assert stolen.status_code == 404


def test_the_demo_model_solves_an_uploaded_network_when_asked(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    """`make demo`: "solve" with an uploaded topology calls the solver (README, demo model)."""
    llm.reset()
    user = f"user-{uuid.uuid4().hex[:8]}"
    data = (DATA_DIR / "A_hongshagang_1" / "topology.csv").read_bytes()
    form = {"message": "please solve this network, total flow 151.295", "user_name": user}
    with client.stream("POST", "/api/chat", data=form, files={"file": ("network.csv", data)}) as response:
        frames = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    (call,) = [f for f in frames if f["type"] == "tool_call"]
    assert call["tool"] == "solve_ventilation_network" and call["args"]["total_flow"] == 151.295
    (result,) = [f for f in frames if f["type"] == "tool_result"]
    assert result["error"] is False and json.loads(result["content"])["data"]["converged"] is True
    answer = "".join(f["content"] for f in frames if f["type"] == "token")
    assert answer.startswith("The network solution converged in ") and "m³/s" in answer and FIGURE in answer


@pytest.mark.parametrize(
    ("accept", "sentence"), [(None, "没有东西驱动风流"), ("en-US,en;q=0.9", "Nothing drives the air: no fan")]
)
def test_an_api_run_words_what_its_tools_write_in_the_accept_language(
    client: httpx.Client, llm: ScriptedServer, accept: str | None, sentence: str
) -> None:
    """An API client's tools spoke Chinese whatever Accept-Language said (the figures and refusals)."""
    llm.push(
        {
            "tool_calls": [
                {
                    "id": "solve",
                    "name": "solve_ventilation_network",
                    "arguments": {"path": "/workspace/uploads/network.csv"},
                }
            ]
        },
        {"content": "No flow."},
    )
    data = (DATA_DIR / "A_hongshagang_1" / "topology.csv").read_bytes()
    form = {"message": "solve my network", "user_name": f"user-{uuid.uuid4().hex[:8]}"}
    headers = {"Accept-Language": accept} if accept else {}
    with client.stream(
        "POST", "/api/chat", data=form, files={"file": ("network.csv", data)}, headers=headers
    ) as response:
        frames = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    (result,) = [f for f in frames if f["type"] == "tool_result" and f["tool_call_id"] == "solve"]
    assert result["error"] is True and "[no_driver]" in result["content"] and sentence in result["content"]


def test_the_demo_solves_two_chinese_named_uploads_and_each_keeps_its_figure(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    """Tester: a name with blanks was never solved; two Chinese names shared ``_-network.png``."""
    llm.reset()
    user = f"user-{uuid.uuid4().hex[:8]}"
    session_id, figures = None, []
    for name, folder, flow in [
        ("红砂岗 一号矿 网络(A)#1 & v2.csv", "A_hongshagang_1", 151.295),
        ("大柳塔.csv", "B_hongshagang_difficult", 154.09),
    ]:
        form = {"message": f"解算这个网络，总风量 {flow}", "user_name": user}
        if session_id:
            form["session_id"] = session_id
        data = (DATA_DIR / folder / "topology.csv").read_bytes()
        with client.stream("POST", "/api/chat", data=form, files={"file": (name, data)}) as response:
            frames = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
            session_id = response.headers["x-session-id"]
        (call,) = [f for f in frames if f["type"] == "tool_call"]
        assert call["args"]["path"] == f"/workspace/uploads/{name}"
        (result,) = [f for f in frames if f["type"] == "tool_result"]
        figures.append(json.loads(result["content"])["data"]["figures"][0])
        answer = "".join(f["content"] for f in frames if f["type"] == "token")
        assert f"]({figures[-1]})" in answer, "the answer embeds its own network's figure"

    assert figures == [
        "/workspace/results/红砂岗_一号矿_网络_A_1_v2-network.png",
        "/workspace/results/大柳塔-network.png",
    ]
    served = [
        client.get(f"/api/sessions/{session_id}/files", params={"user_name": user, "path": path})
        for path in figures
    ]
    assert all(r.status_code == 200 and r.content.startswith(PNG_MAGIC) for r in served)
    assert served[0].content != served[1].content

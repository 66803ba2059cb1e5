"""JSON error bodies: every 422 has the ``errors`` list FastAPI's own validation errors have."""

from __future__ import annotations

import json

import httpx

from ventapp.api.errors import error_response


def _body(**kwargs: object) -> dict[str, object]:
    return json.loads(bytes(error_response(**kwargs).body))  # type: ignore[arg-type]


def test_a_hand_made_422_gets_an_errors_entry_naming_its_field() -> None:
    body = _body(
        status=422, code="bad_request", message="mode must be 'plan' or 'full'.", details={"field": "mode"}
    )
    assert body["errors"] == [{"type": "bad_request", "loc": ["body", "mode"], "msg": body["message"]}]
    bare = _body(status=422, code="bad_request", message="Invalid.")
    assert bare["errors"] == [{"type": "bad_request", "loc": [], "msg": "Invalid."}]


def test_errors_given_are_kept_and_other_statuses_get_none() -> None:
    given = [{"type": "value_error", "loc": ["query", "limit"], "msg": "too big", "input": "500"}]
    assert _body(status=422, code="bad_request", message="x", details={"errors": given})["errors"] == given
    assert "errors" not in _body(status=404, code="not_found", message="Not found.")


def test_422s_of_different_routes_share_the_shape(client: httpx.Client) -> None:
    validation = client.post("/api/schedules", json={"user_name": "alice", "name": "x"})
    paging = client.get("/api/usage/recent", params={"limit": "0"})
    for response in (validation, paging):
        assert response.status_code == 422, response.text
        body = response.json()
        assert {"detail", "message", "code", "errors"} <= set(body) and body["errors"], body

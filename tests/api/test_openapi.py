"""The OpenAPI document tells the truth: schemathesis over every operation (issue 17 item 11).

Schemathesis generates requests from the live API's own ``/openapi.json`` (well-formed ones
and deliberately malformed ones) and sends them over loopback to the API with the
scripted model. The run fails on any 5xx, a status the document does not list for that
operation, a body, header or content type other than the one it declares (including
every SSE frame of a stream), or malformed input that is not refused with a 4xx.

Bounded: :data:`EXAMPLES` requests per operation and mode, derandomised (well under a
minute on the CI machine kind). Schemathesis' pytest plugin does not run under pytest 9
(it writes ``Node._nodeid``), so its Python API drives Hypothesis directly.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support import ApiServer

EXAMPLES = 20
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


def _fuzz(operation: schemathesis.APIOperation, mode: GenerationMode, base_url: str) -> Callable[[], None]:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    def run(case: schemathesis.Case) -> None:
        case.call_and_validate(base_url=base_url, checks=CHECKS, timeout=30)

    return run


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
def test_every_operation_conforms_to_the_document(api: ApiServer, mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_url(f"{api.url}/openapi.json")
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        try:
            _fuzz(operation, mode, api.url)()
        except Unsatisfiable:
            assert mode is GenerationMode.NEGATIVE, "every operation has well-formed input"
            continue  # nothing about this operation can be malformed (no body, no constrained field)
        except Exception as failure:  # collect every operation's failure, then report them all
            failures.append(f"{operation.method.upper()} {operation.path}:\n{failure}")
    assert operations >= 20, "the document lists the whole API"
    assert not failures, "\n\n".join(failures)


def test_the_document_states_the_contract(api: ApiServer) -> None:
    document = httpx.get(f"{api.url}/openapi.json").json()
    chat = document["paths"]["/api/chat"]["post"]
    body = chat["requestBody"]["content"]["multipart/form-data"]["schema"]
    form = document["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]
    assert "message" in form["required"]
    assert "text/event-stream" in chat["responses"]["200"]["content"]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status in ("400", "405", "413", "422", "503"):
                error = operation["responses"][status]["content"]["application/json"]["schema"]
                # /health answers 503 with its own body when a subsystem is down (issue 10).
                expected = "HealthBody" if (path, status) == ("/health", "503") else "ErrorBody"
                assert error == {"$ref": f"#/components/schemas/{expected}"}, (method, path, status)
    assert set(document["components"]["schemas"]["ErrorBody"]["required"]) == {"detail", "message", "code"}


WHOLE_NAMES = {"limit", "offset", "after", "last-event-id"}
"""Parameters that carry a whole number whatever their declared type (the usage ledger's paging is
declared a string so that a bad page gets the route's own sentence)."""


def _whole_parameters(document: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """``(method, path, location, name)`` of every query or header parameter holding a whole number."""
    found = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                types = {schema.get("type"), *(option.get("type") for option in schema.get("anyOf", []))}
                if parameter["in"] in {"query", "header"} and (
                    "integer" in types or parameter["name"].lower() in WHOLE_NAMES
                ):
                    found.append((method, path, parameter["in"], parameter["name"]))
    return found


def test_whole_numbers_beyond_64_bits_are_422_json_on_every_route(api: ApiServer) -> None:
    """Tester's item: ``offset=99999999999999999999`` was a 500 (the driver's OverflowError)."""
    document = httpx.get(f"{api.url}/openapi.json").json()
    parameters = _whole_parameters(document)
    assert ("get", "/api/usage/recent", "query", "offset") in parameters
    assert ("get", "/api/chat/stream", "query", "after") in parameters
    some_id = str(uuid.uuid4())
    for method, path, location, name in parameters:
        url = api.url + re.sub(r"\{[^}]+\}", some_id, path)
        for value in (str(2**63), "99999999999999999999"):
            response = httpx.request(
                method.upper(),
                url,
                params={"session_id": some_id, **({name: value} if location == "query" else {})},
                headers={name: value} if location == "header" else {},
                timeout=30,
            )
            where = f"{method.upper()} {path} {name}={value}"
            assert response.status_code == 422, f"{where}: {response.status_code} {response.text[:200]}"
            assert response.json()["code"] == "bad_request", where
        largest = httpx.request(
            method.upper(), url, params={"session_id": some_id, name: str(2**63 - 1)}, timeout=30
        )
        assert largest.status_code < 500, f"{method.upper()} {path} {name}=2**63-1: {largest.status_code}"


def test_docs_is_no_blank_page_but_points_at_the_document(api: ApiServer) -> None:
    """Tester's item 4: ``/docs`` loaded Swagger from cdn.jsdelivr.net, which the CSP blocks (and
    the site may be offline): a blank page. It is a 404 JSON naming ``/openapi.json`` now."""
    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        response = httpx.get(f"{api.url}{path}", timeout=30)
        assert response.status_code == 404, path
        assert "cdn" not in response.text.lower(), path
        if path != "/docs/oauth2-redirect":
            assert response.json()["code"] == "not_found" and "/openapi.json" in response.json()["message"]
    assert httpx.get(f"{api.url}/openapi.json", timeout=30).json()["paths"]

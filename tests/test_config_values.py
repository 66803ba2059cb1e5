"""Numbers that are not numbers, and ``.env`` keys nobody reads (try19)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ventapp.config import KEYS, load_settings, warn_conflicts


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


NUMERIC_KEYS = sorted(key for key, (default, _) in KEYS.items() if default and _is_number(default))
"""Every key whose default is a number: seconds, counts, ports, temperature, flags (new keys included)."""


def _load(**values: str):
    return load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", **values})


def test_the_numeric_keys_are_all_there() -> None:
    assert {"RUN_TIMEOUT_S", "ANSWER_SAVE_INTERVAL_S", "MCP_RETRY_S", "AUTH_LOGIN_WINDOW_S", "PORT"} <= set(
        NUMERIC_KEYS
    )


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity", "1e309", "-1e309"])
@pytest.mark.parametrize("key", NUMERIC_KEYS)
def test_a_number_that_is_not_finite_is_refused_naming_the_key(key: str, value: str) -> None:
    """try19: ``RUN_TIMEOUT_S=nan`` passed ``<= 0`` (false for NaN), then every run broke in call_later."""
    with pytest.raises(ValueError, match=key) as refused:
        _load(**{key: value})
    assert repr(value) in str(refused.value), "the message quotes the text as written"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e309", "0", "-1", "abc"])
def test_seconds_keys_say_positive_number_of_seconds(value: str) -> None:
    with pytest.raises(ValueError) as refused:
        _load(RUN_TIMEOUT_S=value)
    assert str(refused.value) == f"RUN_TIMEOUT_S must be a positive number of seconds, got {value!r}"
    with pytest.raises(ValueError) as refused:
        _load(MCP_RETRY_S=value)
    assert str(refused.value) == f"MCP_RETRY_S must be a positive number of seconds, got {value!r}"


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_keys_where_0_is_off_say_so(value: str) -> None:
    with pytest.raises(ValueError) as refused:
        _load(ANSWER_SAVE_INTERVAL_S=value)
    assert str(refused.value) == (
        f"ANSWER_SAVE_INTERVAL_S must be 0 (off) or a positive number of seconds, got {value!r}"
    )


def test_finite_numbers_still_load() -> None:
    settings = _load(RUN_TIMEOUT_S="1.5", ANSWER_SAVE_INTERVAL_S="0", SSE_KEEPALIVE_S="0", MCP_RETRY_S="2e1")
    assert settings.run_timeout_s == 1.5 and settings.answer_save_interval_s == 0.0
    assert settings.sse_keepalive_s == 0.0 and settings.mcp.retry_s == 20.0
    assert _load(MODEL_TEMPERATURE="2").model_temperature == 2.0


def _env_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / ".env"
    path.write_text(text)
    return path


def test_a_misspelt_key_in_dotenv_is_named_with_the_closest_setting(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """try19: ``CONTEXT_LIMT=64000`` started with CONTEXT_LIMIT's default and no word about it."""
    settings = load_settings(
        {}, env_file=_env_file(tmp_path, "CONTEXT_LIMT=64000\nmodel_name=x\nFOO_BAR=1\n")
    )
    assert settings.context_limit == 128000, "still a warning, not a refusal"
    assert [(u.key, u.suggestion) for u in settings.unknown_keys] == [
        ("CONTEXT_LIMT", "CONTEXT_LIMIT"),
        ("model_name", "MODEL_NAME"),
        ("FOO_BAR", ""),
    ]
    with caplog.at_level(logging.WARNING, logger="ventapp.config"):
        warn_conflicts(settings)
    lines = [record.getMessage() for record in caplog.records]
    assert "CONTEXT_LIMT in .env is not a setting VentAgent reads; did you mean CONTEXT_LIMIT?" in lines
    assert "FOO_BAR in .env is not a setting VentAgent reads; it is ignored" in lines


def test_only_the_dotenv_file_is_checked_and_other_tools_keys_pass(tmp_path: Path) -> None:
    text = (
        "OPENAI_ORG_ID=org-1\nOPENAI_API_VERSION=1\nLANGSMITH_API_KEY=ls\nLANGCHAIN_TRACING_V2=true\n"
        "REFLEX_REDIS_URL=redis://h\nVITE_X=1\nhttps_proxy=http://p:3128\nDATABASE_URL=sqlite:///x.db\n"
        "BASE=http://127.0.0.1:8000\nOPENAI_BASE_URL=${BASE}/v1\nDOCS_TOKEN=t\n"
        'MCP_SERVERS={"docs": {"url": "http://127.0.0.1:9000/mcp", "headers": {"A": "Bearer ${DOCS_TOKEN}"}}}\n'
    )
    process = {"PATH": "/bin", "CONTEXT_LIMT": "1", "HOME": "/root"}
    settings = load_settings(process, env_file=_env_file(tmp_path, text))
    assert settings.unknown_keys == ()
    typo = load_settings({}, env_file=_env_file(tmp_path, "OPENAI_API_KY=sk-1\n"))
    assert [(u.key, u.suggestion) for u in typo.unknown_keys] == [("OPENAI_API_KY", "OPENAI_API_KEY")]
    ignored = load_settings(
        {"DEEP_AGENT_ENV_PRIORITY": "none"}, env_file=_env_file(tmp_path, "CONTEXT_LIMT=1\n")
    )
    assert ignored.unknown_keys == (), "DEEP_AGENT_ENV_PRIORITY=none does not read .env at all"


SECONDS_KEYS = [key for key in NUMERIC_KEYS if key.endswith("_S")]


@pytest.mark.parametrize("key", SECONDS_KEYS)
def test_seconds_beyond_100_years_are_refused(key: str) -> None:
    """``AUTH_SESSION_TTL_S=1000000000000`` loaded, then each login failed: now + that is past year 9999."""
    with pytest.raises(ValueError, match=f"{key} must be at most 3153600000 seconds"):
        _load(**{key: "1000000000000"})
    assert _load(**{key: "3153600000"}) is not None, "100 years is still accepted"


def test_a_whole_number_beyond_what_a_database_stores_is_refused() -> None:
    with pytest.raises(ValueError, match="TFAGENTS_DAILY_TOKEN_LIMIT must be at most 9223372036854775807"):
        _load(TFAGENTS_DAILY_TOKEN_LIMIT=str(2**63))
    assert _load(TFAGENTS_DAILY_TOKEN_LIMIT=str(2**63 - 1)).daily_token_limit == 2**63 - 1

"""Configuration precedence and conflict reporting (spec 000 pitfall 1)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ventapp.config import KEYS, PROJECT_ROOT, load_settings, mask, warn_conflicts


def _env_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / ".env"
    path.write_text(text)
    return path


def test_defaults_run_without_setup(tmp_path: Path) -> None:
    settings = load_settings({}, env_file=tmp_path / "missing.env")
    assert settings.env_priority == "dotenv" and settings.checkpointer == "sqlite"
    assert settings.database_url.startswith("sqlite:///") and settings.database_url.endswith("ventagent.db")
    assert settings.port == 3000 and settings.model_configured is False


def test_dotenv_wins_by_default_and_conflict_is_reported(tmp_path: Path) -> None:
    env = _env_file(tmp_path, "OPENAI_API_KEY=sk-project-key-123456\n")
    settings = load_settings({"OPENAI_API_KEY": "sk-stray-global-999999"}, env_file=env)
    assert settings.openai_api_key == "sk-project-key-123456"
    (conflict,) = settings.conflicts
    public = conflict.public()
    assert public["key"] == "OPENAI_API_KEY" and public["used"] == "dotenv"
    assert "sk-project-key-123456" not in str(public) and "sk-stray-global-999999" not in str(public)


def test_process_priority_lets_the_environment_win(tmp_path: Path) -> None:
    env = _env_file(tmp_path, "PORT=3000\nMODEL_NAME=from-file\n")
    settings = load_settings({"DEEP_AGENT_ENV_PRIORITY": "process", "PORT": "8081"}, env_file=env)
    assert settings.port == 8081 and settings.model_name == "from-file"
    assert [c.key for c in settings.conflicts] == ["PORT"] and settings.conflicts[0].used == "process"


def test_none_priority_ignores_dotenv(tmp_path: Path) -> None:
    env = _env_file(tmp_path, "MODEL_NAME=from-file\n")
    settings = load_settings({"DEEP_AGENT_ENV_PRIORITY": "none"}, env_file=env)
    assert settings.model_name == KEYS["MODEL_NAME"][0] and settings.conflicts == ()


def test_conflict_logs_one_masked_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    env = _env_file(tmp_path, "OPENAI_API_KEY=sk-project-key-123456\n")
    settings = load_settings({"OPENAI_API_KEY": "sk-stray-global-999999"}, env_file=env)
    with caplog.at_level(logging.WARNING, logger="ventapp.config"):
        warn_conflicts(settings)
    (record,) = caplog.records
    assert "OPENAI_API_KEY" in record.getMessage() and "123456" not in record.getMessage()
    assert mask("sk-project-key-123456") in record.getMessage()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("CONTEXT_LIMIT", "lots"),
        ("CHECKPOINTER", "redis"),
        ("DEEP_AGENT_ENV_PRIORITY", "random"),
        ("PORT", "0"),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, key: str, value: str) -> None:
    with pytest.raises(ValueError, match=key):
        load_settings(
            {"DEEP_AGENT_ENV_PRIORITY": "none", key: value}
            if key != "DEEP_AGENT_ENV_PRIORITY"
            else {key: value},
            env_file=tmp_path / "x",
        )


def test_env_example_lists_every_key_with_its_default() -> None:
    lines = (PROJECT_ROOT / ".env.example").read_text().splitlines()
    entries = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    assert entries == {key: default for key, (default, _) in KEYS.items()}


def test_only_config_reads_the_environment() -> None:
    offenders = [
        str(path.relative_to(PROJECT_ROOT))
        for path in (PROJECT_ROOT / "ventapp").rglob("*.py")
        if path.name != "config.py" and ("os.environ" in path.read_text() or "os.getenv" in path.read_text())
    ]
    assert offenders == []


def test_secrets_are_masked_and_plain_values_are_not(tmp_path: Path) -> None:
    env = _env_file(tmp_path, "OPENAI_API_KEY=sk-project-key-123456\nPORT=3000\n")
    settings = load_settings({"OPENAI_API_KEY": "sk-stray-global-999999", "PORT": "8081"}, env_file=env)
    shown = {c.key: c.public() for c in settings.conflicts}
    assert shown["PORT"]["dotenv"] == "3000" and shown["PORT"]["process"] == "8081"
    key = shown["OPENAI_API_KEY"]
    assert "123456" not in key["dotenv"] and "999999" not in key["process"] and "chars" in key["dotenv"]


def test_priority_conflict_names_the_process_value_as_used(tmp_path: Path) -> None:
    env = _env_file(tmp_path, "DEEP_AGENT_ENV_PRIORITY=dotenv\n")
    settings = load_settings({"DEEP_AGENT_ENV_PRIORITY": "process"}, env_file=env)
    assert settings.env_priority == "process"
    (conflict,) = settings.conflicts
    assert conflict.key == "DEEP_AGENT_ENV_PRIORITY" and conflict.used == "process"


def test_host_is_loopback_unless_opened(tmp_path: Path) -> None:
    missing = tmp_path / "missing.env"
    assert load_settings({}, env_file=missing).host == "127.0.0.1"
    assert load_settings({"HOST": "0.0.0.0"}, env_file=missing).host == "0.0.0.0"


def test_cors_origins_are_exact_origins(tmp_path: Path) -> None:
    missing = tmp_path / "missing.env"
    assert load_settings({}, env_file=missing).cors_origins == ()
    listed = load_settings(
        {"CORS_ORIGINS": " http://Legacy.example:8080/ ,https://b.example,"}, env_file=missing
    )
    assert listed.cors_origins == ("http://legacy.example:8080", "https://b.example")
    for bad in ("*", "null", "legacy.example", "http://a.example/app", "ftp://a.example", "http://a, *"):
        with pytest.raises(ValueError, match="CORS_ORIGINS"):
            load_settings({"CORS_ORIGINS": bad}, env_file=missing)


def test_an_operator_name_the_identity_rule_refuses_stops_the_start_up(tmp_path: Path) -> None:
    """Tester: ``AUTH_NONE_OPERATORS=team/lead`` loaded, and nobody could ever state that name."""
    with pytest.raises(ValueError, match=r"AUTH_NONE_OPERATORS holds 'team/lead'.*not '/'"):
        load_settings({"AUTH_NONE_OPERATORS": "ops, team/lead"}, env_file=tmp_path / "missing.env")
    settings = load_settings({"AUTH_NONE_OPERATORS": " Jose\u0301 ,ops"}, env_file=tmp_path / "missing.env")
    assert settings.auth.none_operators == {"Jos\u00e9", "ops"}, "the canonical form, as callers are compared"


@pytest.mark.parametrize("url", ["localhost:8000/v1", "ftp://host/v1", "http://", "127.0.0.1:8080"])
def test_a_model_endpoint_without_http_is_refused_at_load(url: str) -> None:
    """try13: a base URL without its scheme failed every turn as "not reachable (UnsupportedProtocol)"."""
    with pytest.raises(ValueError, match="OPENAI_BASE_URL must be an http:// or https:// URL"):
        load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": url})
    models = f'[{{"name": "local", "model": "m", "base_url": "{url}"}}]'
    with pytest.raises(ValueError, match=r"MODELS entry 1 \(local\): base_url must be an http"):
        load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "MODELS": models})


def test_a_database_url_of_no_known_kind_is_refused_without_its_password() -> None:
    with pytest.raises(ValueError) as refused:
        load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "DATABASE_URL": "foo://admin:s3cret@db/x"})
    assert "DATABASE_URL must be a sqlite:///" in str(refused.value)
    assert "s3cret" not in str(refused.value)
    for url in ("sqlite:///x.db", "postgresql+psycopg://u@h/d", "mysql://u@h/d", "mariadb://u@h/d"):
        assert load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "DATABASE_URL": url}).database_url == url


@pytest.mark.parametrize("key", ["DATABASE_URL", "CHECKPOINT_URL", "REDIS_URL"])
def test_a_raw_at_sign_in_a_server_password_is_refused_without_the_password(key: str) -> None:
    """try14: psycopg read ``vent:ab@cd@host`` as host ``cd@host`` and printed the password's tail."""
    scheme = "redis" if key == "REDIS_URL" else "postgresql"
    with pytest.raises(ValueError) as refused:
        load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", key: f"{scheme}://vent:ab@cd@127.0.0.1:5432/0"})
    assert key in str(refused.value) and "%40" in str(refused.value)
    assert "ab@cd" not in str(refused.value) and "cd@127" not in str(refused.value)
    escaped = f"{scheme}://vent:ab%40cd@127.0.0.1:5432/0"
    load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", key: escaped})  # percent-encoded: accepted


@pytest.mark.parametrize("port", ["99999", "0", "54x"])
def test_a_port_outside_1_to_65535_is_refused_naming_the_key(port: str) -> None:
    """try14: ``OPENAI_BASE_URL=http://127.0.0.1:99999/v1`` loaded, then every turn failed."""
    for key, url in (
        ("DATABASE_URL", f"postgresql://vent:s3cret@127.0.0.1:{port}/vent"),
        ("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1"),
    ):
        with pytest.raises(ValueError, match=f"{key}: the port must be a number from 1 to 65535") as refused:
            load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", key: url})
        assert "s3cret" not in str(refused.value)
    models = f'[{{"name": "local", "model": "m", "base_url": "http://127.0.0.1:{port}/v1"}}]'
    with pytest.raises(ValueError, match=r"MODELS entry 1 \(local\).*port must be a number"):
        load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "MODELS": models})
    ipv6 = "http://[::1]:8000/v1"
    assert load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": ipv6}).openai_base_url == ipv6


def test_an_unreachable_server_is_worded_without_its_password_even_when_the_driver_repeats_it() -> None:
    from ventapp.config_urls import shown_url, unreachable

    error = OSError('password authentication failed for user "vent" (password "s3cret")\nDETAIL: more')
    line = unreachable("DATABASE_URL", "postgresql://vent:s3cret@[::1]:5432/vent?sslmode=require", error)
    assert line.startswith("DATABASE_URL: could not connect to postgresql://vent@[::1]:5432/vent (")
    assert "s3cret" not in line and "***" in line and "DETAIL" not in line and "sslmode" not in line
    assert shown_url("sqlite:///data/x.db") == "sqlite:///data/x.db"
    decoded = unreachable("DATABASE_URL", "mysql://vent:p%40ss@h:3306/v", OSError("denied for 'p@ss'"))
    assert "p@ss" not in decoded and "p%40ss" not in decoded

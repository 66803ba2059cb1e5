"""Configuration: the only module that reads the environment (spec 000 §三, pitfall 1).

Every key has a default that runs without set-up (spec 000 §四). Values come from
two places, the project's ``.env`` file and the process environment; which one
wins is ``DEEP_AGENT_ENV_PRIORITY``:

* ``dotenv`` (default) — ``.env`` wins, so a stray global ``OPENAI_API_KEY`` in a
  shell cannot silently replace the project's key;
* ``process`` — the process environment wins (variant instances);
* ``none`` — ``.env`` is ignored (tests, CI).

A key set to different values in both places is a *conflict*: it is logged once as
a WARNING with both values masked and listed by ``/health`` under
``config_conflicts``. A key of ``.env`` nothing reads (a misspelt setting) is logged the same
way and listed under ``config_unknown_keys`` (:mod:`ventapp.config_unknown`).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dotenv import dotenv_values

from ventapp.config_auth import AUTH_KEYS, AuthSettings, parse_auth
from ventapp.config_keys import KEYS as BASE_KEYS
from ventapp.config_text import load_document
from ventapp.config_unknown import UnknownKey, referenced_names, unknown_keys
from ventapp.config_urls import check_server_url
from ventapp.config_values import as_flag, as_float, as_int, as_seconds
from ventapp.mcp_config import MCP_KEYS, McpSettings, parse_mcp
from ventapp.model_config import DEFAULT_ROUTE, THINKING_CONTROLS, ModelRoute, check_endpoint, parse_routes

logger = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parent.parent
"""The checkout's top folder (holds ``.env``, ``alembic/``, ``skills/``)."""

PRIORITIES = ("dotenv", "process", "none")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
COMPAT_MODES = ("auto", "strict", "lenient")
TOOLS_PROFILES = ("full", "lean")

KEYS: dict[str, tuple[str, str]] = {**BASE_KEYS, **AUTH_KEYS, **MCP_KEYS}
"""Every key -> (default, one line of meaning); ``.env.example`` is checked against it by a test."""

SECRET_KEYS = frozenset(
    {"OPENAI_API_KEY", "DATABASE_URL", "CHECKPOINT_URL", "REDIS_URL", "MODELS", "MCP_SERVERS"}
)
"""Keys whose values are secrets (a database URL may carry a password)."""


def mask(value: str, key: str = "OPENAI_API_KEY") -> str:
    """A configuration value as logs and ``/health`` may show it.

    Secrets keep only a hint of their shape — ``"sk-abcdef123456"`` → ``"sk-… (15 chars)"`` —
    so a wrong key can be told apart from the right one without revealing either; other
    values (ports, model names) are shown as they are.
    """
    if not value:
        return "(empty)"
    if key not in SECRET_KEYS:
        return value
    return f"{value[:3]}… ({len(value)} chars)"


@dataclass(frozen=True)
class ConfigConflict:
    """A key set differently in ``.env`` and the process; ``used`` names the winner."""

    key: str
    dotenv_value: str
    process_value: str
    used: str

    def public(self) -> dict[str, str]:
        """The conflict with both values masked, as ``/health`` shows it."""
        return {
            "key": self.key,
            "dotenv": mask(self.dotenv_value, self.key),
            "process": mask(self.process_value, self.key),
            "used": self.used,
        }


@dataclass(frozen=True)
class Settings:
    """The typed settings object. Build it with :func:`load_settings`; never read ``os.environ`` elsewhere."""

    env_priority: str
    openai_base_url: str
    openai_api_key: str
    model_name: str
    context_limit: int
    data_dir: Path
    database_url: str
    checkpointer: str
    port: int
    demo_mode: bool
    model_temperature: float
    model_timeout_s: float
    model_max_retries: int
    log_level: str
    compaction_enabled: bool = True
    openai_compat: str = "auto"
    tools_profile: str = "full"
    sse_keepalive_s: float = 15.0
    db_busy_timeout_s: float = 5.0
    answer_save_interval_s: float = 1.0
    writeback_interval_s: float = 5.0
    run_log_ttl_s: float = 60.0
    run_log_max_frames: int = 100_000
    redis_url: str = ""
    """``REDIS_URL``: empty for a single process."""
    run_lease_s: float = 30.0
    checkpoint_url: str = ""
    """The PostgreSQL URL of the graph state (``CHECKPOINTER=postgres`` only)."""
    hitl_tools: tuple[str, ...] = ()
    upload_max_bytes: int = 20 * 1024 * 1024
    billing_allow_unpriced: bool = False
    daily_token_limit: int = 0
    max_concurrent_runs: int = 8
    max_runs_per_user: int = 2
    run_timeout_s: float = 600.0
    request_key_ttl_s: int = 86400
    scheduler_tz: str = "Asia/Shanghai"
    scheduler_misfire_grace_s: int = 300
    host: str = "127.0.0.1"
    cors_origins: tuple[str, ...] = ()
    thinking_control: str = "auto"
    thinking_level: str = "default"
    model_routes: tuple[ModelRoute, ...] = ()
    """The routes of ``MODELS`` (the main route is :attr:`main_route`)."""
    mcp: McpSettings = field(default_factory=McpSettings)
    """The ``MCP_*`` keys (:mod:`ventapp.mcp_config`)."""
    checkpoint_sync: str = "normal"
    auth: AuthSettings = field(default_factory=AuthSettings)
    """The ``AUTH_*`` keys (:mod:`ventapp.config_auth`)."""
    workspaces_root: Path | None = None
    """``WORKSPACES_DIR`` as an absolute path; None: under ``DATA_DIR`` (see :attr:`workspaces_dir`)."""
    conflicts: tuple[ConfigConflict, ...] = field(default=())
    unknown_keys: tuple[UnknownKey, ...] = field(default=())
    """Keys of ``.env`` nothing reads, each with the closest setting (:mod:`ventapp.config_unknown`)."""

    @property
    def main_route(self) -> ModelRoute:
        """The route built from ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``MODEL_NAME``, ``CONTEXT_LIMIT``."""
        return ModelRoute(
            name=DEFAULT_ROUTE,
            model=self.model_name,
            base_url=self.openai_base_url,
            api_key=self.openai_api_key,
            context_limit=self.context_limit,
            thinking_control=self.thinking_control,
            thinking_level=self.thinking_level,
        )

    @property
    def routes(self) -> tuple[ModelRoute, ...]:
        """Every route, the main one first."""
        return (self.main_route, *self.model_routes)

    def route(self, name: str | None) -> ModelRoute | None:
        """The route called ``name`` (None or ``""``: the main one); None when there is no such route."""
        return next((r for r in self.routes if r.name == (name or DEFAULT_ROUTE)), None)

    @property
    def model_configured(self) -> bool:
        """True when an endpoint or a key is set; without either no model call can succeed."""
        return bool(self.openai_api_key or self.openai_base_url)

    @property
    def checkpoint_path(self) -> Path:
        """SQLite file of the graph-state checkpointer."""
        return self.data_dir / "checkpoints.db"

    @property
    def workspaces_dir(self) -> Path:
        """Root of the per-session agent workspaces: ``WORKSPACES_DIR``, else ``DATA_DIR/workspaces``."""
        return self.workspaces_root or self.data_dir / "workspaces"

    @property
    def spool_path(self) -> Path:
        """Append-only file of answers and usage the database could not take (written back later)."""
        return self.data_dir / "spool.jsonl"


def _project_path(value: str) -> Path:
    """A configured folder; relative ones are under the project root (not the working directory)."""
    path = Path(value)
    return path if path.is_absolute() else PROJECT_ROOT / path


def _merge(
    dotenv: Mapping[str, str | None], environ: Mapping[str, str], priority: str
) -> tuple[dict[str, str], list[ConfigConflict]]:
    values: dict[str, str] = {}
    conflicts: list[ConfigConflict] = []
    for key, (default, _) in KEYS.items():
        in_file = dotenv.get(key)
        in_proc = environ.get(key)
        if priority == "none":
            chosen, source = in_proc, "process"
        elif priority == "process":
            chosen, source = (in_proc, "process") if in_proc is not None else (in_file, "dotenv")
        else:
            chosen, source = (in_file, "dotenv") if in_file is not None else (in_proc, "process")
        if priority != "none" and in_file is not None and in_proc is not None and in_file != in_proc:
            conflicts.append(ConfigConflict(key, in_file, in_proc, source))
        values[key] = default if chosen is None else chosen.strip()
    return values, conflicts


def _variables(dotenv: Mapping[str, str | None], environ: Mapping[str, str], priority: str) -> dict[str, str]:
    """Every variable of ``.env`` and the process, the same one winning as for our keys (``${VAR}``)."""
    from_file = {key: value for key, value in dotenv.items() if value is not None}
    if priority == "none":
        return dict(environ)
    if priority == "process":
        return {**from_file, **environ}
    return {**environ, **from_file}


def _as_origins(values: dict[str, str], key: str) -> tuple[str, ...]:
    """Exact web origins (``scheme://host[:port]``); a browser sends them in ``Origin``."""
    origins = []
    for raw in values[key].split(","):
        origin = raw.strip().rstrip("/")
        if not origin:
            continue
        scheme, sep, rest = origin.partition("://")
        if origin in ("*", "null") or not sep or scheme not in ("http", "https") or not rest or "/" in rest:
            raise ValueError(
                f"{key} takes exact origins such as https://legacy.example.com:8443, comma-separated "
                f"(no '*', no paths), got {raw.strip()!r}"
            )
        origins.append(origin.lower())
    return tuple(dict.fromkeys(origins))


DATABASE_SCHEMES = ("sqlite:", "postgresql", "postgres:", "mysql", "mariadb")
"""What ``DATABASE_URL`` and ``CHECKPOINT_URL`` may start with (SQLAlchemy's dialects, with a driver or not)."""


def load_settings(environ: Mapping[str, str] | None = None, env_file: Path | None = None) -> Settings:
    """Build :class:`Settings` from ``.env`` and the process environment.

    Args:
        environ: The process environment (default ``os.environ``).
        env_file: The dotenv file (default ``PROJECT_ROOT/.env``; a missing file is empty).

    Returns:
        The settings, with ``conflicts`` listing keys that differ between the two sources.

    Raises:
        ValueError: A value is malformed; the message names the key to fix.
    """
    environ = os.environ if environ is None else environ
    env_file = PROJECT_ROOT / ".env" if env_file is None else env_file
    dotenv = dict(dotenv_values(env_file)) if env_file.is_file() else {}
    # The priority itself can only come from the process when .env is ignored.
    priority = environ.get("DEEP_AGENT_ENV_PRIORITY") or dotenv.get("DEEP_AGENT_ENV_PRIORITY") or "dotenv"
    priority = priority.strip().lower()
    if priority not in PRIORITIES:
        raise ValueError(f"DEEP_AGENT_ENV_PRIORITY must be one of {', '.join(PRIORITIES)}, got {priority!r}")
    values, conflicts = _merge(dotenv, environ, priority)
    values["DEEP_AGENT_ENV_PRIORITY"] = priority
    # The priority itself is read from the process first (so `none` can switch .env off).
    conflicts = [
        ConfigConflict(c.key, c.dotenv_value, c.process_value, "process")
        if c.key == "DEEP_AGENT_ENV_PRIORITY"
        else c
        for c in conflicts
    ]

    data_dir = _project_path(values["DATA_DIR"])
    checkpointer = values["CHECKPOINTER"].lower()
    if checkpointer not in ("sqlite", "memory", "postgres"):
        raise ValueError(f"CHECKPOINTER must be sqlite, memory or postgres, got {checkpointer!r}")
    checkpoint_sync = values["CHECKPOINT_SYNC"].lower()
    if checkpoint_sync not in ("normal", "full"):
        raise ValueError(f"CHECKPOINT_SYNC must be normal or full, got {values['CHECKPOINT_SYNC']!r}")
    database_url = values["DATABASE_URL"] or f"sqlite:///{data_dir / 'ventagent.db'}"
    checkpoint_url = values["CHECKPOINT_URL"] or database_url
    for key in ("DATABASE_URL", "CHECKPOINT_URL"):
        if values[key] and not values[key].lower().startswith(DATABASE_SCHEMES):
            # The value may hold a password: name its scheme only.
            scheme = values[key].partition(":")[0]
            raise ValueError(
                f"{key} must be a sqlite:///, postgresql:// or mysql:// (mariadb://) URL, got a {scheme!r} one"
            )
    for key in ("DATABASE_URL", "CHECKPOINT_URL", "REDIS_URL"):
        check_server_url(key, values[key])
    check_endpoint("OPENAI_BASE_URL", values["OPENAI_BASE_URL"])
    if checkpointer == "postgres" and not checkpoint_url.startswith(("postgres://", "postgresql")):
        raise ValueError(
            "CHECKPOINTER=postgres needs CHECKPOINT_URL (or DATABASE_URL) to be a postgresql:// URL"
        )
    log_level = values["LOG_LEVEL"].upper()
    if log_level not in LOG_LEVELS:
        raise ValueError(f"LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {values['LOG_LEVEL']!r}")
    temperature = as_float(values, "MODEL_TEMPERATURE", "a number between 0 and 2")
    if not 0 <= temperature <= 2:
        raise ValueError(f"MODEL_TEMPERATURE must be between 0 and 2, got {temperature}")
    openai_compat = values["OPENAI_COMPAT"].lower() or "auto"
    if openai_compat not in COMPAT_MODES:
        raise ValueError(
            f"OPENAI_COMPAT must be one of {', '.join(COMPAT_MODES)}, got {values['OPENAI_COMPAT']!r}"
        )
    tools_profile = values["TOOLS_PROFILE"].lower() or "full"
    if tools_profile not in TOOLS_PROFILES:
        raise ValueError(
            f"TOOLS_PROFILE must be one of {', '.join(TOOLS_PROFILES)}, got {values['TOOLS_PROFILE']!r}"
        )
    thinking_control = values["THINKING_CONTROL"].lower() or "auto"
    if thinking_control not in THINKING_CONTROLS:
        raise ValueError(
            f"THINKING_CONTROL must be one of {', '.join(THINKING_CONTROLS)}, got {values['THINKING_CONTROL']!r}"
        )
    scheduler_tz = values["SCHEDULER_TZ"] or KEYS["SCHEDULER_TZ"][0]
    try:
        ZoneInfo(scheduler_tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"SCHEDULER_TZ must be an IANA time zone such as Asia/Shanghai, got {scheduler_tz!r}"
        ) from None
    # Every number goes through ventapp.config_values (finite only: `nan` passes any `<= 0` check).
    seconds = {
        key: as_seconds(values, key)
        for key in (
            "MODEL_TIMEOUT_S",
            "RUN_TIMEOUT_S",
            "DB_BUSY_TIMEOUT_S",
            "WRITEBACK_INTERVAL_S",
            "RUN_LOG_TTL_S",
            "RUN_LEASE_S",
        )
    }
    seconds.update(
        (key, as_seconds(values, key, zero_means_off=True))
        for key in ("SSE_KEEPALIVE_S", "ANSWER_SAVE_INTERVAL_S")
    )
    return Settings(
        env_priority=priority,
        openai_base_url=values["OPENAI_BASE_URL"],
        openai_api_key=values["OPENAI_API_KEY"],
        model_name=values["MODEL_NAME"] or KEYS["MODEL_NAME"][0],
        context_limit=as_int(values, "CONTEXT_LIMIT", minimum=1024),
        data_dir=data_dir,
        workspaces_root=_project_path(values["WORKSPACES_DIR"]) if values["WORKSPACES_DIR"] else None,
        database_url=database_url,
        checkpointer=checkpointer,
        checkpoint_url=checkpoint_url if checkpointer == "postgres" else "",
        redis_url=values["REDIS_URL"],
        run_lease_s=seconds["RUN_LEASE_S"],
        port=as_int(values, "PORT", minimum=1),
        demo_mode=as_flag(values, "DEMO_MODE"),
        model_temperature=temperature,
        model_timeout_s=seconds["MODEL_TIMEOUT_S"],
        model_max_retries=as_int(values, "MODEL_MAX_RETRIES"),
        log_level=log_level,
        compaction_enabled=as_flag(values, "CTX_COMPACT_ENABLED"),
        openai_compat=openai_compat,
        tools_profile=tools_profile,
        sse_keepalive_s=seconds["SSE_KEEPALIVE_S"],
        db_busy_timeout_s=seconds["DB_BUSY_TIMEOUT_S"],
        answer_save_interval_s=seconds["ANSWER_SAVE_INTERVAL_S"],
        writeback_interval_s=seconds["WRITEBACK_INTERVAL_S"],
        run_log_ttl_s=seconds["RUN_LOG_TTL_S"],
        run_log_max_frames=as_int(values, "RUN_LOG_MAX_FRAMES", minimum=1),
        hitl_tools=tuple(name.strip() for name in values["HITL_TOOLS"].split(",") if name.strip()),
        upload_max_bytes=as_int(values, "UPLOAD_MAX_BYTES", minimum=1),
        billing_allow_unpriced=as_flag(values, "BILLING_ALLOW_UNPRICED"),
        daily_token_limit=as_int(values, "TFAGENTS_DAILY_TOKEN_LIMIT"),
        max_concurrent_runs=as_int(values, "MAX_CONCURRENT_RUNS", minimum=1),
        max_runs_per_user=as_int(values, "MAX_RUNS_PER_USER", minimum=1),
        run_timeout_s=seconds["RUN_TIMEOUT_S"],
        request_key_ttl_s=as_int(values, "REQUEST_KEY_TTL_S", minimum=1),
        scheduler_tz=scheduler_tz,
        scheduler_misfire_grace_s=as_int(values, "SCHEDULER_MISFIRE_GRACE_S"),
        host=values["HOST"] or KEYS["HOST"][0],
        cors_origins=_as_origins(values, "CORS_ORIGINS"),
        thinking_control=thinking_control,
        thinking_level=values["THINKING_LEVEL"].lower() or "default",
        model_routes=parse_routes(values["MODELS"], PROJECT_ROOT, int(KEYS["CONTEXT_LIMIT"][0])),
        mcp=parse_mcp(values, PROJECT_ROOT, _variables(dotenv, environ, priority)),
        checkpoint_sync=checkpoint_sync,
        auth=parse_auth(values),
        conflicts=tuple(conflicts),
        unknown_keys=() if priority == "none" else _unknown_in(env_file, values["MCP_SERVERS"]),
    )


def _unknown_in(env_file: Path, mcp_servers: str) -> tuple[UnknownKey, ...]:
    """The keys of ``env_file`` nothing reads; ``${NAME}`` in ``.env`` or ``MCP_SERVERS`` makes NAME read."""
    if not env_file.is_file():
        return ()
    raw = dotenv_values(env_file, interpolate=False)  # as written: `${NAME}` not yet replaced
    servers = load_document(mcp_servers, "MCP_SERVERS", PROJECT_ROOT)  # parsed once already: no error here
    referenced = referenced_names([*(value or "" for value in raw.values()), repr(servers)])
    return unknown_keys(raw, KEYS, referenced)


def warn_conflicts(settings: Settings) -> None:
    """Log one WARNING per conflicting key, values masked, and one per key of ``.env`` nothing reads
    (``CONTEXT_LIMT in .env is not a setting VentAgent reads; did you mean CONTEXT_LIMIT?``); called
    once at start-up."""
    for unknown in settings.unknown_keys:
        logger.warning("%s", unknown.sentence)
    for conflict in settings.conflicts:
        logger.warning(
            "config conflict: %s is %s in .env but %s in the process environment; using the %s value "
            "(DEEP_AGENT_ENV_PRIORITY=%s)",
            conflict.key,
            mask(conflict.dotenv_value, conflict.key),
            mask(conflict.process_value, conflict.key),
            conflict.used,
            settings.env_priority,
        )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, loaded on first use. Tests call ``get_settings.cache_clear()``."""
    return load_settings()


class SettingError(ValueError):
    """A setting the app cannot run with, found when it is first used rather than when loaded
    (``HITL_TOOLS`` naming a tool that is not there, ``TOOLS_PROFILE``); the message names the key."""


def exit_on_bad_setting(message: str) -> None:
    """End a program that cannot start because of a setting: ``message`` as one line on stderr, exit 2.

    ``message`` names the key (every error of :func:`load_settings` does: ``CONTEXT_LIMIT must be a
    whole number, got 'abc'``); no traceback, which would bury it under the CLI's frames.

    Raises:
        SystemExit: Always, with code 2.
    """
    print(f"Configuration error (.env or the environment): {message}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def stop_worker_on_bad_setting(message: str) -> None:
    """End a server worker whose start found a bad setting (:class:`SettingError`): one line, exit 2.

    For the app's lifespan under Granian: an exception raised there is printed twice with its
    traceback (by Starlette, then by Granian), burying the key. The process ends at once
    (``os._exit``): the lifespan has nothing open yet, and Granian then stops the server.
    """
    print(f"Configuration error (.env or the environment): {message}", file=sys.stderr, flush=True)
    os._exit(2)


def settings_at_start() -> Settings:
    """:func:`get_settings` for a program's start (``rxconfig.py``, ``python -m ventapp.ui_build``).

    Raises:
        SystemExit: A setting is invalid (:func:`exit_on_bad_setting`: one line naming the key, exit 2).
    """
    try:
        return get_settings()
    except ValueError as bad:  # load_settings raises ValueError only for a setting's value
        exit_on_bad_setting(str(bad))
        raise  # unreachable: keeps the type checker's flow


FRONTEND_BUILD_ENV_PREFIXES = ("REFLEX_", "VITE_")
"""Environment variables Reflex and Vite read while building the UI (not app settings)."""


def frontend_build_environment() -> dict[str, str]:
    """The ``REFLEX_*`` and ``VITE_*`` variables of the process: inputs of the UI build.

    Returns:
        ``name -> value`` (read now; used by :mod:`ventapp.ui_build` to decide whether to rebuild).
    """
    return {name: value for name, value in os.environ.items() if name.startswith(FRONTEND_BUILD_ENV_PREFIXES)}

"""Every configuration key with its default and one line of meaning (read by ``ventapp.config``).

Kept apart from the loader so the table can grow without the loader growing; ``.env.example``
is checked against it by a test.
"""

from __future__ import annotations

# key -> (default, one line of meaning). `.env.example` is checked against this table by a test.
KEYS: dict[str, tuple[str, str]] = {
    "DEEP_AGENT_ENV_PRIORITY": (
        "dotenv",
        "Which wins when .env and the process disagree: dotenv | process | none",
    ),
    "OPENAI_BASE_URL": (
        "",
        "OpenAI-compatible endpoint, e.g. https://api.deepseek.com/v1 (empty: OpenAI's own)",
    ),
    "OPENAI_API_KEY": ("", "API key for that endpoint (local servers accept any non-empty value)"),
    "MODEL_NAME": ("gpt-4o-mini", "Model name sent to the endpoint"),
    "CONTEXT_LIMIT": ("128000", "Declared context window in tokens; compaction triggers at 85% of it"),
    "OPENAI_COMPAT": (
        "auto",
        "Request/stream fixes for servers stricter than OpenAI: auto (lenient unless OpenAI) | strict | lenient",
    ),
    "TOOLS_PROFILE": (
        "full",
        "Tool schemas shown to the model: full | lean (fewer, shorter schemas for small context windows)",
    ),
    "THINKING_CONTROL": (
        "auto",
        "How the main model's thinking is switched: auto (from the endpoint and model name) | none | "
        "effort (reasoning_effort) | qwen (enable_thinking) | deepseek (deepseek-chat / deepseek-reasoner)",
    ),
    "THINKING_LEVEL": (
        "default",
        "The main model's thinking level at start (default = send nothing, the provider decides); "
        "POST /api/model/thinking switches it",
    ),
    "MODELS": (
        "",
        "More model routes: a JSON/YAML list (or a .json/.yaml file) of {name, model, base_url, api_key, "
        "context_limit, thinking, thinking_level, thinking_levels}; empty: only the main model",
    ),
    "DATA_DIR": ("data", "Folder for the SQLite files and workspaces (relative to the project root)"),
    "WORKSPACES_DIR": (
        "",
        "Folder of the sessions' agent files (empty: DATA_DIR/workspaces); with several hosts, one "
        "shared mount (NFS, CephFS …) given to every process",
    ),
    "DATABASE_URL": (
        "",
        "SQLAlchemy URL of the relational store (empty: sqlite file DATA_DIR/ventagent.db); postgresql://user:pass@host/db or mysql://user:pass@host/db for several processes",
    ),
    "CHECKPOINTER": (
        "sqlite",
        "Graph-state store: sqlite (DATA_DIR/checkpoints.db) | memory (lost on restart) | "
        "postgres (CHECKPOINT_URL, shared by several processes)",
    ),
    "CHECKPOINT_URL": (
        "",
        "PostgreSQL URL of the graph-state store for CHECKPOINTER=postgres (empty: DATABASE_URL, "
        "which must then be PostgreSQL)",
    ),
    "CHECKPOINT_SYNC": (
        "normal",
        "How the sqlite checkpointer's commits reach the disk: normal (kept through a crash or kill of "
        "the app; an OS crash or power cut may lose the newest graph steps) | full (an fsync per commit, "
        "about 4x the time every checkpoint write holds the checkpointer's single lock)",
    ),
    "REDIS_URL": (
        "",
        "Redis shared by several processes (run gate, session claims, Stop, UI state via REFLEX_REDIS_URL); "
        "empty: a single process",
    ),
    "RUN_LEASE_S": (
        "30",
        "With REDIS_URL: seconds a crashed process's run slots and session claims outlive it",
    ),
    "PORT": ("3000", "Port the app serves on (make run / make api)"),
    "HOST": (
        "127.0.0.1",
        "Address the server listens on; 0.0.0.0 opens it to the network (user names are self-declared!)",
    ),
    "CORS_ORIGINS": (
        "",
        "Other web origins allowed to call the API from a browser, comma-separated exact "
        "scheme://host[:port] (e.g. the legacy 1.5 frontend's); empty: none",
    ),
    "DEMO_MODE": ("0", "1 when the model is the scripted demo server (the UI labels it)"),
    "MODEL_TEMPERATURE": ("0.2", "Sampling temperature sent to the model"),
    "MODEL_TIMEOUT_S": ("120", "Seconds to wait for one model response before failing the run"),
    "MODEL_MAX_RETRIES": ("1", "Retries of a failed model call (connection errors, 5xx)"),
    "LOG_LEVEL": ("INFO", "Python log level of the app's loggers"),
    "SSE_KEEPALIVE_S": (
        "15",
        "Seconds of silence after which an event stream sends an SSE comment (: keep-alive); 0 = never",
    ),
    "DB_BUSY_TIMEOUT_S": (
        "5",
        "Seconds a database write waits for a locked SQLite file before it fails (new chats then get 503)",
    ),
    "ANSWER_SAVE_INTERVAL_S": (
        "1",
        "Seconds between saves of a growing answer, so a crash loses at most this much text; 0 = only at the end",
    ),
    "RUN_LOG_TTL_S": (
        "60",
        "Seconds a run's numbered frames stay joinable (GET /api/chat/stream) after the run ends",
    ),
    "RUN_LOG_MAX_FRAMES": (
        "100000",
        "Most frames kept per run for joiners; older ones are dropped first (a join asking for them gets 410)",
    ),
    "WRITEBACK_INTERVAL_S": (
        "5",
        "Seconds between attempts to write answers and usage parked in DATA_DIR/spool.jsonl back to the database",
    ),
    "CTX_COMPACT_ENABLED": (
        "1",
        "0 turns off summarisation (and its history archive); long chats then overflow",
    ),
    "HITL_TOOLS": ("", "Extra tool names that need a person's approval, comma-separated (e.g. calculate)"),
    "UPLOAD_MAX_BYTES": ("20971520", "Largest accepted upload in bytes (20 MiB); larger is refused with 413"),
    "BILLING_ALLOW_UNPRICED": ("0", "1 bills a model with no price at zero; 0 refuses the run (fail-closed)"),
    "TFAGENTS_DAILY_TOKEN_LIMIT": ("0", "Default daily token quota per user (input+output); 0 = unlimited"),
    "MAX_CONCURRENT_RUNS": (
        "8",
        "Runs allowed at once in this process (with REDIS_URL: in all processes together); more get 429",
    ),
    "MAX_RUNS_PER_USER": (
        "2",
        "Runs one user may have at once (with REDIS_URL: in all processes together); more get 429",
    ),
    "RUN_TIMEOUT_S": ("600", "Total seconds a run may take before it is stopped with code timeout"),
    "REQUEST_KEY_TTL_S": ("86400", "Seconds a request_id is remembered for de-duplication"),
    "SCHEDULER_TZ": (
        "Asia/Shanghai",
        "IANA time zone schedules' cron expressions are evaluated in (never the host's)",
    ),
    "SCHEDULER_MISFIRE_GRACE_S": (
        "300",
        "A tick missed while the service was down still runs at start-up if it is at most this many seconds late",
    ),
}

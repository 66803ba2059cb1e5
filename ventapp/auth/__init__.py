"""Real identities (issue 15): accounts, login sessions, personal API keys, roles, throttling.

Framework-free: ``ventapp.api.deps`` (HTTP) and ``ventapp.state`` (the Reflex UI) both call
:mod:`ventapp.auth.service`, so the API and the UI accept the same login session. Modes come
from ``AUTH_MODE`` (:class:`ventapp.config_auth.AuthSettings`).
"""

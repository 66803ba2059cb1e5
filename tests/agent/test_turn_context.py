"""The user's standing context for a turn: preferences and the approval rules of its session."""

from __future__ import annotations

import sqlalchemy as sa

from ventapp.agent.turn_context import TurnContext, load_turn_context
from ventapp.db import preference_store


def test_turn_context_reads_preferences_and_the_rules_of_this_session_on_one_connection(
    engine: sa.Engine,
) -> None:
    """Global rules and this session's count, another session's and user's do not; several rules
    for one tool exclude only the calls every one of them excludes (issue 18: one checkout)."""
    preference_store.put_preferences(engine, "alice", "Answer in SI units.")
    preference_store.add_rule(engine, "alice", "calc", "always", None, ["c1", "c2"])
    preference_store.add_rule(engine, "alice", "calc", "session", "s1", ["c2", "c3"])
    preference_store.add_rule(engine, "alice", "search", "session", "s1")
    preference_store.add_rule(engine, "alice", "draw", "session", "s2")
    preference_store.add_rule(engine, "bob", "files", "always", None)
    checkouts: list[object] = []

    def checkout(connection: object) -> None:
        checkouts.append(connection)

    sa.event.listen(engine, "engine_connect", checkout)
    try:
        context = load_turn_context(engine, "alice", "s1")
    finally:
        sa.event.remove(engine, "engine_connect", checkout)
    assert len(checkouts) == 1
    assert context == TurnContext(
        preferences="Answer in SI units.",
        auto_approved={"calc": frozenset({"c2"}), "search": frozenset()},
    )
    assert load_turn_context(engine, "carol", "s1") == TurnContext()

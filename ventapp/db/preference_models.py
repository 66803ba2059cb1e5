"""What a user tells the agent once: free-text preferences and remembered approvals (SQLModel).

Both are keyed by the owner's ``user_name`` (the one identity, ``ventapp.api.deps``); an approval
rule is scoped to one session or to every session of its owner.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from ventapp.db.models import IDENTITY, LONG_TEXT, TIMESTAMP, new_id, utcnow

RULE_SCOPES = ("session", "always")
"""``session``: later calls of the tool in that session; ``always``: in every session of the user."""


class UserPreference(SQLModel, table=True):
    """A user's standing instructions, injected into the system context of every turn."""

    __tablename__ = "user_preferences"

    user_name: str = Field(primary_key=True, max_length=128, sa_type=IDENTITY)
    text: str = Field(default="", sa_type=LONG_TEXT)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)


class ApprovalRule(SQLModel, table=True):
    """ "Don't ask again" for one tool: its calls run without an approval card.

    ``session_id`` is set for scope ``session`` and None for ``always``. ``except_call_ids``
    lists the paused calls the rule was created from: the person answered those themselves, and
    the framework re-asks its predicate for them on resume (it must not flip for them).
    """

    __tablename__ = "approval_rules"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=36)
    user_name: str = Field(index=True, max_length=128, sa_type=IDENTITY)
    tool: str = Field(max_length=128)
    scope: str = Field(max_length=16)
    session_id: str | None = Field(default=None, index=True, max_length=36)
    except_call_ids: str = Field(default="", max_length=2000)
    created_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)

"""Storage of preferences and approval rules. Access only; the rules of use live in ``ventapp.agent``.

Every function is synchronous and opens one short transaction; async callers run them through
``asyncio.to_thread``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, or_, select

from ventapp.db.models import utcnow
from ventapp.db.preference_models import ApprovalRule, UserPreference


def get_preferences(engine: Engine, user_name: str) -> UserPreference | None:
    """The user's preferences row, or None when they never set any."""
    with Session(engine, expire_on_commit=False) as db:
        return db.get(UserPreference, user_name)


def put_preferences(engine: Engine, user_name: str, text: str) -> UserPreference:
    """Replace the user's preferences with ``text``; returns the saved row."""
    with Session(engine, expire_on_commit=False) as db:
        row = db.get(UserPreference, user_name) or UserPreference(user_name=user_name)
        row.text = text
        row.updated_at = utcnow()
        db.add(row)
        db.commit()
        return row


def delete_preferences(engine: Engine, user_name: str) -> bool:
    """Forget the user's preferences; True when there were some."""
    with Session(engine) as db:
        row = db.get(UserPreference, user_name)
        if row is None:
            return False
        db.delete(row)
        db.commit()
        return True


def add_rule(
    engine: Engine,
    user_name: str,
    tool: str,
    scope: str,
    session_id: str | None,
    except_call_ids: Iterable[str] = (),
) -> ApprovalRule:
    """Remember an approval of ``tool`` for one session (``scope="session"``) or all (``"always"``)."""
    rule = ApprovalRule(
        user_name=user_name,
        tool=tool,
        scope=scope,
        session_id=session_id if scope == "session" else None,
        except_call_ids=",".join(except_call_ids),
    )
    with Session(engine, expire_on_commit=False) as db:
        db.add(rule)
        db.commit()
        return rule


def list_rules(engine: Engine, user_name: str, session_id: str | None = None) -> Sequence[ApprovalRule]:
    """The user's rules, oldest first; with ``session_id``, only those that apply in that session."""
    query = select(ApprovalRule).where(ApprovalRule.user_name == user_name)
    if session_id is not None:
        query = query.where(
            or_(col(ApprovalRule.session_id).is_(None), ApprovalRule.session_id == session_id)
        )
    with Session(engine, expire_on_commit=False) as db:
        return db.exec(query.order_by(col(ApprovalRule.created_at))).all()


_PREFERENCE = UserPreference.__table__.c
_RULE = ApprovalRule.__table__.c
# Built once with bound parameters: building them cost about as much CPU as running them.
_PREFERENCES_OF = sa.select(_PREFERENCE.text).where(_PREFERENCE.user_name == sa.bindparam("p_user"))
_RULES_IN = (
    sa.select(_RULE.tool, _RULE.except_call_ids)
    .where(_RULE.user_name == sa.bindparam("p_user"))
    .where(sa.or_(_RULE.session_id.is_(None), _RULE.session_id == sa.bindparam("p_session")))
    .order_by(_RULE.created_at)
)


def turn_rows(engine: Engine, user_name: str, session_id: str) -> tuple[str | None, list[tuple[str, str]]]:
    """What a turn needs of the user's settings, on one connection (issue 18: every turn reads it).

    Returns:
        ``(preferences text or None, [(tool, except_call_ids), …])``: the rules that apply in
        ``session_id``, oldest first (as :func:`list_rules`).
    """
    with engine.connect() as connection:
        text = connection.execute(_PREFERENCES_OF, {"p_user": user_name}).scalar_one_or_none()
        applying = connection.execute(_RULES_IN, {"p_user": user_name, "p_session": session_id}).all()
    return text, [(tool, excluded) for tool, excluded in applying]


def delete_rule(engine: Engine, user_name: str, rule_id: str) -> bool:
    """Revoke one of the user's rules; False when it is not theirs or does not exist."""
    with Session(engine) as db:
        rule = db.get(ApprovalRule, rule_id)
        if rule is None or rule.user_name != user_name:
            return False
        db.delete(rule)
        db.commit()
        return True

"""MySQL/MariaDB: utf8mb4, long texts and case-sensitive identities (issue 14, scale-out)

A MySQL/MariaDB database created with a ``latin1`` default refuses Chinese text: every table
is converted to ``utf8mb4`` first. On MySQL and MariaDB ``TEXT`` holds 64 KB, but a message may be 100,000 characters (and up to
four bytes each): every ``TEXT`` column becomes ``LONGTEXT``. Their default collation compares
case-insensitively, so "alice" would match "Alice"'s rows: every ``user_name`` becomes
``utf8mb4_bin``. Other engines are untouched (their ``TEXT`` is unbounded, their comparison exact).

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

IDENTITY = mysql.VARCHAR(128, charset="utf8mb4", collation="utf8mb4_bin")


def _tables() -> list[str]:
    names = sa.inspect(op.get_bind()).get_table_names()
    return [n for n in names if n != "alembic_version" and not n.startswith("checkpoint")]


def _columns() -> list[tuple[str, dict]]:
    inspector = sa.inspect(op.get_bind())
    return [(table, column) for table in _tables() for column in inspector.get_columns(table)]


def _convert_to_utf8mb4() -> None:
    bind = op.get_bind()
    legacy = [
        table
        for table in _tables()
        if not str(
            bind.execute(
                sa.text(
                    "SELECT TABLE_COLLATION FROM information_schema.TABLES"
                    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = :t"
                ),
                {"t": table},
            ).scalar()
        ).startswith("utf8mb4")
    ]
    if not legacy:
        return
    # MariaDB refuses to change a column's charset while a foreign key uses it (error 1832, even
    # with FOREIGN_KEY_CHECKS=0): drop the keys, convert, put them back.
    inspector = sa.inspect(bind)
    keys = [(table, fk) for table in _tables() for fk in inspector.get_foreign_keys(table)]
    for table, fk in keys:
        op.drop_constraint(fk["name"], table, type_="foreignkey")
    for table in legacy:
        op.execute(f"ALTER TABLE `{table}` CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    for table, fk in keys:
        op.create_foreign_key(
            fk["name"], table, fk["referred_table"], fk["constrained_columns"], fk["referred_columns"],
            ondelete=(fk.get("options") or {}).get("ondelete"),
        )  # fmt: skip


def upgrade() -> None:
    if op.get_bind().dialect.name != "mysql":
        return
    _convert_to_utf8mb4()
    for table, column in _columns():  # read again: the conversion may have widened TEXT to MEDIUMTEXT
        if column["name"] == "user_name":
            op.alter_column(table, "user_name", type_=IDENTITY, existing_nullable=column["nullable"])
        elif type(column["type"]) in (mysql.TEXT, mysql.MEDIUMTEXT):
            op.alter_column(
                table, column["name"], type_=mysql.LONGTEXT(), existing_nullable=column["nullable"]
            )


def downgrade() -> None:
    if op.get_bind().dialect.name != "mysql":
        return
    for table, column in _columns():
        if column["name"] == "user_name":
            op.alter_column(table, "user_name", type_=sa.String(128), existing_nullable=column["nullable"])
        elif type(column["type"]) is mysql.LONGTEXT:
            op.alter_column(table, column["name"], type_=mysql.TEXT(), existing_nullable=column["nullable"])

"""Accounts from the command line (the first operator cannot come from anywhere else).

    python -m ventapp.auth create-user NAME [--operator] [--no-password]
    python -m ventapp.auth set-role NAME user|operator
    python -m ventapp.auth list-users
    python -m ventapp.auth rename-user OLD NEW
    python -m ventapp.auth refused-names

The password is read from the terminal (asked twice, not echoed) or, when stdin is not a
terminal, from its first line; there is never a default password. ``--no-password`` makes an
account that only carries a role (``AUTH_MODE=header``: the proxy authenticates). On an existing
account ``create-user`` resets the password (ending its login sessions; its API keys stay) and
keeps its role unless ``--operator`` is given; ``set-role`` demotes. Names follow the rule of every
route (:mod:`ventapp.agent.identity`): a name with ``/`` or other unsafe characters exits with 2 and
a sentence saying which character, before any password is asked.

``rename-user`` moves everything stored under ``OLD`` (exactly as stored, even a name the rule now
refuses) to ``NEW``: rows of every table keyed by ``user_name``, the login throttle, the workspace
folder, the owner in the graph-state checkpoints and the spool's parked writes (written back first)
(:mod:`ventapp.auth.rename`). It exits with 2 when ``NEW`` breaks the rule, already has data, or
``OLD`` has none, has a run under way, or has a parked write the database still refuses. ``refused-names`` lists the stored names the rule refuses, with the reason.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from ventapp.auth.rename import refused_names, rename_user
from ventapp.auth.service import AuthRejected, canonical, create_account
from ventapp.config import get_settings
from ventapp.db import auth_store
from ventapp.db.engine import make_engine, upgrade_to_head


def _read_password() -> str:
    if sys.stdin.isatty():
        first = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != first:
            raise SystemExit("The two passwords differ; nothing was changed.")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status (0 done, 2 refused input)."""
    parser = argparse.ArgumentParser(prog="python -m ventapp.auth", description="Manage VentAgent accounts.")
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create-user", help="create an account or reset its password")
    create.add_argument("name")
    create.add_argument(
        "--operator",
        action="store_true",
        help="give the operator role (without it, an existing account keeps its role)",
    )
    create.add_argument("--no-password", action="store_true", help="role only (header mode)")
    role = commands.add_parser("set-role", help="change an account's role")
    role.add_argument("name")
    role.add_argument("role", choices=["user", "operator"])
    commands.add_parser("list-users", help="list accounts and roles")
    rename = commands.add_parser(
        "rename-user", help="move a user's conversations, usage, schedules, account … to another name"
    )
    rename.add_argument("old", help="the name exactly as stored (it may be one the rule now refuses)")
    rename.add_argument("new", help="the new name (under the user-name rule; must have no data yet)")
    commands.add_parser("refused-names", help="list stored user names the user-name rule refuses")
    args = parser.parse_args(argv)

    settings = get_settings()
    upgrade_to_head(settings.database_url)
    engine = make_engine(settings.database_url, busy_timeout_s=settings.db_busy_timeout_s)
    try:
        if args.command == "create-user":
            name = canonical(args.name)  # the identity rule of every route, before asking a password
            password = None if args.no_password else _read_password()
            account = create_account(engine, name, password, "operator" if args.operator else None)
            print(f"account {account.user_name!r} saved ({account.role})")
        elif args.command == "set-role":
            existing = auth_store.get_account(engine, canonical(args.name))
            if existing is None:
                print(f"no account {args.name!r}", file=sys.stderr)
                return 2
            auth_store.save_account(engine, existing.user_name, role=args.role)
            print(f"account {existing.user_name!r} is now {args.role}")
        elif args.command == "rename-user":
            done = rename_user(engine, settings.workspaces_dir, args.old, args.new, settings=settings)
            for table, count in sorted(done.rows.items()):
                print(f"{table}\t{count}")
            if done.checkpoints:
                print(f"checkpoints\t{done.checkpoints}")
            files = "; its workspace folder moved" if done.files_moved else ""
            print(f"{done.old!r} is now {done.new!r}{files}")
        elif args.command == "refused-names":
            refused = refused_names(engine)
            for name, why in refused:
                print(f"{name!r}\t{why}")
            if not refused:  # said on stderr: stdout stays the (empty) list for scripts
                print("Every stored user name passes the rule.", file=sys.stderr)
        else:
            for account in auth_store.list_accounts(engine):
                kind = "password" if account.password_hash else "no password"
                print(f"{account.user_name}\t{account.role}\t{kind}")
    except AuthRejected as refused:
        print(refused.message, file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

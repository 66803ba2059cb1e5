"""Command line: ``python -m tests.scripted_llm --port 8765 [--host 127.0.0.1] [--delay-ms 0] [--dialect openai]``."""

from __future__ import annotations

import argparse
import socket

import uvicorn

from tests.scripted_llm.server import bound_port, create_app, make_server
from tests.scripted_llm.wire import DIALECTS


class _AnnouncingServer(uvicorn.Server):
    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        # Scripts wait for this exact line, so print it only once connections are accepted.
        if self.started:
            host = self.config.host
            print(f"scripted-llm listening on http://{host}:{bound_port(self)}/v1", flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line.

    Args:
        argv: Arguments without the program name; ``sys.argv[1:]`` if ``None``.

    Returns:
        Namespace with ``host`` (str), ``port`` (int), ``delay_ms`` (int) and ``dialect`` (str).
    """
    parser = argparse.ArgumentParser(prog="python -m tests.scripted_llm", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--delay-ms", type=int, default=0, help="pause between streamed chunks")
    parser.add_argument(
        "--dialect", choices=sorted(DIALECTS), default="openai", help="imitate a stricter or looser server"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted (Ctrl-C / SIGTERM).

    Args:
        argv: Arguments without the program name; ``sys.argv[1:]`` if ``None``.
    """
    args = parse_args(argv)
    app = create_app(delay_ms=args.delay_ms, dialect=args.dialect)
    make_server(app, args.host, args.port, server_class=_AnnouncingServer).run()


if __name__ == "__main__":
    main()

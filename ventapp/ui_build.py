"""``reflex run`` that rebuilds the production UI only when what the build depends on changed.

``reflex run --env prod`` compiles the app's pages and runs the frontend's production build
(``npm run export``: Vite) on every start, 30–70 s here even when nothing changed (issue 18).
This wrapper runs Reflex's own CLI unchanged, except for two steps of its prod start-up
(``reflex.reflex._run_prod``, Reflex 0.10): when the fingerprint of the inputs equals the one
stamped by the last successful build and that build's output is still there, the page
compilation and the frontend build are skipped and the existing build is served. Otherwise
Reflex compiles and builds as usual, and the new fingerprint is stamped afterwards.

The fingerprint (SHA-256) covers everything the build reads:

* the UI's sources: every file of the ``ventapp`` package (pages, state and all they import:
  the compiled pages embed state and var names and initial values), ``assets/``,
  ``rxconfig.py`` and the pinned frontend packages in ``reflex.lock/``;
* the Reflex version (every installed ``reflex*`` distribution) and the Node.js version;
* build-time settings: Reflex's effective configuration (ports and the API URL baked into the
  bundle, app name, paths, plugins …), every ``REFLEX_*`` and ``VITE_*`` environment variable,
  whether routes are prerendered, and our own settings the compiled pages depend on
  (:func:`compiled_settings`: ``AUTH_MODE`` decides whether the user name is kept in the
  browser or set by the server, and what the header offers).

Only the digest is stored (``.web/ventapp-ui-build.json``); ``make clean`` removes it with
``.web``. Run: ``python -m ventapp.ui_build run --env prod --single-port ...`` (the
arguments of ``reflex run``; the Makefile's ``run`` and ``demo`` targets do this).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from ventapp.config import (
    FRONTEND_BUILD_ENV_PREFIXES,
    PROJECT_ROOT,
    frontend_build_environment,
    get_settings,
    settings_at_start,
)

STAMP_NAME = "ventapp-ui-build.json"
SOURCE_DIRS = ("ventapp", "assets")
LOCK_DIR = "reflex.lock"
SOURCE_FILES = ("rxconfig.py",)
# assets/external/ holds links Reflex itself makes while compiling (rx.asset(shared=True)).
_SKIPPED_PARTS = frozenset({"__pycache__", ".pytest_cache", "node_modules", "external"})
_SKIPPED_SUFFIXES = (".pyc", ".pyo")

logger = logging.getLogger(__name__)


def _source_files(root: Path, *, lockfiles: bool) -> Iterable[Path]:
    for name in SOURCE_FILES:
        if (root / name).is_file():
            yield root / name
    for directory in (*SOURCE_DIRS, LOCK_DIR) if lockfiles else SOURCE_DIRS:
        base = root / directory
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and not _SKIPPED_PARTS.intersection(relative.parts):
                if not path.name.endswith(_SKIPPED_SUFFIXES):
                    yield path


def _node_version() -> str:
    node = shutil.which("node")
    if node is None:
        return "none"
    try:
        return subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _reflex_versions() -> list[str]:
    found = {
        f"{dist.metadata['Name'].lower()}=={dist.version}"
        for dist in metadata.distributions()
        if (dist.metadata["Name"] or "").lower().startswith("reflex")
    }
    return sorted(found)


def _config_fields(config: Any) -> list[tuple[str, str]]:
    if dataclasses.is_dataclass(config):
        names = [field.name for field in dataclasses.fields(config)]
    else:  # a future Config that is not a dataclass: its public attributes
        names = [name for name in vars(config) if not name.startswith("_")]
    return sorted((name, repr(getattr(config, name, None))) for name in names if not name.startswith("_"))


def fingerprint(
    root: Path,
    *,
    config: Any,
    environ: dict[str, str],
    prerender: bool,
    node_version: str | None = None,
    reflex_versions: list[str] | None = None,
    lockfiles: bool = True,
    app_settings: dict[str, str] | None = None,
) -> str:
    """The SHA-256 (hex) of everything the production UI build depends on (see module docs).

    Args:
        root: The project folder (where ``rxconfig.py`` is).
        config: Reflex's effective configuration (``reflex.config.get_config()``).
        environ: The environment; its ``REFLEX_*`` and ``VITE_*`` variables count.
        prerender: Whether the build prerenders routes.
        node_version: ``node --version`` (default: asked from the ``node`` on ``PATH``).
        reflex_versions: ``name==version`` of Reflex's distributions (default: installed ones).
        lockfiles: Include ``reflex.lock/`` (the build may rewrite it: the stamp is taken after
            the build, provided nothing else changed meanwhile).
        app_settings: Our settings compiled into the pages (:func:`compiled_settings`).
    """
    digest = hashlib.sha256()

    def add(label: str, value: str | bytes) -> None:
        digest.update(label.encode() + b"\0")
        digest.update(value if isinstance(value, bytes) else value.encode())
        digest.update(b"\0")

    for path in _source_files(root, lockfiles=lockfiles):
        add("file:" + path.relative_to(root).as_posix(), hashlib.sha256(path.read_bytes()).digest())
    for version in reflex_versions if reflex_versions is not None else _reflex_versions():
        add("dist", version)
    add("node", node_version if node_version is not None else _node_version())
    for name, value in _config_fields(config):
        add("config:" + name, value)
    for name in sorted(environ):
        if name.startswith(FRONTEND_BUILD_ENV_PREFIXES):
            add("env:" + name, environ[name])
    add("prerender", str(prerender))
    for name, value in sorted((app_settings or {}).items()):
        add("app:" + name, value)
    return digest.hexdigest()


def compiled_settings() -> dict[str, str]:
    """Our settings that the compiled pages depend on, as ``name -> value``.

    ``AUTH_MODE``: with verified identities the user name is a server-set state variable and
    the header shows a logout button; without, it lives in the browser's storage and the name
    dialog sets it (``ventapp.state.ui_identity``). A build for one mode served in another left
    the chat without a way to name oneself (found by trying it).
    """
    return {"AUTH_MODE": get_settings().auth.mode}


class BuildStamp:
    """The fingerprint of the last successful build, kept next to it in ``.web``.

    Args:
        web_dir: Reflex's ``.web`` folder.
    """

    def __init__(self, web_dir: Path) -> None:
        self.web_dir = web_dir
        self.path = web_dir / STAMP_NAME

    def matches(self, current: str, static_dir: Path) -> bool:
        """True when ``current`` is the stamped fingerprint and the built UI is still there."""
        if not (static_dir / "index.html").is_file():
            return False
        try:
            return json.loads(self.path.read_text()).get("fingerprint") == current
        except (OSError, ValueError, AttributeError):
            return False

    def clear(self) -> None:
        """Forget the stamp (before a build: an interrupted build must not look valid)."""
        self.path.unlink(missing_ok=True)

    def write(self, current: str) -> None:
        """Stamp ``current`` after a successful build."""
        self.path.write_text(json.dumps({"fingerprint": current}) + "\n")


PACKAGE_JSON_KEY_ORDER = ("name", "type", "scripts", "dependencies", "devDependencies", "overrides")
"""Top-level key order of the committed ``reflex.lock/package.json`` (Reflex's own template order)."""


def normalise_package_json(path: Path) -> bool:
    """Rewrite ``path`` in one canonical form when a build wrote the same object differently.

    Reflex copies ``.web/package.json`` back to ``reflex.lock/`` after each build, and that file's
    top-level key order depends on whether npm last rewrote it (a fresh install) or Reflex's
    template did (a warm one), so running the app flipped the committed file (issue 12). Reflex
    compares package.json files as JSON objects, so the order carries no meaning: this writes
    the object compact, keys in :data:`PACKAGE_JSON_KEY_ORDER` then the rest as found.

    Args:
        path: ``reflex.lock/package.json``; a missing or unreadable file is left alone.

    Returns:
        True when the file was rewritten.
    """
    try:
        text = path.read_text()
        found = json.loads(text)
    except (OSError, ValueError):
        return False
    if not isinstance(found, dict):
        return False
    ordered = {key: found[key] for key in PACKAGE_JSON_KEY_ORDER if key in found}
    ordered.update((key, value) for key, value in found.items() if key not in ordered)
    canonical = json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)
    if canonical == text:
        return False
    path.write_text(canonical)
    return True


def install() -> bool:
    """Make Reflex's prod start-up skip the page compilation and the UI build when up to date.

    Returns:
        False when this Reflex has not the two steps this relies on (a newer release): it then
        builds on every start, as before, and a WARNING says so.
    """
    from reflex import reflex as cli_module
    from reflex.utils import build, exec, prerequisites
    from reflex_base import constants
    from reflex_base.config import get_config

    compile_app: Callable[..., None] | None = getattr(cli_module, "_compile_app", None)
    setup_prod: Callable[[Path], None] | None = getattr(build, "setup_frontend_prod", None)
    setup_plain: Callable[[Path], None] | None = getattr(build, "setup_frontend", None)
    if compile_app is None or setup_prod is None or setup_plain is None:
        logger.warning(
            "this Reflex has no _compile_app/setup_frontend_prod: the UI is rebuilt on every start"
        )
        return False
    decided: dict[str, Any] = {}

    def measure(*, lockfiles: bool = True) -> str:
        return fingerprint(
            PROJECT_ROOT,
            config=get_config(),
            environ=frontend_build_environment(),
            prerender=exec.should_prerender_routes(),
            node_version=decided.get("node"),
            lockfiles=lockfiles,
            app_settings=compiled_settings(),
        )

    def current() -> tuple[str, bool]:
        # Asked inside `_run_prod`, after Reflex set the ports: the state the build would see.
        if "fingerprint" not in decided:
            web_dir = prerequisites.get_web_dir()
            decided["node"] = _node_version()
            value = measure()
            decided["fingerprint"] = value
            decided["stamp"] = BuildStamp(web_dir)
            decided["fresh"] = decided["stamp"].matches(value, web_dir / constants.Dirs.STATIC)
        return decided["fingerprint"], decided["fresh"]

    def cached_compile(*args: Any, **kwargs: Any) -> None:
        _, fresh = current()
        if fresh:
            print("UI build is up to date (same sources, Reflex, Node and settings): not rebuilding.")
            return
        compile_app(*args, **kwargs)

    def cached_setup(root: Path) -> None:
        _, fresh = current()
        if fresh:
            setup_plain(root)  # env.json (same content) and Reflex's last-run time
            return
        stamp: BuildStamp = decided["stamp"]
        stamp.clear()
        inputs = measure(lockfiles=False)
        setup_prod(root)
        normalise_package_json(PROJECT_ROOT / LOCK_DIR / "package.json")
        # The build may rewrite reflex.lock/ (its own output): stamp what is there now, unless
        # a source changed while it built (the next start then builds again).
        if measure(lockfiles=False) == inputs:
            stamp.write(measure())

    cli_module._compile_app = cached_compile  # type: ignore[attr-defined]  # see the module docstring
    build.setup_frontend_prod = cached_setup
    return True


def main(argv: list[str] | None = None) -> None:
    """Run Reflex's CLI (``reflex <argv>``) with the build cache installed.

    Raises:
        SystemExit: The CLI's exit; 2 with one line naming the key when a setting is invalid.
    """
    settings_at_start()  # before Reflex's CLI, whose traceback would bury the setting's name
    install()
    from reflex.reflex import cli

    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="reflex")


if __name__ == "__main__":
    main()

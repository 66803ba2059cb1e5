"""The production UI is rebuilt only when what the build reads changed (issue 18, item 3)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ventapp import ui_build
from ventapp.config import PROJECT_ROOT, get_settings


@dataclasses.dataclass
class _Config:
    app_name: str = "ventapp"
    api_url: str = "http://localhost:3000"


def _project(root: Path) -> Path:
    (root / "ventapp" / "pages").mkdir(parents=True)
    (root / "ventapp" / "pages" / "chat.py").write_text("PAGE = 1\n")
    (root / "assets").mkdir()
    (root / "assets" / "logo.svg").write_text("<svg/>")
    (root / "rxconfig.py").write_text("config = 1\n")
    (root / "reflex.lock").mkdir()
    (root / "reflex.lock" / "package.json").write_text("{}")
    return root


def _print(root: Path, **changes: object) -> str:
    arguments: dict[str, object] = {
        "config": _Config(),
        "environ": {"PATH": "/bin"},
        "prerender": True,
        "node_version": "v22.22.0",
        "reflex_versions": ["reflex==0.10.1"],
        **changes,
    }
    return ui_build.fingerprint(root, **arguments)  # type: ignore[arg-type]


def test_fingerprint_follows_sources_versions_and_build_settings(tmp_path: Path) -> None:
    root = _project(tmp_path)
    base = _print(root)
    assert _print(root) == base, "same inputs, same fingerprint"
    changed = {
        "a page": lambda: (root / "ventapp" / "pages" / "chat.py").write_text("PAGE = 2\n"),
        "an asset": lambda: (root / "assets" / "logo.svg").write_text("<svg></svg>"),
        "rxconfig.py": lambda: (root / "rxconfig.py").write_text("config = 2\n"),
        "a new module": lambda: (root / "ventapp" / "new.py").write_text(""),
    }
    seen = {base}
    for what, change in changed.items():
        change()
        now = _print(root)
        assert now not in seen, f"changing {what} must rebuild"
        seen.add(now)
    settled = _print(root)
    assert _print(root, reflex_versions=["reflex==0.10.2"]) != settled
    assert _print(root, node_version="v24.0.0") != settled
    assert _print(root, config=_Config(api_url="http://localhost:3001")) != settled, "the port is baked in"
    assert _print(root, environ={"PATH": "/bin", "VITE_MINIFY": "false"}) != settled
    assert _print(root, environ={"PATH": "/bin", "REFLEX_API_URL": "https://x"}) != settled
    assert _print(root, prerender=False) != settled


def test_fingerprint_ignores_what_the_build_does_not_read(tmp_path: Path) -> None:
    root = _project(tmp_path)
    base = _print(root)
    (root / "ventapp" / "pages" / "__pycache__").mkdir()
    (root / "ventapp" / "pages" / "__pycache__" / "chat.cpython-311.pyc").write_bytes(b"\0")
    (root / "assets" / "external").mkdir()  # links Reflex makes while compiling
    (root / "assets" / "external" / "x.js").write_text("x")
    (root / "README.md").write_text("docs")
    assert _print(root, environ={"PATH": "/usr/bin", "OPENAI_API_KEY": "sk-other"}) == base
    without_lock = _print(root, lockfiles=False)
    (root / "reflex.lock" / "package.json").write_text('{"a": 1}')
    assert _print(root) != base, "pinned frontend packages count"
    assert _print(root, lockfiles=False) == without_lock, "the build's own rewrite can be told apart"


def test_stamp_needs_the_same_fingerprint_and_the_built_ui(tmp_path: Path) -> None:
    web = tmp_path / ".web"
    static = web / "build" / "client"
    static.mkdir(parents=True)
    stamp = ui_build.BuildStamp(web)
    assert not stamp.matches("abc", static)
    stamp.write("abc")
    assert not stamp.matches("abc", static), "no index.html: nothing to serve"
    (static / "index.html").write_text("<html></html>")
    assert stamp.matches("abc", static) and not stamp.matches("abd", static)
    stamp.clear()
    assert not stamp.matches("abc", static)


def test_reflex_prod_start_builds_once_then_serves_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two steps of ``reflex run --env prod`` this wraps, with stand-ins that record calls."""
    from reflex import reflex as cli_module
    from reflex.utils import build, prerequisites

    root = _project(tmp_path / "project")
    web = tmp_path / ".web"
    calls: list[str] = []

    def compile_app(**_kwargs: object) -> None:
        calls.append("compile")

    def setup_prod(_root: Path) -> None:
        calls.append("build")
        (web / "build" / "client").mkdir(parents=True, exist_ok=True)
        (web / "build" / "client" / "index.html").write_text("<html></html>")
        (root / "reflex.lock" / "package.json").write_text('{"rewritten": true}')  # as builds do

    monkeypatch.setattr(ui_build, "PROJECT_ROOT", root)
    monkeypatch.setattr(prerequisites, "get_web_dir", lambda: web)
    monkeypatch.setattr(build, "setup_frontend", lambda _root: calls.append("env.json"))

    def start() -> list[str]:
        monkeypatch.setattr(cli_module, "_compile_app", compile_app)
        monkeypatch.setattr(build, "setup_frontend_prod", setup_prod)
        assert ui_build.install()
        calls.clear()
        cli_module._compile_app(avoid_dirty_check=False)
        build.setup_frontend_prod(root)
        return list(calls)

    web.mkdir()
    assert start() == ["compile", "build"], "first start: nothing built yet"
    assert start() == ["env.json"], "nothing changed: the build is served as it is"
    (root / "ventapp" / "pages" / "chat.py").write_text("PAGE = 3\n")
    assert start() == ["compile", "build"], "a UI source changed"
    assert start() == ["env.json"]


def test_a_reordered_package_json_is_written_back_as_committed(tmp_path: Path) -> None:
    """Issue 12: a build that wrote devDependencies first must not dirty the checkout."""
    committed = (PROJECT_ROOT / "reflex.lock" / "package.json").read_text()
    found = json.loads(committed)
    flipped = {"name": found["name"], "type": found["type"], "devDependencies": found["devDependencies"]}
    flipped.update((key, value) for key, value in found.items() if key not in flipped)
    path = tmp_path / "package.json"
    path.write_text(json.dumps(flipped, indent=2))

    assert ui_build.normalise_package_json(path) is True
    assert path.read_text() == committed
    assert ui_build.normalise_package_json(path) is False  # already canonical: untouched


def test_the_committed_package_json_is_already_canonical(tmp_path: Path) -> None:
    path = tmp_path / "package.json"
    committed = (PROJECT_ROOT / "reflex.lock" / "package.json").read_text()
    path.write_text(committed)
    assert ui_build.normalise_package_json(path) is False
    assert path.read_text() == committed


def test_auth_mode_is_a_build_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by trying it: a build for AUTH_MODE=local served with none left no way to name oneself."""
    root = _project(tmp_path)
    local = _print(root, app_settings={"AUTH_MODE": "local"})
    assert _print(root, app_settings={"AUTH_MODE": "none"}) != local
    assert _print(root, app_settings={"AUTH_MODE": "local"}) == local

    monkeypatch.setenv("DEEP_AGENT_ENV_PRIORITY", "process")
    for mode in ("local", "none"):
        monkeypatch.setenv("AUTH_MODE", mode)
        get_settings.cache_clear()
        try:
            assert ui_build.compiled_settings() == {"AUTH_MODE": mode}
        finally:
            get_settings.cache_clear()

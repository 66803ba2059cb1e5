"""``MODELS``: named model routes as JSON, YAML or a file (issue 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ventapp.config import load_settings
from ventapp.model_config import parse_routes


def test_json_yaml_and_file_spellings_give_the_same_routes(tmp_path: Path) -> None:
    as_json = '[{"name": "local", "model": "qwen3", "base_url": "http://h/v1", "context_limit": 32768}]'
    as_yaml = "- name: local\n  model: qwen3\n  base_url: http://h/v1\n  window: 32768\n"
    (tmp_path / "routes.yaml").write_text(as_yaml)
    routes = {parse_routes(text, tmp_path) for text in (as_json, as_yaml, "routes.yaml")}
    assert len(routes) == 1
    (route,) = routes.pop()
    assert (route.name, route.model, route.context_limit, route.thinking_level) == (
        "local",
        "qwen3",
        32768,
        "default",
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[{"name": "default", "model": "m"}]', "name"),
        ('[{"name": "a", "model": "m"}, {"name": "a", "model": "n"}]', "twice"),
        ('[{"name": "a"}]', "needs a model"),
        ('[{"name": "a", "model": "m", "context_limit": 10}]', "context_limit"),
        ('[{"name": "a", "model": "m", "thinking": "maybe"}]', "thinking"),
        ('[{"name": "a", "model": "m", "key": "x"}]', "unknown fields"),
        ('{"name": "a"}', "list"),
        ("missing.json", "cannot be read"),
    ],
)
def test_bad_routes_fail_naming_models(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ValueError, match="MODELS") as refused:
        parse_routes(text, tmp_path)
    assert problem in str(refused.value)


def test_settings_list_the_main_route_first() -> None:
    settings = load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "MODELS": '[{"name": "b", "model": "m"}]',
            "MODEL_NAME": "main-model",
        }
    )
    assert [route.name for route in settings.routes] == ["default", "b"]
    assert settings.route(None) == settings.main_route and settings.route("b").model == "m"  # type: ignore[union-attr]
    assert settings.route("c") is None

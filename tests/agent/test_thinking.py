"""Thinking levels per provider (issue 10): what a route offers and what each level sends."""

from __future__ import annotations

import pytest

from ventapp.agent.model_factory import build_model
from ventapp.agent.thinking import (
    UnknownLevel,
    check_level,
    check_routes,
    levels_for,
    model_kwargs,
    resolve_control,
)
from ventapp.config import load_settings
from ventapp.i18n import MESSAGES
from ventapp.model_config import ModelRoute


@pytest.mark.parametrize(
    ("base_url", "model", "control"),
    [
        ("https://api.deepseek.com/v1", "deepseek-chat", "deepseek"),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-plus", "qwen"),
        ("http://localhost:8000/v1", "Qwen3-8B", "qwen"),
        ("", "o3-mini", "effort"),
        ("", "gpt-4o-mini", "none"),
        ("http://localhost:8080/v1", "llama-3.1-8b", "none"),
    ],
)
def test_auto_picks_the_control_from_endpoint_and_model(base_url: str, model: str, control: str) -> None:
    assert resolve_control(ModelRoute("r", model, base_url)) == control


def test_levels_map_to_each_providers_switch() -> None:
    effort = ModelRoute("r", "o3", thinking_control="effort")
    assert model_kwargs(effort, "high") == {"model": "o3", "reasoning_effort": "high"}
    assert model_kwargs(effort, "off") == {"model": "o3", "reasoning_effort": "none"}
    assert model_kwargs(effort, "default") == {"model": "o3"}
    dashscope = ModelRoute("q", "qwen-plus", "https://dashscope.aliyuncs.com/compatible-mode/v1")
    assert model_kwargs(dashscope, "on")["extra_body"] == {"enable_thinking": True}
    vllm = ModelRoute("v", "qwen3-8b", "http://localhost:8000/v1")
    assert model_kwargs(vllm, "off")["extra_body"] == {"chat_template_kwargs": {"enable_thinking": False}}
    deepseek = ModelRoute("d", "deepseek-chat", "https://api.deepseek.com/v1")
    assert model_kwargs(deepseek, "on") == {"model": "deepseek-reasoner"}
    assert model_kwargs(deepseek, "off") == {"model": "deepseek-chat"}


def test_unknown_level_lists_the_offered_ones() -> None:
    route = ModelRoute("r", "m", "http://x/v1", thinking_control="qwen", thinking_levels=("on",))
    assert levels_for(route) == ("default", "on")
    assert check_level(route, " ON ") == "on"
    with pytest.raises(UnknownLevel) as refused:
        check_level(route, "off")
    assert refused.value.levels == ("default", "on")


def test_unknown_levels_sentence_is_the_catalogues(monkeypatch: pytest.MonkeyPatch) -> None:
    """One source: the start's error, the API's ``detail`` and the settings page read the catalogue."""
    route = ModelRoute("r", "m", "http://x/v1", thinking_control="qwen")
    with pytest.raises(UnknownLevel) as refused:
        check_level(route, "max")
    assert str(refused.value) == "The model route 'r' offers the thinking levels default, off, on; got 'max'."
    assert refused.value.worded("zh-CN") == "模型路由“r”提供的思考级别为default, off, on；收到的是'max'。"
    monkeypatch.setitem(MESSAGES["en"], "refusal.unknown_level", "{route}: {levels} (not {level})")
    with pytest.raises(UnknownLevel) as reworded:
        check_level(route, "max")
    assert str(reworded.value) == "r: default, off, on (not 'max')"


def test_a_starting_level_the_route_does_not_offer_fails_the_start() -> None:
    with pytest.raises(ValueError, match="THINKING_LEVEL"):
        check_routes((ModelRoute("default", "gpt-4o-mini", thinking_level="high"),))


def test_built_model_sends_the_level_and_echoes_reasoning_for_deepseek() -> None:
    settings = load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_API_KEY": "k"})
    route = ModelRoute("d", "deepseek-chat", "https://api.deepseek.com/v1", "k", 64000)
    model = build_model(settings, route, "on")
    assert model.model_name == "deepseek-reasoner" and model.echo_reasoning is True
    assert model.profile is not None and model.profile["max_input_tokens"] == 64000
    assert build_model(settings).echo_reasoning is False

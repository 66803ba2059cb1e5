"""The tool registry: registration, error contract, citations and reloading (pitfalls 3 and 7)."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from dataclasses import replace

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from ventapp.tools import registry
from ventapp.tools.registry import register, source, sourced

DEMO_TOOLS = {"current_time", "calculate", "knowledge_search"}
ENGINEERING_TOOLS = {
    "airway_resistance",
    "combine_resistances",
    "fan_laws_scale",
    "fan_operating_point",
    "natural_ventilation_pressure",
    "airflow_demand",
    "check_air_velocity",
    "solve_ventilation_network",
}
BUILTIN_TOOLS = DEMO_TOOLS | {"ask_user", "request_plan_approval"} | ENGINEERING_TOOLS


@pytest.fixture
def empty_registry() -> Iterator[None]:
    """An empty registry for the test; the built-in tools are restored afterwards."""
    registry.clear_registry()
    yield
    registry.load_builtin_tools(reload=True)


@pytest.fixture(autouse=True)
def builtins_loaded() -> None:
    registry.load_builtin_tools()


def _call(tool: BaseTool, **args: object) -> ToolMessage:
    message = tool.invoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": args})
    assert isinstance(message, ToolMessage)
    return message


def _define_tools() -> dict[str, object]:
    """Register three small tools from inside this test module."""

    @register(group="测试", label="加法", summary="Adds two numbers.")
    def add_numbers(a: int, b: int = 2) -> dict:
        """Add two integers.

        Args:
            a: First addend.
            b: Second addend.
        """
        return {"sum": a + b, "note": "和"}

    @register(group="测试", label="总是失败", summary="Always fails.", requires_approval=True)
    def always_fails(reason: str) -> str:
        """Fail on purpose.

        Args:
            reason: What to complain about.
        """
        raise RuntimeError(f"cannot do {reason}")

    @register(group="测试", label="回声", summary="Echoes text.")
    def echo(text: str) -> str:
        """Echo the text back.

        Args:
            text: Any text.
        """
        return text

    return {"add_numbers": add_numbers, "always_fails": always_fails, "echo": echo}


def test_register_builds_a_structured_tool_with_docstring_descriptions(empty_registry: None) -> None:
    funcs = _define_tools()
    spec = registry.get_spec("add_numbers")
    assert spec is not None
    assert (spec.group, spec.label, spec.summary, spec.requires_approval) == (
        "测试",
        "加法",
        "Adds two numbers.",
        False,
    )
    assert spec.module == __name__
    assert spec.tool.name == "add_numbers"
    assert spec.tool.description.startswith("Add two integers.")
    assert spec.tool.args["a"]["description"] == "First addend."
    assert spec.tool.args["b"]["default"] == 2
    # The decorator returns the plain function, still directly callable.
    assert funcs["add_numbers"](1) == {"sum": 3, "note": "和"}


def test_dict_results_become_json_and_strings_pass_through(empty_registry: None) -> None:
    _define_tools()
    message = _call(registry.get_spec("add_numbers").tool, a=1, b=5)
    assert message.status == "success"
    assert message.content == '{"sum": 6, "note": "和"}'  # ensure_ascii=False keeps Chinese readable
    assert _call(registry.get_spec("echo").tool, text='{"not": "parsed"}').content == '{"not": "parsed"}'


def test_a_failing_tool_returns_an_error_tool_message_instead_of_raising(empty_registry: None) -> None:
    _define_tools()
    message = _call(registry.get_spec("always_fails").tool, reason="magic")
    assert message.status == "error"
    assert message.tool_call_id == "c1"
    assert message.content == "Tool 'always_fails' failed: cannot do magic."


def test_invalid_arguments_also_return_an_error_message(empty_registry: None) -> None:
    _define_tools()
    message = _call(registry.get_spec("add_numbers").tool, a="not a number")
    assert message.status == "error"
    assert "add_numbers" in message.content and "a:" in message.content


def test_duplicate_names_fail_at_registration_naming_both_modules(empty_registry: None) -> None:
    _define_tools()

    def echo(text: str) -> str:
        """Another echo.

        Args:
            text: Any text.
        """
        return text

    echo.__module__ = "some.other_module"
    with pytest.raises(ValueError, match="Duplicate tool name 'echo'") as info:
        register(group="g", label="l", summary="s")(echo)
    assert __name__ in str(info.value) and "some.other_module" in str(info.value)


def test_register_rejects_missing_docstrings_and_metadata(empty_registry: None) -> None:
    def undocumented(x: int) -> int:
        return x

    def args_not_documented(x: int) -> int:
        """Return x."""
        return x

    with pytest.raises(ValueError, match="no docstring"):
        register(group="g", label="l", summary="s")(undocumented)
    # Every argument needs an Args: entry, so a vague docstring fails at start, not mid-run.
    with pytest.raises(ValueError, match="invalid docstring"):
        register(group="g", label="l", summary="s")(args_not_documented)
    with pytest.raises(ValueError, match="label"):
        register(group="g", label=" ", summary="s")
    assert registry.all_specs() == []


def test_lookups_labels_and_approval(empty_registry: None) -> None:
    _define_tools()
    assert [t.name for t in registry.all_tools()] == ["add_numbers", "always_fails", "echo"]
    assert [s.name for s in registry.all_specs()] == ["add_numbers", "always_fails", "echo"]
    assert registry.tool_label("add_numbers") == "加法"
    assert registry.tool_label("write_file") == "write_file"
    assert registry.get_spec("nope") is None
    assert registry.approval_required() == ["always_fails"]


def test_get_tools_by_name_returns_base_tools_in_order() -> None:
    # Pitfall 3: agents need BaseTool objects (with .name), not names or raw functions.
    tools = registry.get_tools_by_name(["knowledge_search", "calculate"])
    assert all(isinstance(t, BaseTool) for t in tools)
    assert [t.name for t in tools] == ["knowledge_search", "calculate"]


def test_get_tools_by_name_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(KeyError) as info:
        registry.get_tools_by_name(["calculate", "launch_rocket"])
    text = str(info.value)
    assert "launch_rocket" in text and "calculate" in text and "knowledge_search" in text


def test_builtin_tools_are_registered_with_their_metadata() -> None:
    assert {s.name for s in registry.all_specs()} >= DEMO_TOOLS
    assert registry.tool_label("current_time") == "当前时间"
    assert registry.get_spec("calculate").group == "计算"
    assert registry.get_spec("knowledge_search").label == "知识检索"


def test_plain_import_after_clearing_leaves_the_registry_empty_but_reload_restores_it(
    empty_registry: None,
) -> None:
    # Pitfall 7: the module is cached in sys.modules, so importing it again does not re-run
    # its @register decorators and the cleared registry stays empty.
    importlib.import_module("ventapp.tools.demo_tools")
    assert not DEMO_TOOLS & {s.name for s in registry.all_specs()}

    specs = registry.load_builtin_tools(reload=True)
    assert {s.name for s in specs} == BUILTIN_TOOLS
    assert registry.get_tools_by_name(sorted(DEMO_TOOLS))


def test_load_without_reload_is_idempotent_and_heals_a_cleared_registry() -> None:
    before = [s.name for s in registry.load_builtin_tools()]
    assert [s.name for s in registry.load_builtin_tools()] == before  # no duplicates raised
    registry.clear_registry()
    assert {s.name for s in registry.load_builtin_tools()} == BUILTIN_TOOLS


def test_reload_twice_does_not_raise_duplicates() -> None:
    registry.load_builtin_tools(reload=True)
    assert {s.name for s in registry.load_builtin_tools(reload=True)} == BUILTIN_TOOLS


# --- citations ----------------------------------------------------------------------------------


def test_source_and_sourced_build_the_citation_format() -> None:
    entry = source("Fan Laws", "/kb/fan-laws", snippet="Q ∝ N", score=2)
    assert entry == {"title": "Fan Laws", "url": "/kb/fan-laws", "snippet": "Q ∝ N", "score": 2.0}
    assert source("T", "/u") == {"title": "T", "url": "/u", "snippet": "", "score": None}
    assert sourced([1], [entry]) == {"data": [1], "sources": [entry]}
    assert sourced([], [], note="nothing")["note"] == "nothing"
    with pytest.raises(ValueError):
        source("", "/kb/x")


def test_parse_sourced_round_trips_and_fills_defaults() -> None:
    content = json.dumps(
        {
            "data": {"x": 1},
            "sources": [
                source("A", "/kb/a", "snip", 1.5),
                {"title": "B", "url": "/kb/b"},
                {"title": "", "url": "/kb/empty-title"},
                {"title": "No url"},
                {"title": "C", "url": "/kb/c", "snippet": 7, "score": "high"},
                "not a dict",
            ],
        },
        ensure_ascii=False,
    )
    assert registry.parse_sourced(content) == [
        {"title": "A", "url": "/kb/a", "snippet": "snip", "score": 1.5},
        {"title": "B", "url": "/kb/b", "snippet": "", "score": None},
        {"title": "C", "url": "/kb/c", "snippet": "", "score": None},
    ]


@pytest.mark.parametrize(
    "content",
    [
        "60",
        "",
        "plain text",
        "{not json",
        "[1, 2]",
        '{"sources": [{"title": "A", "url": "/a"}]}',  # no "data": not the sourced format
        '{"data": 1, "sources": "nope"}',
        None,
        42,
    ],
)
def test_parse_sourced_returns_empty_for_anything_else(content: object) -> None:
    assert registry.parse_sourced(content) == []


def test_parse_sourced_accepts_text_content_blocks() -> None:
    payload = json.dumps(sourced([], [source("A", "/kb/a")]))
    blocks = [{"type": "text", "text": payload[:10]}, {"type": "text", "text": payload[10:]}]
    assert registry.parse_sourced(blocks) == [{"title": "A", "url": "/kb/a", "snippet": "", "score": None}]


def test_added_specs_clashing_with_a_registered_tool_name_both_sources() -> None:
    registry.load_builtin_tools()
    ours = registry.get_spec("calculate")
    assert ours is not None
    theirs = replace(ours, module="mcp:site")
    with pytest.raises(ValueError, match=r"offered by ventapp\.tools\.demo_tools and again by mcp:site"):
        registry.add_specs([theirs])
    twice = [
        replace(ours, name="site__a", module="mcp:site"),
        replace(ours, name="site__a", module="mcp:web"),
    ]
    with pytest.raises(ValueError, match="offered by mcp:site and again by mcp:web"):
        registry.add_specs(twice)
    assert registry.get_spec("site__a") is None, "all or none"
    registry.add_specs([twice[0]])
    registry.remove_specs("mcp:")
    assert registry.get_spec("site__a") is None and registry.get_spec("calculate") is ours

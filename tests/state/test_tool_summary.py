"""The one-line summary on a tool card: what each of our tools returned, in the UI language (issue 12)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ventapp.agent import events as ev
from ventapp.agent.interrupts import rejection_message, rejection_reason
from ventapp.agent.tool_failure_words import failure_for_person
from ventapp.state.live_answer import LiveAnswer, reduce_event
from ventapp.state.tool_summary import tool_summary
from ventapp.state.views import tool_card_from_dict
from ventapp.tools import registry, run_language, workspace_files

FAN_NETWORK = (
    "edge_id,from,to,r_N_s2_m8,is_fan,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6,area_m2,airway_type\n"
    "f,1,2,0.05,1,200,30,-0.8,10,main_airway\n"
    "a,2,3,0.3,0,,,,10,district_airway\n"
    "b,1,3,0.3,0,,,,100,district_airway\n"
    "c,3,4,0.3,0,,,,10,district_airway\n"
)


@pytest.fixture
def solver_result(tmp_path: Path) -> str:
    """What the registered network solver returns to the model for a small network with one fan."""
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "fan.csv").write_text(FAN_NETWORK, encoding="utf-8")
    workspace_files.set_workspace_resolver(lambda: tmp_path)
    try:
        registry.load_builtin_tools()
        (tool,) = registry.get_tools_by_name(["solve_ventilation_network"])
        return str(tool.invoke({"path": "/workspace/uploads/fan.csv", "total_flow": 12.0}))
    finally:
        workspace_files.set_workspace_resolver(None)


def test_the_network_solver_is_summarised_by_its_solution(solver_result: str) -> None:
    iterations = json.loads(solver_result)["data"]["iterations"]
    plural = "iteration" if iterations == 1 else "iterations"

    assert tool_summary(solver_result, "en", "solve_ventilation_network") == (
        f"Converged in {iterations} {plural} · 4 airways · 1 fan · 1 reversed airway"
    )
    assert tool_summary(solver_result, "zh-CN", "solve_ventilation_network") == (
        f"迭代 {iterations} 次后收敛 · 4 条巷道 · 1 台风机 · 1 条巷道风流反向"
    )


def test_cards_live_and_reloaded_carry_the_tools_summary(solver_result: str) -> None:
    live = reduce_event(
        LiveAnswer(lang="en"),
        ev.ToolResult(tool="solve_ventilation_network", cn_tool="", content=solver_result, tool_call_id="c"),
    )
    stored = tool_card_from_dict(
        {"tool_call_id": "c", "tool": "solve_ventilation_network", "content": solver_result}, "en"
    )
    assert live.tools[0].summary == stored.summary
    assert stored.summary.startswith("Converged in ") and "source" not in stored.summary


def test_our_calculators_are_summarised_by_their_numbers() -> None:
    def sourced(data: object) -> str:
        return json.dumps({"data": data, "sources": [{"title": "t", "url": "/kb/x"}]})

    resistance = sourced({"resistance_ns2_m8": {"total": 0.012345}, "pressure_drop_pa": 1234.4})
    assert (
        tool_summary(resistance, "en", "airway_resistance") == "R = 0.0123 N·s²/m⁸ · pressure drop 1,234 Pa"
    )
    assert tool_summary(resistance, "zh-CN", "airway_resistance") == "风阻 0.0123 N·s²/m⁸ · 压降 1,234 Pa"
    duty = sourced({"found": True, "flow_m3_s": 45.678, "pressure_pa": 1500.0, "stable": False})
    assert tool_summary(duty, "en", "fan_operating_point") == "45.7 m³/s · 1,500 Pa · unstable"
    assert tool_summary(duty, "zh-CN", "fan_operating_point") == "风量 45.7 m³/s · 风压 1,500 Pa · 工况不稳定"
    velocity = sourced({"velocity_m_s": 0.12, "within_limits": False})
    assert tool_summary(velocity, "en", "check_air_velocity") == "0.12 m/s · outside limits"
    assert tool_summary(sourced({"required_flow_m3_s": 20}), "zh-CN", "airflow_demand") == "需风量 20 m³/s"
    passages = sourced([{"title": "a"}])
    assert tool_summary(passages, "en", "knowledge_search") == "1 passage found"
    assert tool_summary(sourced([{}, {}]), "zh-CN", "knowledge_search") == "找到 2 段资料"


def test_other_results_count_their_sources_in_proper_english() -> None:
    one = json.dumps({"data": {"x": 1}, "sources": [{"title": "a"}]})
    assert tool_summary(one, "en", "some_mcp_tool") == "1 source found"
    assert tool_summary(json.dumps({"sources": [{}, {}]}), "en") == "2 sources found"
    assert tool_summary(one, "zh-CN") == "找到 1 个来源"
    assert tool_summary(json.dumps({"data": {"message": "done"}, "sources": []}), "en") == "done"
    assert tool_summary('{"data": "not ours"}', "en", "solve_ventilation_network") == "data"


@pytest.fixture
def refused_network(tmp_path: Path) -> str:
    """What the registered network solver returns to the model for a topology without ``r_N_s2_m8``."""
    bad = Path(__file__).parents[1] / "data" / "ventilation-networks" / "fan_family_64" / "topology.csv"
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "topology.csv").write_bytes(bad.read_bytes())
    workspace_files.set_workspace_resolver(lambda: tmp_path)
    try:
        registry.load_builtin_tools()
        (tool,) = registry.get_tools_by_name(["solve_ventilation_network"])
        message = tool.invoke(
            {
                "name": tool.name,
                "args": {"path": "/workspace/uploads/topology.csv"},
                "id": "c",
                "type": "tool_call",
            }
        )
    finally:
        workspace_files.set_workspace_resolver(None)
    assert message.status == "error"
    return str(message.content)


def test_a_refused_network_reads_in_chinese_on_its_card_while_the_model_keeps_the_detail(
    refused_network: str,
) -> None:
    """Tester (71_badnet): the card read "Tool 'solve_ventilation_network' failed: [missing_column] …
    (topology.csv lacks the column(s) 'r_N_s2_m8'; …)" in the Chinese UI."""
    content = refused_network
    # The model still learns which tool failed and which column is missing.
    assert content.startswith("Tool 'solve_ventilation_network' failed: [missing_column] ")
    assert "'r_N_s2_m8'" in content

    live = reduce_event(
        LiveAnswer(lang="zh-CN"),
        ev.ToolResult(
            tool="solve_ventilation_network", cn_tool="", content=content, tool_call_id="c", error=True
        ),
    )
    stored = tool_card_from_dict(
        {"tool_call_id": "c", "tool": "solve_ventilation_network", "content": content, "error": True}, "zh-CN"
    )
    assert live.tools[0].summary == stored.summary
    # Tester #8: only the missing column is named, and Chinese headers are offered.
    assert stored.summary == "拓扑文件缺少必需的列：r_N_s2_m8。表头也可以用中文：编号、起点、终点、风阻。"
    # English keeps the detail (it is the person's language), but not the model's wrapper or code.
    english = tool_summary(content, "en", "solve_ventilation_network")
    # try15: an English UI reads no Chinese sentence; try20: it reads the catalogue's English one,
    # worded again with the values read back from the Chinese (then the detail, when room is left).
    assert (
        english.startswith("The topology file lacks the required columns r_N_s2_m8.")
        and "拓扑" not in english
    )


def test_a_failed_cards_expanded_result_reads_as_a_person_reads_it_live_and_reloaded(
    refused_network: str,
) -> None:
    """Lead (ui12): the header read Chinese, but the expanded 结果 still showed the model's text,
    the English ``Tool '…' failed:`` wrapper and the English detail."""
    sentence = "拓扑文件缺少必需的列：r_N_s2_m8。表头也可以用中文：编号、起点、终点、风阻。"
    for lang, wanted in (("zh-CN", sentence), ("en", failure_for_person(refused_network, "en"))):
        live = reduce_event(
            LiveAnswer(lang=lang),
            ev.ToolResult(
                tool="solve_ventilation_network",
                cn_tool="",
                content=refused_network,
                tool_call_id="c",
                error=True,
            ),
        )
        raw = {"tool_call_id": "c", "tool": "solve_ventilation_network", "content": refused_network}
        stored = tool_card_from_dict({**raw, "error": True}, lang)
        assert live.tools[0].content == stored.content == wanted
        assert "Tool '" not in stored.content
    assert "lacks the column" not in sentence and "lacks the column" in failure_for_person(
        refused_network, "en"
    )
    # A success still shows its whole output, pretty-printed.
    ok = tool_card_from_dict({"tool_call_id": "d", "tool": "x", "content": '{"a": 1}'}, "zh-CN")
    assert ok.content == '{\n  "a": 1\n}'


def test_an_unreadable_topology_file_says_what_to_do_without_a_code(tmp_path: Path) -> None:
    """Tester #2: "结果: [unreadable] 读不了这个拓扑文件：请上传 .csv 或 .xlsx 文件。" for a .csv."""
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "net.csv").write_bytes(b"edge_id,from,to,r_N_s2_m8\n1,1,2,0.1\x81\n")
    workspace_files.set_workspace_resolver(lambda: tmp_path)
    try:
        status, content = _call("solve_ventilation_network", {"path": "/workspace/uploads/net.csv"})
    finally:
        workspace_files.set_workspace_resolver(None)
    assert status == "error" and "[unreadable]" in content  # the model keeps the code and the detail
    card = tool_summary(content, "zh-CN", "solve_ventilation_network")
    assert "[" not in card and "CSV UTF-8" in card and ".xlsx" in card
    assert "请上传 .csv 或 .xlsx" not in card


def _call(name: str, args: dict) -> tuple[str, str]:
    """A registered tool called as the agent calls it: (its message's status, its content)."""
    registry.load_builtin_tools()
    (tool,) = registry.get_tools_by_name([name])
    message = tool.invoke({"name": name, "args": args, "id": "c", "type": "tool_call"})
    return str(message.status), str(message.content)


@pytest.mark.parametrize(
    ("name", "args", "chinese", "english"),
    [
        (  # tester #4: "结果: the fan curve does not meet the system curve at a positive flow", 完成
            "fan_operating_point",
            {"a0_pa": -10, "a1_pa_s_m3": 0, "a2_pa_s2_m6": -0.05, "system_resistance_ns2_m8": 0.1},
            "没有工况点",
            "does not meet the system curve",
        ),
        (  # tester #4: "结果: unknown airway type 'tunnel'; known: ventilation_shaft, …"
            "check_air_velocity",
            {"flow": 20, "area_m2": 10, "airway_type": "tunnel"},
            "tunnel",
            "unknown airway type",
        ),
        (  # tester #4: "结果: give friction_factor_kg_m3 or an airway_type from: coal.smooth_lined, …"
            "airway_resistance",
            {"length_m": 100, "area_m2": 10, "perimeter_m": 13, "airway_type": "bogus"},
            "bogus",
            "friction_factor_kg_m3",
        ),
        ("combine_resistances", {"resistances_ns2_m8": [0.1], "arrangement": "diagonal"}, "串联", "'series'"),
        ("airflow_demand", {}, "需风量", "no requirement given"),
        ("airflow_demand", {"methane_emission_m3_min": 3}, "不均匀系数", "methane_unevenness_k"),
        (
            "natural_ventilation_pressure",
            {"depth_m": -5, "density_downcast_kg_m3": 1.2, "density_upcast_kg_m3": 1.1},
            "",
            "depth",
        ),
        ("fan_laws_scale", {"speed_ratio": 0, "flow": 10}, "", "ratio must be positive"),
        (
            "check_air_velocity",
            {"flow": "20 furlongs", "area_m2": 10, "airway_type": "coal_face"},
            "",
            "furlongs",
        ),
    ],
)
def test_a_ventilation_tools_refusal_reads_in_chinese_on_its_card_and_in_english_for_the_model(
    name: str, args: dict, chinese: str, english: str
) -> None:
    status, content = _call(name, args)
    assert status == "error"
    assert english in content  # the model keeps the precise English detail
    card = tool_summary(content, "zh-CN", name)
    assert chinese in card and english not in card
    assert re.search(r"[\u4e00-\u9fff]", card), card  # a Chinese sentence, whatever the case
    assert not re.search(r"\b(the|give|unknown|must)\b", card), card
    run_language.set_language_resolver(lambda: "en")  # a run started from the English UI
    try:
        _, content = _call(name, args)
    finally:
        run_language.set_language_resolver(None)
    assert not re.search(r"[\u4e00-\u9fff]", tool_summary(content, "en", name))


def test_no_operating_point_never_shows_the_english_message() -> None:
    data = json.dumps({"data": {"found": False, "message": "the fan curve does not meet"}, "sources": []})
    assert tool_summary(data, "zh-CN", "fan_operating_point") == "没有工况点"


def test_arguments_that_do_not_fit_the_schema_read_in_chinese_naming_the_fields() -> None:
    status, content = _call("check_air_velocity", {"flow": 20, "area_m2": "big"})
    assert status == "error" and "Field required" in content  # the model keeps pydantic's detail
    assert tool_summary(content, "zh-CN", "check_air_velocity") == (
        "参数不合要求：area_m2、airway_type。智能体会看到详细原因。"
    )
    assert "Input should be a valid number" in tool_summary(content, "en", "check_air_velocity")


def test_the_demand_card_shows_the_methane_coefficient_used_and_a_velocity_over_the_limit() -> None:
    """Tester #6: an engineer must see which k sized the methane airflow."""
    registry.load_builtin_tools()
    (tool,) = registry.get_tools_by_name(["airflow_demand"])
    args = {
        "methane_emission_m3_min": 30,
        "methane_unevenness_k": 1.5,
        "area_m2": 10,
        "airway_type": "coal_face",
    }
    content = str(tool.invoke(args))
    assert (
        tool_summary(content, "zh-CN", "airflow_demand")
        == "需风量 75 m³/s · 瓦斯涌出不均匀系数 k = 1.5 · 超出风速限值"
    )
    assert tool_summary(content, "en", "airflow_demand") == (
        "required airflow 75 m³/s · methane unevenness k = 1.5 · outside velocity limits"
    )


@pytest.mark.parametrize("path", ["/workspace/uploads/none.csv", "/workspace/../../etc/passwd"])
def test_a_network_path_that_is_no_upload_reads_in_chinese(tmp_path: Path, path: str) -> None:
    workspace_files.set_workspace_resolver(lambda: tmp_path)
    try:
        status, content = _call("solve_ventilation_network", {"path": path})
    finally:
        workspace_files.set_workspace_resolver(None)
    assert status == "error" and "[not_found]" in content and "/workspace/" in content
    assert tool_summary(content, "zh-CN", "solve_ventilation_network") == (
        "找不到这个拓扑文件：请确认文件已上传，再让智能体解算。"
    )


def test_a_rejected_calls_line_says_it_did_not_run_and_why_not_the_rejection_again() -> None:
    """try18: the badge said "已被你拒绝" and the result line repeated "用户拒绝了这次操作，理由：…"."""
    with_reason = rejection_message("  数据不对，先核对风阻 ", "zh-CN")
    assert tool_summary(with_reason, "zh-CN", "calculate") == "未运行。你的理由：数据不对，先核对风阻"
    assert tool_summary(with_reason, "en", "calculate") == "Not run. Your reason: 数据不对，先核对风阻"
    bare = rejection_message("", "en")
    assert tool_summary(bare, "zh-CN", "calculate") == "未运行，你没有说明理由。"
    assert rejection_reason(bare) == "" and rejection_reason("60") is None
    card = tool_card_from_dict(
        {"tool_call_id": "c1", "tool": "calculate", "args": {}, "content": with_reason, "error": True},
        "zh-CN",
    )
    assert card.summary.startswith("未运行") and card.content == with_reason, (
        "the model's words stay expanded"
    )
    assert tool_summary("用户拒绝了", "zh-CN") == "用户拒绝了", "only our whole sentence is read back"

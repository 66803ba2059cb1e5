"""The solve_ventilation_network tool: an uploaded file in, a sourced summary, CSVs and figures out."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from tests.domain.network.benchmark_data import DATA_DIR
from ventapp.tools import registry, workspace_files
from ventapp.tools.network_tool import curve_names, safe_stem, solve_ventilation_network

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def workspace(tmp_path: Path):
    root = tmp_path / "ws"
    (root / "uploads").mkdir(parents=True)
    workspace_files.set_workspace_resolver(lambda: root)
    yield root
    workspace_files.set_workspace_resolver(None)


def _upload(root: Path, source: Path, name: str = "mine.csv") -> str:
    shutil.copy(source, root / "uploads" / name)
    return f"/workspace/uploads/{name}"


def test_tool_solves_network_a_and_writes_csvs_and_figures(workspace: Path) -> None:
    result = solve_ventilation_network(
        _upload(workspace, DATA_DIR / "A_hongshagang_1" / "topology.csv"), 151.295
    )
    data = result["data"]

    assert data["converged"] is True and data["airways"] == 46
    assert data["largest_flows"][0] == {"edge_id": "19", "q_m3_s": pytest.approx(151.295)}  # the return shaft
    assert data["boundary_pressure_pa"] == pytest.approx(1735.58, abs=0.01)
    assert result["sources"] and result["sources"][0]["url"] == "/kb/network-analysis"
    assert data["figures"] == ["/workspace/results/mine-network.png", "/workspace/results/mine-fan-curve.png"]
    for figure in data["figures"]:
        assert (workspace / figure.removeprefix("/workspace/")).read_bytes().startswith(PNG_MAGIC)
    with (workspace / "results" / "mine-airways.csv").open(encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 46 and float(rows[0]["风量 (m³/s)"]) == pytest.approx(107.604411, abs=1e-5)
    assert data["files"]["nodes_csv"] == "/workspace/results/mine-nodes.csv"


def test_tool_reports_fan_duty_and_low_velocities(workspace: Path) -> None:
    text = (
        "edge_id,from,to,r_N_s2_m8,is_fan,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6,area_m2,airway_type\n"
        "f,1,2,0.05,1,200,30,-0.8,10,main_airway\n"
        "a,2,3,0.3,0,,,,10,district_airway\n"
        "b,1,3,0.3,0,,,,100,district_airway\n"
        "c,3,4,0.3,0,,,,10,district_airway\n"
    )
    (workspace / "uploads" / "fan.csv").write_text(text, encoding="utf-8")
    data = solve_ventilation_network("/workspace/uploads/fan.csv", 12.0)["data"]

    assert data["converged"] and data["fans"][0]["edge_id"] == "f"
    assert data["reversed"]["edge_ids"] == ["b"]  # recirculation through b
    assert [v["edge_id"] for v in data["low_velocity"]] == ["b"]
    assert "条款号未核实" in data["low_velocity"][0]["rule"]  # a zh-CN run: the rule in Chinese


TWO_FANS = (
    "edge_id,from,to,r_N_s2_m8,is_fan,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6\n"
    "F/1,1,2,0.05,1,200,30,-0.8\n"
    "主扇,1,3,0.05,1,300,10,-0.5\n"
    "a,2,4,0.3,0,,,\n"
    "b,3,4,0.2,0,,,\n"
    "c,4,5,0.1,0,,,\n"
)


def test_each_fan_gets_its_own_curve_figure_named_after_it(workspace: Path) -> None:
    """Tester: the curve figure's name said nothing of the fan, so two fans' curves were confused."""
    (workspace / "uploads" / "two fans.csv").write_text(TWO_FANS, encoding="utf-8")
    data = solve_ventilation_network("/workspace/uploads/two fans.csv")["data"]

    assert [fan["edge_id"] for fan in data["fans"]] == ["F/1", "主扇"]
    assert data["figures"] == [
        "/workspace/results/two_fans-network.png",
        "/workspace/results/two_fans-F_1-fan-curve.png",
        "/workspace/results/two_fans-主扇-fan-curve.png",
    ]
    first, second = (
        (workspace / figure.removeprefix("/workspace/")).read_bytes() for figure in data["figures"][1:]
    )
    assert first.startswith(PNG_MAGIC) and second.startswith(PNG_MAGIC) and first != second


@pytest.fixture
def two_networks(workspace: Path) -> tuple[str, str]:
    return (
        _upload(workspace, DATA_DIR / "A_hongshagang_1" / "topology.csv", "红砂岗.csv"),
        _upload(workspace, DATA_DIR / "B_hongshagang_difficult" / "topology.csv", "大柳塔.csv"),
    )


def test_chinese_names_keep_their_own_results(workspace: Path, two_networks: tuple[str, str]) -> None:
    """Tester: 红砂岗.csv and 大柳塔.csv both wrote ``_-network.png``; the first answer then showed the second's figure."""
    first = solve_ventilation_network(two_networks[0], 151.295)["data"]
    figure = workspace / first["figures"][0].removeprefix("/workspace/")
    drawn = figure.read_bytes()
    second = solve_ventilation_network(two_networks[1], 154.09)["data"]

    assert first["figures"][0] == "/workspace/results/红砂岗-network.png"
    assert first["files"]["airways_csv"] == "/workspace/results/红砂岗-airways.csv"
    assert second["figures"][0] == "/workspace/results/大柳塔-network.png"
    assert second["files"]["nodes_csv"] == "/workspace/results/大柳塔-nodes.csv"
    assert figure.read_bytes() == drawn, "the second solve left the first's figure alone"
    listed = {p.name for p in (workspace / "results").iterdir() if not p.name.startswith(".")}
    assert {"红砂岗-fan-curve.png", "大柳塔-fan-curve.png"} <= listed


def test_names_that_come_out_the_same_get_numbers_and_a_resolve_reuses_its_own(workspace: Path) -> None:
    source = DATA_DIR / "A_hongshagang_1" / "topology.csv"
    first = _upload(workspace, source, "mine A.csv")
    other = _upload(workspace, source, "mine#A.csv")  # both are "mine_A" once made safe

    assert (
        solve_ventilation_network(first, 151.295)["data"]["figures"][0]
        == "/workspace/results/mine_A-network.png"
    )
    assert (
        solve_ventilation_network(other, 151.295)["data"]["figures"][0]
        == "/workspace/results/mine_A-2-network.png"
    )
    again = solve_ventilation_network(first, 150.0)["data"]  # the same upload re-solved: its own names
    assert again["files"]["airways_csv"] == "/workspace/results/mine_A-airways.csv"
    upper = _upload(workspace, source, "MINE A.csv")  # a case-insensitive file system would mix it
    assert (
        solve_ventilation_network(upper, 151.295)["data"]["figures"][0]
        == "/workspace/results/MINE_A-3-network.png"
    )


def test_safe_stem_keeps_letters_of_any_script_and_drops_what_breaks_a_link() -> None:
    assert safe_stem("红砂岗") == "红砂岗"
    assert safe_stem("红砂岗一号矿(A)#1&v2") == "红砂岗一号矿_A_1_v2"
    assert safe_stem("红砂岗 一号矿 网络(A)#1 & v2") == "红砂岗_一号矿_网络_A_1_v2"
    assert safe_stem("a%2Fb+c?d=[e]\\f") == "a_2Fb_c_d_e_f"
    assert safe_stem(".env") == "env" and safe_stem("（）") == "network" and safe_stem("..") == "network"
    assert safe_stem("Ärger-1.2") == "Ärger-1.2"
    long = safe_stem("风" * 200)
    assert long == "风" * 26 and len(long.encode("utf-8")) <= 80


def test_curve_names_are_safe_and_never_shared() -> None:
    assert curve_names(
        "mine", ["F/1", "F 1", "f_1", "主扇", "../x", ".env", "Main-fan.2", "（）", "主扇#"]
    ) == {
        "F/1": "mine-F_1-fan-curve.png",
        "F 1": "mine-F_1-2-fan-curve.png",
        "f_1": "mine-f_1-3-fan-curve.png",  # a case-insensitive file system would mix it with F_1
        "主扇": "mine-主扇-fan-curve.png",  # letters of any script stay, as in the network file's stem
        "../x": "mine-x-fan-curve.png",
        ".env": "mine-env-fan-curve.png",
        "Main-fan.2": "mine-Main-fan.2-fan-curve.png",
        "（）": "mine-fan8-fan-curve.png",  # nothing of the id is left: the fan's position
        "主扇#": "mine-主扇-2-fan-curve.png",
    }


def test_registered_tool_returns_json_with_sources_and_readable_errors(workspace: Path) -> None:
    registry.load_builtin_tools()
    (tool,) = registry.get_tools_by_name(["solve_ventilation_network"])
    path = _upload(workspace, DATA_DIR / "B_hongshagang_difficult" / "topology.csv")
    ok = json.loads(tool.invoke({"path": path, "total_flow": 154.09}))
    assert ok["data"]["converged"] and registry.parse_sourced(json.dumps(ok))

    (workspace / "uploads" / "bad.csv").write_text("edge_id,from\n1,2\n", encoding="utf-8")
    bad = tool.invoke({"path": "/workspace/uploads/bad.csv"})
    assert "[missing_column]" in bad and "Traceback" not in bad
    undriven = tool.invoke({"path": path})  # no total_flow, and the file has no fan: nothing moves air
    assert "[no_driver]" in undriven and "total airflow" in undriven
    escape = tool.invoke({"path": "/workspace/../../etc/passwd"})
    assert "not a file under /workspace/" in escape
    missing = tool.invoke({"path": "/workspace/uploads/none.csv"})
    assert "/workspace/uploads/none.csv does not exist" in missing and str(workspace) not in missing


def test_symlink_out_of_the_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.csv"
    outside.write_text("edge_id,from,to,r_N_s2_m8\n1,1,2,0.1\n", encoding="utf-8")
    (workspace / "uploads" / "link.csv").symlink_to(outside)
    with pytest.raises(ValueError, match="outside /workspace/"):
        solve_ventilation_network("/workspace/uploads/link.csv")


def test_without_a_run_the_workspace_is_unavailable() -> None:
    workspace_files.set_workspace_resolver(None)
    with pytest.raises(ValueError, match="not available"):
        solve_ventilation_network("/workspace/uploads/x.csv")


@pytest.mark.parametrize(
    ("ui_lang", "sentence"),
    [("zh-CN", "没有东西驱动风流"), (None, "没有东西驱动风流"), ("en", "Nothing drives the air: no fan")],
)
def test_a_refusal_speaks_the_turns_language_and_keeps_the_detail(
    workspace: Path, ui_lang: str | None, sentence: str
) -> None:
    """Tester: a Chinese engineer's most common first mistake (no total flow) was answered in English."""
    from ventapp.tools import run_language

    run_language.set_language_resolver(lambda: ui_lang)
    path = _upload(workspace, DATA_DIR / "A_hongshagang_1" / "topology.csv")
    try:
        with pytest.raises(ValueError) as refused:
            solve_ventilation_network(path)
    finally:
        run_language.set_language_resolver(None)
    text = str(refused.value)
    assert text.startswith("[no_driver] ") and sentence in text
    assert "(Nothing drives the air: the network has no fan" in text, "the domain's detail stays"


def test_every_refusal_code_has_a_sentence_in_both_languages() -> None:
    from typing import get_args

    from ventapp.domain.network.model import ErrorCode
    from ventapp.i18n import en, zh_cn

    keys = {f"solver.refused.{code}" for code in get_args(ErrorCode)}
    assert keys <= set(zh_cn.MESSAGES) and keys <= set(en.MESSAGES)


def test_result_stems_are_claimed_on_a_file_system_without_hard_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ventapp.tools import network_tool

    def no_links(*_args: object) -> None:
        raise PermissionError("hard links are not supported here")

    monkeypatch.setattr(network_tool.os, "link", no_links)
    first, other = "/workspace/uploads/红砂岗.csv", "/workspace/uploads/红砂岗.xlsx"
    assert network_tool.result_stem(tmp_path, first) == "红砂岗"
    assert network_tool.result_stem(tmp_path, other) == "红砂岗-2"
    assert network_tool.result_stem(tmp_path, first) == "红砂岗", "its own stem again"
    assert not [p for p in (tmp_path / network_tool.CLAIMS_FOLDER).iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize(
    ("ui_lang", "airways", "nodes", "reversed_values"),
    [
        (  # tester #12: a Chinese engineer got edge_id, q_m3_s, h_Pa and reversed 0/1
            "zh-CN",
            [
                "巷道编号",
                "名称",
                "起点",
                "终点",
                "风量 (m³/s)",
                "风压损失 (Pa)",
                "反向",
                "风机",
                "风速 (m/s)",
            ],
            ["节点编号", "节点压力 (Pa)"],
            {"是", "否"},
        ),
        (  # an English run keeps the machine names a program reads
            "en",
            ["edge_id", "name", "from", "to", "q_m3_s", "h_Pa", "reversed", "is_fan", "velocity_m_s"],
            ["node_id", "p_Pa"],
            {"0", "1"},
        ),
    ],
)
def test_the_airways_csv_has_headers_with_units_in_the_runs_language(
    workspace: Path, ui_lang: str, airways: list[str], nodes: list[str], reversed_values: set[str]
) -> None:
    from ventapp.tools import run_language

    run_language.set_language_resolver(lambda: ui_lang)
    try:
        path = _upload(workspace, DATA_DIR / "A_hongshagang_1" / "topology.csv")
        data = solve_ventilation_network(path, 151.295)["data"]
    finally:
        run_language.set_language_resolver(None)
    with (workspace / data["files"]["airways_csv"].removeprefix("/workspace/")).open(
        encoding="utf-8-sig"
    ) as f:
        rows = list(csv.reader(f))
    assert rows[0] == airways and {row[6] for row in rows[1:]} <= reversed_values
    assert {row[7] for row in rows[1:]} <= reversed_values
    with (workspace / data["files"]["nodes_csv"].removeprefix("/workspace/")).open(encoding="utf-8-sig") as f:
        assert next(csv.reader(f)) == nodes

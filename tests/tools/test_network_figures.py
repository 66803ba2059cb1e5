"""The solver's figures speak the run's language, and Chinese draws as glyphs (a CJK font is found)."""

from __future__ import annotations

import re
import warnings
from io import BytesIO
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from tests.domain.network.benchmark_data import DATA_DIR
from ventapp.domain.network import read_topology, solve_network
from ventapp.tools import run_language, workspace_files
from ventapp.tools.figure_fonts import cjk_family
from ventapp.tools.network_figures import draw_curves, draw_network
from ventapp.tools.network_tool import solve_ventilation_network

_HAN = re.compile(r"[\u4e00-\u9fff]")
_ENGLISH_WORD = re.compile(
    r"\b(airflow|airways|reversed|converged|fan|system|curve|duty|pressure|network)\b", re.I
)

FAN_NETWORK = (
    "edge_id,from,to,r_N_s2_m8,is_fan,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6\n"
    "f,1,2,0.05,1,200,30,-0.8\n"
    "a,2,3,0.3,0,,,\n"
    "b,1,3,0.3,0,,,\n"
    "c,3,4,0.3,0,,,\n"
)


def _texts(figure: Figure) -> list[str]:
    return [text.get_text() for text in figure.findobj(Text) if text.get_text().strip()]


def _solved(tmp_path: Path):
    path = tmp_path / "fan.csv"
    path.write_text(FAN_NETWORK, encoding="utf-8")
    network = read_topology(path)
    return network, solve_network(network, None)


def test_a_cjk_font_is_found_on_this_machine() -> None:
    """The set-up installs fonts-noto-cjk; matplotlib's cache predates it, so it must be found on disk."""
    assert cjk_family() is not None


def test_chinese_figures_carry_chinese_words_and_draw_every_glyph(tmp_path: Path) -> None:
    """Tester: the figures had English titles, axes and legends in the Chinese UI."""
    network, solution = _solved(tmp_path)
    diagram, curves = draw_network(network, solution, "zh-CN"), draw_curves(network, solution, "zh-CN")
    assert curves is not None
    words = " ".join(_texts(diagram) + _texts(curves))
    assert "通风网络" in words and "风量 |q|（m³/s）" in words and "风机 f" in words
    assert "风机特性曲线" in words and "工况点" in words and "风压 p（Pa）" in words
    assert not _ENGLISH_WORD.search(words), words
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph … missing from font(s)" for boxes
        for figure in (diagram, curves):
            figure.savefig(BytesIO(), format="png")


def test_english_figures_carry_no_chinese(tmp_path: Path) -> None:
    network, solution = _solved(tmp_path)
    curves = draw_curves(network, solution, "en")
    assert curves is not None
    words = " ".join(_texts(draw_network(network, solution, "en")) + _texts(curves))
    assert "Airflow network" in words and "fan curve" in words and not _HAN.search(words)


@pytest.fixture
def workspace(tmp_path: Path):
    root = tmp_path / "ws"
    (root / "uploads").mkdir(parents=True)
    workspace_files.set_workspace_resolver(lambda: root)
    yield root
    workspace_files.set_workspace_resolver(None)
    run_language.set_language_resolver(None)


@pytest.mark.parametrize(("ui_lang", "lang"), [("en", "en"), ("zh-CN", "zh-CN"), (None, "zh-CN")])
def test_the_tool_draws_in_the_runs_language(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, ui_lang: str | None, lang: str
) -> None:
    """The agent's resolver gives the turn's UI language; API and scheduled runs (None) get zh-CN."""
    import ventapp.tools.network_figures as figures

    drawn: list[str] = []
    real = figures.network_diagram
    monkeypatch.setattr(figures, "network_diagram", lambda *args: drawn.append(args[3]) or real(*args))
    run_language.set_language_resolver(lambda: ui_lang)
    (workspace / "uploads" / "a.csv").write_bytes(
        (DATA_DIR / "A_hongshagang_1" / "topology.csv").read_bytes()
    )
    solve_ventilation_network("/workspace/uploads/a.csv", 151.295)
    assert drawn == [lang]


NO_FAN_NETWORK = "edge_id,from,to,r_N_s2_m8\na,1,2,0.3\nb,2,3,0.3\nc,1,3,0.5\n"


@pytest.mark.parametrize(("lang", "title"), [("zh-CN", "没有风机"), ("en", "no fan in the file")])
def test_the_curves_of_a_network_without_fans_are_titled_for_what_they_show(
    tmp_path: Path, lang: str, title: str
) -> None:
    """Tester: the chart was titled "fan and system" for a network with no fan at all."""
    path = tmp_path / "nofan.csv"
    path.write_text(NO_FAN_NETWORK, encoding="utf-8")
    network = read_topology(path)
    curves = draw_curves(network, solve_network(network, 20.0), lang)
    assert curves is not None
    (ax,) = curves.axes
    assert title in ax.get_title() and "风机与" not in ax.get_title() and "Fan and" not in ax.get_title()
    with_fans = draw_curves(*_solved(tmp_path), lang)
    assert with_fans is not None and title not in with_fans.axes[0].get_title()


def test_node_numbers_sit_beside_their_dots_on_a_halo(tmp_path: Path) -> None:
    """Tester: the node numbers were drawn on the dark dots and could not be read."""
    network, solution = _solved(tmp_path)
    figure = draw_network(network, solution, "en")
    ax = figure.axes[0]
    nodes = {str(node) for node in network.nodes}
    labels = [text for text in ax.texts if text.get_text() in nodes]
    assert sorted(text.get_text() for text in labels) == sorted(nodes)
    dots = ax.collections[0].get_offsets()  # draw_networkx_nodes: the first collection
    for text in labels:
        assert text.get_path_effects(), "a halo keeps the number readable on airways and dots"
        x, y = text.get_position()
        assert min(abs(x - dx) + abs(y - dy) for dx, dy in dots) > 1e-3, "not on top of a dot"


def test_a_fans_curve_figure_shows_that_fan_only(tmp_path: Path) -> None:
    """One curve figure per fan (named after it by the tool): its legend names no other fan."""
    path = tmp_path / "two.csv"
    path.write_text(
        "edge_id,from,to,r_N_s2_m8,is_fan,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6\n"
        "F1,1,2,0.05,1,200,30,-0.8\nF2,1,3,0.05,1,300,10,-0.5\n"
        "a,2,4,0.3,0,,,\nb,3,4,0.2,0,,,\nc,4,5,0.1,0,,,\n",
        encoding="utf-8",
    )
    network = read_topology(path)
    solution = solve_network(network, None)
    both = " ".join(_texts(draw_curves(network, solution, "en")))  # type: ignore[arg-type]
    assert "fan F1" in both and "fan F2" in both
    only = draw_curves(network, solution, "en", edge_id="F2")
    assert only is not None
    words = " ".join(_texts(only))
    assert "fan F2" in words and "F1" not in words
    assert draw_curves(network, solution, "en", edge_id="a") is None, "airway a is no fan"


def test_a_fan_is_labelled_by_its_name_and_the_system_curve_gives_rs_unit(tmp_path: Path) -> None:
    """Tester #12: the curve of airway 1, named 主扇 in the file, read "风机 1"; "p = 0.07582·q²" had no unit."""
    path = tmp_path / "风机网络.csv"
    path.write_text(
        "edge_id,name,from,to,r_N_s2_m8,is_fan,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6\n"
        "1,主扇,1,2,0.05,1,200,30,-0.8\n2,b2,2,3,0.3,0,,,\n3,b3,1,3,0.3,0,,,\n4,b4,3,4,0.3,0,,,\n",
        encoding="utf-8",
    )
    network = read_topology(path)
    solution = solve_network(network, None)
    for lang, unit in (("zh-CN", "N·s²/m⁸"), ("en", "N·s²/m⁸")):
        curves = draw_curves(network, solution, lang, edge_id="1")
        assert curves is not None
        words = " ".join(_texts(curves) + _texts(draw_network(network, solution, lang)))
        assert "主扇" in words and "风机 1" not in words and "fan 1" not in words
        system = [w for w in _texts(curves) if "q²" in w and ("系统" in w or "system" in w)]
        assert system and all(unit in w for w in system), system


def test_the_fan_curve_legend_says_p_and_its_units_as_the_system_curves(tmp_path: Path) -> None:
    """Tester: the fan curve's legend read "200 +30q -0.8q²", no "p =" and no unit."""
    network, solution = _solved(tmp_path)
    for lang, expected in (
        ("zh-CN", "风机特性曲线 p = 200 + 30·q − 0.8·q²，p 单位 Pa，q 单位 m³/s"),
        ("en", "fan curve p = 200 + 30·q − 0.8·q², p in Pa, q in m³/s"),
    ):
        words = _texts(draw_curves(network, solution, lang))  # type: ignore[arg-type]
        assert any(w.endswith(expected) for w in words), words
    from ventapp.tools.network_figures import fan_curve_text

    assert fan_curve_text(0, 0, -1.5) == "−1.5·q²" and fan_curve_text(300, -2, 0) == "300 − 2·q"

"""Figures of a solved network: the network diagram and the fan/system curve (PNG files).

Rendered with matplotlib's Agg backend (no display, no font downloads) through the
object-oriented API (no pyplot global state, safe in worker threads), and networkx for the
layout and drawing. Titles, axes and legends are worded in the run's language from the
message catalogues (``figure.*``); Chinese needs a CJK font on this machine
(:mod:`ventapp.tools.figure_fonts`), without one the figure is drawn in English.
Node and airway ids are drawn as they are, node numbers beside their dots on a white halo.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before anything imports pyplot (networkx's drawing does)

import networkx as nx
import numpy as np
from matplotlib import colormaps, patheffects
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from ventapp.domain.network import Airway, Network, NetworkSolution
from ventapp.i18n import t
from ventapp.tools.figure_fonts import cjk_family, families

_LABEL_LIMIT = 60
_LABEL_OFFSET = 0.012
"""How far a node's number sits from its dot, as a share of the drawing's width and height."""
_DPI = 110


def _layout(graph: nx.DiGraph) -> dict:
    if graph.number_of_nodes() <= 150:
        return nx.kamada_kawai_layout(graph.to_undirected())
    return nx.spring_layout(graph.to_undirected(), seed=7, iterations=60)


def _node_labels(ax: Any, graph: nx.DiGraph, positions: dict) -> None:
    """Node numbers beside their dots (up and to the right), on a white halo, so they read on the
    dark dots and on the coloured airways alike (drawn on the dots they were unreadable)."""
    xs = [x for x, _ in positions.values()] or [0.0]
    ys = [y for _, y in positions.values()] or [0.0]
    dx = (max(xs) - min(xs) or 1.0) * _LABEL_OFFSET
    dy = (max(ys) - min(ys) or 1.0) * _LABEL_OFFSET
    beside = {node: (x + dx, y + dy) for node, (x, y) in positions.items()}
    texts = nx.draw_networkx_labels(
        graph,
        beside,
        ax=ax,
        font_size=7,
        font_color="#111111",
        font_family=families(),
        horizontalalignment="left",
        verticalalignment="bottom",
    )
    for text in texts.values():
        text.set_path_effects([patheffects.withStroke(linewidth=2.5, foreground="white")])


def drawable_lang(lang: str) -> str:
    """``lang`` if this machine can draw it: ``"en"`` for Chinese without a CJK font (never boxes)."""
    return lang if lang == "en" or cjk_family() is not None else "en"


def fan_curve_text(a0: float, a1: float, a2: float) -> str:
    """A fan curve's right-hand side as the legend writes it: ``200 + 30·q − 0.8·q²``.

    Written like the system curve's ``R·q²`` (a middle dot, a true minus sign); terms that are 0 are left
    out (all three 0: ``0``). Coefficients in Pa, Pa·s/m³ and Pa·s²/m⁶ (q in m³/s), shown with ``:g``.
    """
    terms = [(c, suffix) for c, suffix in ((a0, ""), (a1, "·q"), (a2, "·q²")) if c]
    if not terms:
        return "0"
    text = ""
    for index, (coefficient, suffix) in enumerate(terms):
        magnitude = f"{abs(coefficient):g}{suffix}"
        if index == 0:
            text = magnitude if coefficient > 0 else f"−{magnitude}"
        else:
            text += f" {'+' if coefficient > 0 else '−'} {magnitude}"
    return text


def fan_label(airway: Airway, lang: str) -> str:
    """A fan as the figures name it: by the file's ``name`` when it gives one (``主扇（巷道 1）``), else
    by its airway id (``风机 1``)."""
    if airway.name:
        return t("figure.fan_named", lang, name=airway.name, edge_id=airway.edge_id)
    return t("figure.fan", lang, edge_id=airway.edge_id)


def network_diagram(network: Network, solution: NetworkSolution, path: Path, lang: str = "zh-CN") -> Path:
    """Draw the network (:func:`draw_network`) into a PNG at ``path``; returns ``path``."""
    draw_network(network, solution, lang).savefig(path, format="png")
    return path


def draw_network(network: Network, solution: NetworkSolution, lang: str = "zh-CN") -> Figure:
    """The network: airways coloured by |flow|, arrows in the flow direction, fans in red.

    Args:
        network: The solved network.
        solution: Its solution.
        lang: ``"zh-CN"`` or ``"en"``: the language of the title, the colour bar and fan labels
            (see :func:`drawable_lang`).

    Returns:
        The figure (Agg canvas, laid out).
    """
    lang = drawable_lang(lang)
    graph = nx.DiGraph()
    graph.add_nodes_from(network.nodes)
    flows = solution.flows_m3_s
    edges, magnitudes, fans = [], [], []
    for airway in network.airways:
        q = flows[airway.edge_id]
        edge = (airway.from_node, airway.to_node) if q >= 0 else (airway.to_node, airway.from_node)
        graph.add_edge(*edge)
        (fans if airway.fan is not None else edges).append(edge)
        if airway.fan is None:
            magnitudes.append(abs(q))
    positions = _layout(graph)
    figure = Figure(figsize=(9, 7), dpi=_DPI)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    cmap = colormaps["viridis"]
    norm = Normalize(vmin=0.0, vmax=max(magnitudes, default=1.0) or 1.0)
    small = graph.number_of_nodes() > _LABEL_LIMIT
    nx.draw_networkx_nodes(graph, positions, ax=ax, node_size=8 if small else 60, node_color="#555555")
    nx.draw_networkx_edges(
        graph,
        positions,
        ax=ax,
        edgelist=edges,
        edge_color=[cmap(norm(m)) for m in magnitudes],
        width=1.2 if small else 2.0,
        arrows=True,
        arrowsize=6 if small else 12,
    )
    if fans:
        nx.draw_networkx_edges(
            graph, positions, ax=ax, edgelist=fans, edge_color="#d62728", width=3.5, arrowsize=16
        )
        fan_ids = {(a.from_node, a.to_node): a for a in network.airways if a.fan is not None}
        labels = {e: fan_label(fan_ids.get(e) or fan_ids[e[::-1]], lang) for e in fans}
        nx.draw_networkx_edge_labels(
            graph,
            positions,
            ax=ax,
            edge_labels=labels,
            font_color="#d62728",
            font_size=8,
            font_family=families(),  # networkx names its family: pass the CJK fallback along
        )
    if not small:
        _node_labels(ax, graph, positions)
    mappable = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
    figure.colorbar(mappable, ax=ax, label=t("figure.flow_colorbar", lang), shrink=0.8)
    status = t("figure.converged" if solution.converged else "figure.not_converged", lang)
    ax.set_title(
        t(
            "figure.network_title",
            lang,
            airways=len(network.airways),
            reversed=len(solution.reversed_edges),
            status=status,
        )
    )
    ax.set_axis_off()
    figure.tight_layout()
    return figure


def fan_system_curves(
    network: Network,
    solution: NetworkSolution,
    path: Path,
    lang: str = "zh-CN",
    *,
    edge_id: str | None = None,
) -> Path | None:
    """Plot the curves (:func:`draw_curves`) into a PNG at ``path``; ``path``, or None when there are none.

    ``edge_id``: only that fan's curve, system curve and duty point (see :func:`draw_curves`).
    """
    figure = draw_curves(network, solution, lang, edge_id=edge_id)
    if figure is None:
        return None
    figure.savefig(path, format="png")
    return path


def draw_curves(
    network: Network, solution: NetworkSolution, lang: str = "zh-CN", *, edge_id: str | None = None
) -> Figure | None:
    """Each fan's curve with the system curve through its duty point (p = R·q²).

    Without fans, the network's own system curve through the fixed total flow and the
    boundary pressure (what a main fan would have to supply). None when there is neither a
    fan nor a fixed total flow. ``lang``: as :func:`draw_network`. ``edge_id``: only the fan
    in that airway (None when it is no fan of the solution); None: every fan.
    """
    lang = drawable_lang(lang)
    duties: list[tuple[str, float, float, np.ndarray | None]] = []
    airways = {a.edge_id: a for a in network.airways if a.fan is not None}
    curves = {edge: a.fan for edge, a in airways.items()}
    chosen = [fan for fan in solution.fans if edge_id is None or fan.edge_id == edge_id]
    if edge_id is not None and not chosen:
        return None
    for fan in chosen:
        curve = curves[fan.edge_id]
        duties.append(
            (
                fan_label(airways[fan.edge_id], lang),
                fan.flow_m3_s,
                fan.fan_pressure_pa,
                np.array([curve.a0_pa, curve.a1_pa_s_m3, curve.a2_pa_s2_m6]),
            )
        )
    if not duties and solution.total_flow_m3_s and solution.boundary_pressure_pa is not None:
        duties.append(
            (t("figure.network", lang), solution.total_flow_m3_s, solution.boundary_pressure_pa, None)
        )
    if not duties:
        return None
    figure = Figure(figsize=(8, 5.5), dpi=_DPI)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    for label, q_duty, p_duty, coefficients in duties:
        q = np.linspace(0.0, max(abs(q_duty) * 1.6, 1e-6), 200)
        if q_duty:
            ax.plot(
                q,
                p_duty / q_duty**2 * q**2,
                "--",
                label=t("figure.system_curve", lang, label=label, r=f"{p_duty / q_duty**2:.4g}"),
            )
        if coefficients is not None:
            a0, a1, a2 = coefficients
            curve = t("figure.fan_curve_units", lang, label=label, curve=fan_curve_text(a0, a1, a2))
            ax.plot(q, a0 + a1 * q + a2 * q**2, "-", label=curve)
        duty = t("figure.duty", lang, label=label, q=f"{q_duty:.2f}", p=f"{p_duty:.1f}")
        ax.plot([q_duty], [p_duty], "o", markersize=8, label=duty)
    ax.set_xlabel(t("figure.axis_flow", lang))
    ax.set_ylabel(t("figure.axis_pressure", lang))
    # Without a fan the chart shows the network's own curve and the duty a main fan would need.
    ax.set_title(t("figure.curves_title" if solution.fans else "figure.system_title", lang))
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=min(0.0, ax.get_ylim()[0]))
    ax.legend(fontsize=8)
    figure.tight_layout()
    return figure

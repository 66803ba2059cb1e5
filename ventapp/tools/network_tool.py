"""The agent tool that solves an uploaded ventilation network and writes its results and figures."""

from __future__ import annotations

import contextlib
import csv
import itertools
import os
import re
import unicodedata
import uuid
from pathlib import Path, PurePosixPath

from ventapp.domain.demand import check_velocity
from ventapp.domain.network import Network, NetworkError, NetworkSolution, read_topology, solve_network
from ventapp.domain.regulations import VELOCITY_LIMITS
from ventapp.i18n import has_message, t
from ventapp.tools import workspace_files
from ventapp.tools.citations import cite, rule_citation
from ventapp.tools.knowledge import kb_source
from ventapp.tools.refused import refusal_text
from ventapp.tools.registry import register, sourced
from ventapp.tools.run_language import run_language

TOP_FLOWS = 10
LIST_LIMIT = 20
LOW_VELOCITY_DEFAULT = "other_roadway"  # the lowest minimum of the table (0.15 m/s)


STEM_MAX_BYTES = 80
"""Longest result stem in UTF-8 bytes: the figures' names add a fan and a suffix, and a file system
allows 255 bytes."""
CLAIMS_FOLDER = workspace_files.NETWORK_CLAIMS_FOLDER
"""Hidden folder under ``/workspace/results/``: one file per result stem naming the upload it belongs to
(not shown to the agent: ``workspace_files.PRIVATE_FOLDERS``)."""
_UNSAFE = re.compile(r"[^\w.-]+")  # \w is Unicode: 红砂岗 stays, "/", " ", "(", "#", "&", "%" do not


def safe_stem(name: str, default: str = "network") -> str:
    """The part of a result file's name that comes from a name in the input: ``红砂岗一号矿_A_1_v2``.

    Unicode letters and digits, ``_``, ``-`` and ``.`` stay; every run of anything else (path
    separators, control characters, blanks, and what breaks a Markdown image link or a query
    string: ``( ) [ ] # & % + ?``) becomes one ``_``. No leading dot (a hidden file), at most
    ``STEM_MAX_BYTES`` bytes; a name with nothing left is ``default``.

    Args:
        name: The upload's name without its extension (``红砂岗一号矿(A)#1&v2``), or a fan's
            airway id (``主扇``).
        default: What a name with nothing left is called (an upload's results: ``network``).
    """
    stem = _UNSAFE.sub("_", unicodedata.normalize("NFC", name)).strip("._")
    while len(stem.encode("utf-8")) > STEM_MAX_BYTES:
        stem = stem[:-1]
    return stem.rstrip("._") or default


def _claim(claims: Path, name: str, source: str) -> bool:
    """Claim the stem ``name`` for ``source`` (atomically); True when it is free or already ``source``'s."""
    claim = claims / name.casefold()  # case-insensitive file systems would mix Mine and mine
    if not claim.exists():
        draft = claims / f".{uuid.uuid4().hex}"
        draft.write_text(source, encoding="utf-8")
        try:
            os.link(draft, claim)  # fails when another solve claimed it first, even at the same moment
            return True
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: exclusive creation, written at once
            with contextlib.suppress(FileExistsError), claim.open("x", encoding="utf-8") as handle:
                handle.write(source)
                return True
        finally:
            draft.unlink()
    return claim.read_text(encoding="utf-8") == source


def result_stem(folder: Path, upload: str) -> str:
    """The stem of one upload's result files in ``folder``, never one another upload's results use.

    The first upload to be solved under a stem keeps it (``红砂岗``); a different upload whose
    name comes out the same (``红砂岗.xlsx``, ``红砂岗#.csv``) gets ``红砂岗-2``, then ``-3``…
    Solving the same upload again reuses its stem, replacing its own earlier results.

    Args:
        folder: The session's real ``/workspace/results/`` folder.
        upload: The upload's virtual path (``/workspace/uploads/红砂岗.csv``).

    Returns:
        The stem, e.g. ``红砂岗`` or ``红砂岗-2``.
    """
    claims = folder / CLAIMS_FOLDER
    claims.mkdir(exist_ok=True)
    stem = safe_stem(PurePosixPath(upload).stem)
    for number in itertools.count(1):
        name = stem if number == 1 else f"{stem}-{number}"
        if _claim(claims, name, upload):
            return name
    raise AssertionError("unreachable")  # itertools.count never ends


CURVES_SUFFIX = "-fan-curve.png"
"""How every curve figure's name ends (the UI gives such images the curves' alt text)."""


def curve_names(stem: str, fan_edge_ids: list[str]) -> dict[str, str]:
    """The file name of each fan's curve figure: ``<stem>-<fan>-fan-curve.png``, one per fan.

    The fan is its airway's ``edge_id`` made safe for a file name as the upload's name is
    (:func:`safe_stem`: letters of any script, digits, ``_``, ``-``, ``.``; ``主扇`` stays); an id
    with none of those (``（）``) is named by the fan's position (``fan1``). Two fans whose safe
    names meet (``F/1`` and ``F 1``) get ``-2``, ``-3``… in the order of the file, so no figure
    overwrites another.

    Args:
        stem: The network file's safe stem (``mine``).
        fan_edge_ids: The fans' airway ids, in the solution's order.

    Returns:
        edge_id -> file name, e.g. ``{"F/1": "mine-F_1-fan-curve.png"}``.
    """
    names: dict[str, str] = {}
    taken: set[str] = set()
    for position, edge_id in enumerate(fan_edge_ids, 1):
        slug = safe_stem(edge_id, default=f"fan{position}")
        name, suffix = f"{stem}-{slug}{CURVES_SUFFIX}", 1
        while name.lower() in taken:  # case-insensitive file systems too
            suffix += 1
            name = f"{stem}-{slug}-{suffix}{CURVES_SUFFIX}"
        taken.add(name.lower())
        names[edge_id] = name
    return names


AIRWAY_COLUMNS = ("edge_id", "name", "from", "to", "q_m3_s", "h_Pa", "reversed", "is_fan", "velocity_m_s")
"""The airways CSV's columns: the headers are the catalogue's ``solver.csv.<column>`` in the run's language."""
NODE_COLUMNS = ("node_id", "p_Pa")


def _write_csvs(
    network: Network, solution: NetworkSolution, folder: Path, stem: str, lang: str
) -> tuple[Path, Path]:
    """Write ``<stem>-airways.csv`` and ``<stem>-nodes.csv`` (UTF-8 with BOM, so Excel reads the Chinese).

    In a Chinese run the headers are Chinese with units (``风量 (m³/s)``) and yes/no reads 是/否:
    the files are for an engineer's spreadsheet. An English run keeps the machine names
    (``q_m3_s``) and 0/1, for programs; the model gets the numbers in the tool's JSON either way.
    """
    airways_csv, nodes_csv = folder / f"{stem}-airways.csv", folder / f"{stem}-nodes.csv"
    yes, no = t("solver.csv.yes", lang), t("solver.csv.no", lang)
    with airways_csv.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([t(f"solver.csv.{column}", lang) for column in AIRWAY_COLUMNS])
        for a in network.airways:
            q = solution.flows_m3_s[a.edge_id]
            velocity = "" if a.area_m2 is None else f"{abs(q) / a.area_m2:.4f}"
            writer.writerow(
                [
                    a.edge_id,
                    a.name,
                    a.from_node,
                    a.to_node,
                    f"{q:.6f}",
                    f"{solution.pressure_drops_pa[a.edge_id]:.4f}",
                    yes if q < 0 else no,
                    yes if a.fan is not None else no,
                    velocity,
                ]
            )
    with nodes_csv.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([t(f"solver.csv.{column}", lang) for column in NODE_COLUMNS])
        writer.writerows([node, f"{p:.4f}"] for node, p in solution.node_pressures_pa.items())
    return airways_csv, nodes_csv


def _velocity_findings(network: Network, solution: NetworkSolution) -> tuple[list[dict], list[dict]]:
    low, fast = [], []
    for a in network.airways:
        if a.area_m2 is None:
            continue
        kind = a.airway_type if a.airway_type in VELOCITY_LIMITS else LOW_VELOCITY_DEFAULT
        check = check_velocity(solution.flows_m3_s[a.edge_id], a.area_m2, kind)
        entry = {
            "edge_id": a.edge_id,
            "velocity_m_s": round(check.velocity_m_s, 3),
            "airway_type": kind,
            "verdict": check.verdict,
            "rule": rule_citation(check.rule),
        }
        if check.verdict.startswith("too slow"):
            low.append(entry)
        elif check.verdict.startswith("too fast"):
            fast.append(entry)
    return low, fast


def refusal(exc: NetworkError, lang: str) -> str:
    """Why the solver refused, for the person and the model: ``[code] sentence (detail)``.

    The sentence is the catalogue's ``solver.refused.<code>`` (``.<variant>`` when the error names
    one), in the turn's UI language, naming what the error's ``fields`` name (the row, the airway,
    the value, the missing columns, the sheets read) as a list in that language; a ``column`` is
    named as the person's language calls it (``solver.column.<name>``); values stay as the file
    writes them (``E(1)``: the card finds the sentence's end from the detail's parentheses).
    The detail (which row, which airway) is the domain's, in English, as the file has it.
    """
    sep = t("solver.list_sep", lang)
    fields = {
        key: sep.join(_named(key, value, lang) for value in values) for key, values in exc.fields.items()
    }
    key = f"solver.refused.{exc.code}" + (f".{exc.variant}" if exc.variant else "")
    return refusal_text(exc.code, t(key, lang, **fields), exc)


def _named(field: str, value: str, lang: str) -> str:
    # A Chinese header (风阻) was read as its benchmark name (r_N_s2_m8): name both to the person.
    if field == "column" and has_message(f"solver.column.{value}"):
        return t(f"solver.column.{value}", lang)
    return value


@register(
    group="通风网络",
    label="通风网络解算",
    label_en="Ventilation network solver",
    summary="Solve an uploaded mine ventilation network (flows, pressures, fan duty) with figures.",
)
def solve_ventilation_network(path: str, total_flow: float | None = None) -> dict:
    """Solve the steady-state airflow of a mine ventilation network from an uploaded topology file.

    The file (CSV or .xlsx) has one row per airway with the columns edge_id, from, to,
    r_N_s2_m8 and optionally name, adjust_r (regulator), is_fan with a0_Pa, a1_Pa_s_m3,
    a2_Pa_s2_m6 (fan curve), nvp_Pa, fixed_q_m3_s, area_m2 and airway_type (for velocity
    checks); Chinese headers (编号, 起点, 终点, 风阻 …) and GBK CSVs are read as well. Intakes (nodes without incoming airways) are at atmospheric pressure; exits are
    joined; total_flow fixes the flow through the network (a main fan not drawn in the file).
    Never compute airflows yourself: report this tool's numbers, say whether it converged, and
    show the figures it lists.

    Args:
        path: The uploaded file, e.g. "/workspace/uploads/network.csv".
        total_flow: Fixed total airflow through the network in m³/s, or null when fans in the
            file drive the flow.

    Returns:
        JSON {"data": {converged, iterations, max_residual_pa, message, fans (duty q, p,
        unstable), largest_flows, reversed, low_velocity, high_velocity, boundary_pressure_pa,
        files: {airways_csv, nodes_csv}, figures: [the network diagram, then one curve figure per
        fan, named after its airway (<name>-<fan>-fan-curve.png), or the network's system curve
        when the file has no fan]}, "sources": [...]}; every path is under /workspace/results/.
    """
    try:
        real = workspace_files.resolve(path)
    except (
        ValueError
    ) as exc:  # no such upload, or a path out of /workspace/: the model's detail, our sentence
        raise ValueError(refusal(NetworkError("not_found", str(exc)), run_language())) from None
    try:
        network = read_topology(real)
        solution = solve_network(network, total_flow)
    except NetworkError as exc:
        raise ValueError(refusal(exc, run_language())) from None
    folder = workspace_files.results_dir()
    stem = result_stem(folder, workspace_files.to_virtual(real))
    lang = run_language()  # the files' words: the person's UI language (zh-CN by default)
    airways_csv, nodes_csv = _write_csvs(network, solution, folder, stem, lang)
    # matplotlib and networkx load with the first figure, not with the app: ~0.6 s of CPU that
    # every start-up paid before its first request (issue 18).
    from ventapp.tools import network_figures

    figures = [network_figures.network_diagram(network, solution, folder / f"{stem}-network.png", lang)]
    if solution.fans:  # one figure per fan, named after it: two fans' curves never share a file
        names = curve_names(stem, [fan.edge_id for fan in solution.fans])
        for edge_id, name in names.items():
            curve = network_figures.fan_system_curves(network, solution, folder / name, lang, edge_id=edge_id)
            if curve is not None:
                figures.append(curve)
    else:  # the network's own system curve: what a main fan would have to supply
        curves = network_figures.fan_system_curves(network, solution, folder / f"{stem}{CURVES_SUFFIX}", lang)
        if curves is not None:
            figures.append(curves)
    largest = sorted(solution.flows_m3_s.items(), key=lambda kv: -abs(kv[1]))[:TOP_FLOWS]
    low, fast = _velocity_findings(network, solution)
    root = workspace_files.workspace_root()
    data = {
        "converged": solution.converged,
        "iterations": solution.iterations,
        "max_residual_pa": solution.max_residual_pa,
        "message": solution.message,
        "airways": len(network.airways),
        "total_flow_m3_s": solution.total_flow_m3_s,
        "boundary_pressure_pa": solution.boundary_pressure_pa,
        "fans": [
            {
                "edge_id": f.edge_id,
                "q_m3_s": round(f.flow_m3_s, 4),
                "p_pa": round(f.fan_pressure_pa, 2),
                "unstable": f.unstable,
            }
            for f in solution.fans
        ],
        "largest_flows": [{"edge_id": e, "q_m3_s": round(q, 4)} for e, q in largest],
        "reversed": {
            "count": len(solution.reversed_edges),
            "edge_ids": list(solution.reversed_edges[:LIST_LIMIT]),
        },
        "low_velocity": low[:LIST_LIMIT],
        "high_velocity": fast[:LIST_LIMIT],
        "files": {
            "airways_csv": workspace_files.to_virtual(airways_csv, root),
            "nodes_csv": workspace_files.to_virtual(nodes_csv, root),
        },
        "figures": [workspace_files.to_virtual(f, root) for f in figures],
    }
    sources = [kb_source("network-analysis", cite("network", lang))]
    if low or fast:
        sources.append(kb_source("air-velocity-limits", cite("network_velocity", lang)))
    note = None
    if not solution.converged:
        note = "The solve did NOT converge: the numbers are not a steady state; say so and do not present them as results."
    elif not any(a.area_m2 for a in network.airways):
        note = "No area_m2 column: velocities were not checked."
    return sourced(data, sources, note=note)

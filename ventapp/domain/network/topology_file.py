"""Read a network from a topology file (CSV or Excel) with the benchmark's columns.

Columns (header names exactly as in the benchmark's ``topology.csv``; order free):

====================  ========  ==========================================================
column                required  meaning
====================  ========  ==========================================================
``edge_id``           yes       unique airway id
``from``, ``to``      yes       node ids (the orientation of flow and fan pressure)
``r_N_s2_m8``         yes       Atkinson resistance, N·s²/m⁸
``name``              no        airway name
``adjust_r``          no        regulator resistance added to ``r``, N·s²/m⁸ (default 0)
``is_fan``            no        1 for a fan airway (default 0)
``a0_Pa`` …           no        fan curve ``a0 + a1·q + a2·q²``: ``a0_Pa``, ``a1_Pa_s_m3``, ``a2_Pa_s2_m6``
``nvp_Pa``            no        natural ventilation pressure acting from→to, Pa (default 0)
``fixed_q_m3_s``      no        fixed airflow of a fixed-quantity airway, m³/s (blank = free)
``area_m2``           no        cross-section, m² (for velocity checks)
``airway_type``       no        velocity-table key, e.g. ``coal_face`` (for velocity checks)
====================  ========  ==========================================================

CSV files are read as UTF-8 with or without a byte-order mark, else as GB18030 (GBK: what Excel's
plain "CSV" is on Chinese Windows), see :data:`CSV_ENCODINGS`; ``.xlsx`` files through openpyxl
(the first worksheet with the required columns in one of its first :data:`HEADER_SEARCH_ROWS` rows;
the first such row is the header, so a title such as "红沙岗矿通风网络" may stand above it).
Headers may be Chinese (``编号, 起点, 终点, 风阻`` …, :data:`HEADER_ALIASES`).
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ventapp.domain.network.model import Airway, FanCurve, Network, NetworkError

REQUIRED_COLUMNS = ("edge_id", "from", "to", "r_N_s2_m8")
OPTIONAL_COLUMNS = (
    "name",
    "adjust_r",
    "is_fan",
    "a0_Pa",
    "a1_Pa_s_m3",
    "a2_Pa_s2_m6",
    "nvp_Pa",
    "fixed_q_m3_s",
    "area_m2",
    "airway_type",
)
MAX_ROWS = 100_000
HEADER_SEARCH_ROWS = 10
"""How many rows at the top of a worksheet are looked at for the header: engineers put a title, a
date or a note above the table; a table's header further down is not guessed at."""
HEADER_ALIASES: dict[str, tuple[str, ...]] = {
    "edge_id": ("巷道编号", "分支编号", "编号", "巷道号", "分支号"),
    "from": ("始节点", "起点", "起始节点", "始点"),
    "to": ("末节点", "终点", "终止节点", "末点"),
    "r_N_s2_m8": ("风阻", "巷道风阻"),
    "name": ("名称", "巷道名称", "分支名称"),
    "adjust_r": ("调节风阻",),
    "is_fan": ("是否风机",),
    "a0_Pa": ("a0",),
    "a1_Pa_s_m3": ("a1",),
    "a2_Pa_s2_m6": ("a2",),
    "nvp_Pa": ("自然风压",),
    "fixed_q_m3_s": ("固定风量",),
    "area_m2": ("断面", "断面积", "断面面积"),
    "airway_type": ("巷道类型",),
}
"""Other headers a column may have (Chinese ones first): a header is compared after NFKC (full-width
brackets become ASCII) and without a trailing unit in brackets, so ``风阻（N·s²/m⁸）`` is ``风阻``.
The benchmark's own names always win; a second column for the same name is ignored."""
_ALIAS = {alias: column for column, aliases in HEADER_ALIASES.items() for alias in aliases}
_UNIT = re.compile(r"\s*[(\[][^()\[\]]*[)\]]$")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # Excel stores node 12 as 12.0
    return str(value).strip()


def _number(row: dict[str, Any], column: str, line: int, default: float | None = 0.0) -> float | None:
    raw = row.get(column)
    text = _text(raw)
    cell = {"row": (str(line),), "column": (column,)}  # what a refusal names
    if text == "":
        if default is None and column in REQUIRED_COLUMNS:
            raise NetworkError(
                "bad_value",
                f"Row {line}: the column '{column}' is empty; it needs a number.",
                variant="empty_cell",
                **cell,
            )
        return default
    try:
        value = float(raw) if isinstance(raw, int | float) else float(text)
    except ValueError:
        raise NetworkError(
            "bad_value",
            f"Row {line}: '{column}' is {text!r}, which is not a number.",
            variant="not_number",
            value=(text,),
            **cell,
        ) from None
    if not math.isfinite(value):
        raise NetworkError(
            "bad_value",
            f"Row {line}: '{column}' is {text!r}; it must be a finite number.",
            variant="not_finite",
            value=(text,),
            **cell,
        )
    return value


def _airway(row: dict[str, Any], line: int) -> Airway:
    edge_id, tail, head = _text(row.get("edge_id")), _text(row.get("from")), _text(row.get("to"))
    if not edge_id:
        raise NetworkError(
            "bad_value", f"Row {line}: the airway has no 'edge_id'.", variant="no_edge_id", row=(str(line),)
        )
    for column, node in (("from", tail), ("to", head)):
        if not node:
            raise NetworkError(
                "unknown_node",
                f"Row {line} (airway {edge_id!r}): the '{column}' node is empty.",
                variant="blank_in_row",
                row=(str(line),),
                airway=(edge_id,),
                column=(column,),
            )
    resistance = _number(row, "r_N_s2_m8", line, default=None)
    regulator = _number(row, "adjust_r", line)
    is_fan = _number(row, "is_fan", line)
    fan = None
    if is_fan:
        fan = FanCurve(
            a0_pa=_number(row, "a0_Pa", line) or 0.0,
            a1_pa_s_m3=_number(row, "a1_Pa_s_m3", line) or 0.0,
            a2_pa_s2_m6=_number(row, "a2_Pa_s2_m6", line) or 0.0,
        )
    return Airway(
        edge_id=edge_id,
        from_node=tail,
        to_node=head,
        resistance_ns2_m8=resistance or 0.0,
        regulator_ns2_m8=regulator or 0.0,
        fan=fan,
        nvp_pa=_number(row, "nvp_Pa", line) or 0.0,
        fixed_flow_m3_s=_number(row, "fixed_q_m3_s", line, default=None),
        name=_text(row.get("name")),
        area_m2=_number(row, "area_m2", line, default=None),
        airway_type=_text(row.get("airway_type")),
    )


def _canonical(header: Any) -> str:
    text = _text(header).lstrip("\ufeff")
    if text in REQUIRED_COLUMNS or text in OPTIONAL_COLUMNS:
        return text
    plain = _UNIT.sub("", unicodedata.normalize("NFKC", text)).strip()
    return _ALIAS.get(plain, text)


def column_names(header: Iterable[Any]) -> list[str]:
    """The benchmark's column names of a header row, Chinese headers (:data:`HEADER_ALIASES`) mapped.

    A column whose name is taken already (``编号`` beside ``edge_id``) keeps its own header, so it is
    ignored rather than overwriting the first.
    """
    names: list[str] = []
    for header_cell in header:
        name = _canonical(header_cell)
        names.append(name if name not in names else _text(header_cell))
    return names


def _aliases_text() -> str:
    return "; ".join(f"{column} = {'/'.join(aliases)}" for column, aliases in HEADER_ALIASES.items())


def network_from_rows(
    header: Iterable[Any], rows: Iterable[Iterable[Any]], *, source: str = "the file", first_line: int = 2
) -> Network:
    """Build a :class:`Network` from a header and data rows (the file readers' common part).

    Parameters
    ----------
    header : iterable
        Column names (the benchmark's or a Chinese alias, :data:`HEADER_ALIASES`); surrounding
        blanks and a byte-order mark are ignored.
    rows : iterable of iterable
        One row per airway; fully blank rows are skipped.
    source : str
        File name for messages.
    first_line : int
        The file's row number of the first data row (2: the header is row 1), for messages.

    Raises
    ------
    NetworkError
        ``missing_column``, ``bad_value``, ``unknown_node``, ``empty`` and the checks of
        :class:`Network`; messages name the row as the file numbers it.
    """
    names = column_names(header)
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise NetworkError(
            "missing_column",
            f"{source} lacks the column(s) {', '.join(repr(c) for c in missing)}; "
            f"required: {', '.join(REQUIRED_COLUMNS)} (optional: {', '.join(OPTIONAL_COLUMNS)}; "
            f"Chinese headers: {_aliases_text()}).",
            columns=tuple(missing),
        )
    airways: list[Airway] = []
    for line, values in enumerate(rows, start=first_line):
        cells = list(values)
        if all(_text(c) == "" for c in cells):
            continue
        if len(airways) >= MAX_ROWS:
            raise NetworkError(
                "bad_value",
                f"{source} has more than {MAX_ROWS} airways.",
                variant="too_many_rows",
                limit=(str(MAX_ROWS),),
            )
        airways.append(_airway(dict(zip(names, cells, strict=False)), line))
    if not airways:
        raise NetworkError("empty", f"{source} has a header but no airways.")
    return Network(tuple(airways))


def read_topology(path: str | Path) -> Network:
    """Read a network from a ``.csv`` (UTF-8, BOM allowed, or GB18030/GBK) or ``.xlsx`` topology file.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    Network

    Raises
    ------
    NetworkError
        ``not_found`` (no such file), ``unreadable`` (a folder, wrong format or encoding), or any error of
        :func:`network_from_rows`.
    """
    file = Path(path)
    label = file.name
    try:
        if file.suffix.lower() == ".xlsx":
            return _read_xlsx(file, label)
        if file.suffix.lower() not in (".csv", ".txt"):
            raise NetworkError("unreadable", f"{label}: only .csv and .xlsx topology files are supported.")
        reader = csv.reader(io.StringIO(_decode(file.read_bytes(), label), newline=""))
        header = next(reader, None)
        if header is None:
            raise NetworkError("empty", f"{label} is empty.")
        return network_from_rows(header, reader, source=label)
    except FileNotFoundError:
        raise NetworkError("not_found", f"{label} does not exist.") from None
    except IsADirectoryError:
        raise NetworkError("unreadable", f"{label} is a folder, not a topology file.") from None
    except csv.Error as exc:
        raise NetworkError("unreadable", f"{label} is not a valid CSV file ({exc}).") from None


CSV_ENCODINGS = ("utf-8-sig", "gb18030")
"""Encodings a CSV is tried in, in order: UTF-8 (with or without a byte-order mark: Excel's "CSV UTF-8"),
then GB18030, the superset of GBK that Excel's plain "CSV" writes on Chinese Windows. UTF-8 first:
text that decodes as UTF-8 is almost never GBK, while much UTF-8 would also decode as GB18030."""


def _decode(data: bytes, label: str) -> str:
    for encoding in CSV_ENCODINGS:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise NetworkError(
        "unreadable",
        f"{label} is neither UTF-8 nor GB18030 (GBK) text; save it from Excel as CSV UTF-8 or as .xlsx.",
    )


def _read_xlsx(file: Path, label: str) -> Network:
    from openpyxl import load_workbook  # only needed for Excel files
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        workbook = load_workbook(file, read_only=True, data_only=True)
    except (InvalidFileException, OSError, KeyError, ValueError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise NetworkError("unreadable", f"{label} is not a readable .xlsx workbook.") from None
    try:
        sheets = workbook.worksheets
        for sheet in sheets:  # the first sheet with the required columns in a header row near its top
            rows = sheet.iter_rows(values_only=True)
            for number, header in enumerate(itertools.islice(rows, HEADER_SEARCH_ROWS), start=1):
                if set(REQUIRED_COLUMNS) <= set(column_names(header)):
                    return network_from_rows(
                        header, rows, source=f"{label}, sheet {sheet.title!r}", first_line=number + 1
                    )
        if len(sheets) == 1:  # one sheet: its own missing columns (or its emptiness) say it all
            rows = sheets[0].iter_rows(values_only=True)
            header = next(rows, None)
            if header is None:
                raise NetworkError("empty", f"{label} has an empty first worksheet.")
            return network_from_rows(header, rows, source=label)
        titles = [sheet.title for sheet in sheets]
        raise NetworkError(
            "no_network_sheet",
            f"no worksheet of {label} ({', '.join(repr(t) for t in titles)}) has the columns "
            f"{', '.join(REQUIRED_COLUMNS)} in one of its first {HEADER_SEARCH_ROWS} rows; put the network on one sheet with these headers.",
            sheets=tuple(titles),
            columns=REQUIRED_COLUMNS,
        )
    finally:
        workbook.close()

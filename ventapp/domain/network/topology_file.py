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
(first worksheet, header in the first row).
"""

from __future__ import annotations

import csv
import io
import math
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


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # Excel stores node 12 as 12.0
    return str(value).strip()


def _number(row: dict[str, Any], column: str, line: int, default: float | None = 0.0) -> float | None:
    raw = row.get(column)
    text = _text(raw)
    if text == "":
        if default is None and column in REQUIRED_COLUMNS:
            raise NetworkError("bad_value", f"Row {line}: the column '{column}' is empty; it needs a number.")
        return default
    try:
        value = float(raw) if isinstance(raw, int | float) else float(text)
    except ValueError:
        raise NetworkError(
            "bad_value", f"Row {line}: '{column}' is {text!r}, which is not a number."
        ) from None
    if not math.isfinite(value):
        raise NetworkError("bad_value", f"Row {line}: '{column}' is {text!r}; it must be a finite number.")
    return value


def _airway(row: dict[str, Any], line: int) -> Airway:
    edge_id, tail, head = _text(row.get("edge_id")), _text(row.get("from")), _text(row.get("to"))
    if not edge_id:
        raise NetworkError("bad_value", f"Row {line}: the airway has no 'edge_id'.")
    for column, node in (("from", tail), ("to", head)):
        if not node:
            raise NetworkError(
                "unknown_node", f"Row {line} (airway {edge_id!r}): the '{column}' node is empty."
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


def network_from_rows(
    header: Iterable[Any], rows: Iterable[Iterable[Any]], *, source: str = "the file"
) -> Network:
    """Build a :class:`Network` from a header and data rows (the file readers' common part).

    Parameters
    ----------
    header : iterable
        Column names; surrounding blanks and a byte-order mark are ignored.
    rows : iterable of iterable
        One row per airway; fully blank rows are skipped.
    source : str
        File name for messages.

    Raises
    ------
    NetworkError
        ``missing_column``, ``bad_value``, ``unknown_node``, ``empty`` and the checks of
        :class:`Network`; messages name the row (header = row 1).
    """
    names = [_text(h).lstrip("\ufeff") for h in header]
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise NetworkError(
            "missing_column",
            f"{source} lacks the column(s) {', '.join(repr(c) for c in missing)}; "
            f"required: {', '.join(REQUIRED_COLUMNS)} (optional: {', '.join(OPTIONAL_COLUMNS)}).",
        )
    airways: list[Airway] = []
    for line, values in enumerate(rows, start=2):
        cells = list(values)
        if all(_text(c) == "" for c in cells):
            continue
        if len(airways) >= MAX_ROWS:
            raise NetworkError("bad_value", f"{source} has more than {MAX_ROWS} airways.")
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
        rows = workbook.worksheets[0].iter_rows(values_only=True)
        header = next(rows, None)
        if header is None:
            raise NetworkError("empty", f"{label} has an empty first worksheet.")
        return network_from_rows(header, rows, source=label)
    finally:
        workbook.close()

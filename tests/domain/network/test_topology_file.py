"""The topology reader: encodings Excel writes, Chinese headers, the sheet that holds the network.

The networks are the published benchmark's (tests/data/ventilation-networks, CC BY 4.0); a file
re-saved in another encoding or with Chinese headers must read as the same network.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import Workbook

from tests.domain.network.benchmark_data import DATA_DIR
from ventapp.domain.network import NetworkError, read_topology

TOPOLOGY_A = DATA_DIR / "A_hongshagang_1" / "topology.csv"


def test_a_gbk_csv_as_excel_on_chinese_windows_saves_it_reads_as_the_utf8_one(tmp_path: Path) -> None:
    """Tester #2: 网络_gbk.csv was refused as "[unreadable] … 请上传 .csv 或 .xlsx 文件" although it is a .csv."""
    text = TOPOLOGY_A.read_text(encoding="utf-8-sig")
    gbk = tmp_path / "网络_gbk.csv"
    gbk.write_bytes(text.encode("gbk"))
    expected = read_topology(TOPOLOGY_A)
    network = read_topology(gbk)
    assert network == expected
    assert any(a.name == "副立井" for a in network.airways)


def test_a_file_neither_utf8_nor_gb18030_names_both_and_the_way_out(tmp_path: Path) -> None:
    bad = tmp_path / "net.csv"
    bad.write_bytes(b"edge_id,from,to,r_N_s2_m8\n1,1,2,0.1\x81\n")
    with pytest.raises(NetworkError) as info:
        read_topology(bad)
    assert info.value.code == "unreadable"
    assert "UTF-8" in str(info.value) and "GB18030" in str(info.value) and "CSV UTF-8" in str(info.value)


def _chinese(tmp_path: Path, header: str) -> Path:
    rows = TOPOLOGY_A.read_text(encoding="utf-8-sig").splitlines()[1:]
    path = tmp_path / "网络_中文表头.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "header",
    [
        # Tester #8's file: the short headers an engineer types.
        "编号,名称,起点,终点,风阻,调节风阻,是否风机,a0,a1,a2",
        "巷道编号,巷道名称,始节点,末节点,风阻（N·s²/m⁸）,调节风阻,是否风机,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6",
        "分支编号,名称,起点,终点,风阻(N·s²/m⁸),adjust_r,is_fan,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6",
    ],
)
def test_chinese_headers_read_as_the_benchmarks_columns(tmp_path: Path, header: str) -> None:
    assert read_topology(_chinese(tmp_path, header)) == read_topology(TOPOLOGY_A)


def test_a_missing_column_is_named_alone(tmp_path: Path) -> None:
    """Tester #8: a file missing only r_N_s2_m8 was told it lacks "edge_id、from、to、r_N_s2_m8"."""
    path = _chinese(tmp_path, "edge_id,name,from,to,r,adjust_r,is_fan,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6")
    with pytest.raises(NetworkError) as info:
        read_topology(path)
    assert info.value.code == "missing_column"
    assert info.value.fields == {"columns": ("r_N_s2_m8",)}


def _workbook(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    book = Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


def _rows() -> list[list[object]]:
    lines = TOPOLOGY_A.read_text(encoding="utf-8-sig").splitlines()
    return [line.split(",") for line in lines[:1]] + [
        [float(c) if c.replace(".", "", 1).isdigit() else c for c in line.split(",")] for line in lines[1:]
    ]


def test_an_xlsx_whose_first_sheet_is_a_note_reads_the_sheet_with_the_network(tmp_path: Path) -> None:
    """Tester #8: 网络_两页.xlsx (说明 first, then the network) was refused for missing columns."""
    path = _workbook(tmp_path / "网络_两页.xlsx", {"说明": [["本文件为红砂岗矿通风网络"]], "网络": _rows()})
    assert read_topology(path) == read_topology(TOPOLOGY_A)


def test_an_xlsx_without_a_network_sheet_names_the_sheets_it_read(tmp_path: Path) -> None:
    path = _workbook(tmp_path / "net.xlsx", {"说明": [["说明"]], "数据": [["edge_id", "from", "to"]]})
    with pytest.raises(NetworkError) as info:
        read_topology(path)
    assert info.value.code == "no_network_sheet"
    assert info.value.fields == {
        "sheets": ("说明", "数据"),
        "columns": ("edge_id", "from", "to", "r_N_s2_m8"),
    }
    assert "'说明'" in str(info.value) and "'数据'" in str(info.value)


def test_an_xlsx_with_a_title_row_above_its_header_reads_the_header_below(tmp_path: Path) -> None:
    """An engineer's workbook: "红沙岗矿通风网络" in A1, the (Chinese) header in row 2, was not read."""
    rows = _rows()
    header = [
        "编号" if c == "edge_id" else "起点" if c == "from" else "终点" if c == "to" else c for c in rows[0]
    ]
    header = ["风阻（N·s²/m⁸）" if c == "r_N_s2_m8" else c for c in header]
    titled = [["红沙岗矿通风网络"], header, *rows[1:]]
    path = _workbook(tmp_path / "红沙岗.xlsx", {"网络": titled})
    assert read_topology(path) == read_topology(TOPOLOGY_A)
    # Two title rows and a blank one: still within the rows looked at; a bad value names its sheet row.
    titled = [["红沙岗矿通风网络"], ["2026 年 12 月"], [], rows[0], ["E1", "", "1", "2", "x"]]
    with pytest.raises(NetworkError) as info:
        read_topology(_workbook(tmp_path / "bad.xlsx", {"网络": titled}))
    assert info.value.code == "bad_value" and "Row 5" in str(info.value), str(info.value)


def test_a_header_too_far_down_is_not_searched_for(tmp_path: Path) -> None:
    from ventapp.domain.network.topology_file import HEADER_SEARCH_ROWS

    rows = [[f"说明 {i}"] for i in range(HEADER_SEARCH_ROWS)] + _rows()
    with pytest.raises(NetworkError) as info:
        read_topology(_workbook(tmp_path / "far.xlsx", {"网络": rows}))
    assert info.value.code == "missing_column"

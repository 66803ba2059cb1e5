"""The topology reader: encodings Excel writes, Chinese headers, the sheet that holds the network.

The networks are the published benchmark's (tests/data/ventilation-networks, CC BY 4.0); a file
re-saved in another encoding or with Chinese headers must read as the same network.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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

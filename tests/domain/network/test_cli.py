"""The command line ``python -m ventapp.domain.network solve`` and the topology reader's errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import Workbook

from tests.domain.network.benchmark_data import DATA_DIR, published
from ventapp.domain.network import NetworkError, read_topology
from ventapp.domain.network.__main__ import EXIT_BAD_INPUT, EXIT_CONVERGED, EXIT_NOT_CONVERGED, main

TOPOLOGY_A = DATA_DIR / "A_hongshagang_1" / "topology.csv"
HEADER = "edge_id,name,from,to,r_N_s2_m8,adjust_r,is_fan,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6"


def _write(tmp_path: Path, text: str, name: str = "net.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_cli_json_has_the_contract_keys_and_published_flows(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["solve", str(TOPOLOGY_A), "--total-flow", "151.295"])
    out = json.loads(capsys.readouterr().out)

    assert code == EXIT_CONVERGED
    assert {
        "converged",
        "iterations",
        "max_residual_pa",
        "flows",
        "pressure_drops",
        "node_pressures",
        "fans",
    } <= set(out)
    assert out["converged"] is True and out["iterations"] > 0
    for edge_id, q in published("A_hongshagang_1", "solutions.csv", "edge_id", "q_m3_s").items():
        assert out["flows"][edge_id] == pytest.approx(q, abs=1e-4)


def test_cli_table_lists_every_airway(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["solve", str(TOPOLOGY_A), "--total-flow", "151.295", "--format", "table"])
    out = capsys.readouterr().out

    assert code == EXIT_CONVERGED
    assert out.startswith("converged: ")
    assert "副立井" in out and "107.6044" in out  # airway 1's name and its published flow


def test_cli_exit_2_when_not_converged(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["solve", str(TOPOLOGY_A), "--total-flow", "151.295", "--max-iter", "1"])

    assert code == EXIT_NOT_CONVERGED
    assert json.loads(capsys.readouterr().out)["converged"] is False


def test_cli_runs_as_a_module_with_its_exit_code(tmp_path: Path) -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "ventapp.domain.network", "solve", str(TOPOLOGY_A), "--total-flow", "151.295"],
        capture_output=True,
        text=True,
        check=False,
    )
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "ventapp.domain.network",
            "solve",
            str(_write(tmp_path, "edge_id,from\n1,2\n")),
        ],
        capture_output=True,
        text=True,
        check=False,
    )

    assert ok.returncode == 0 and json.loads(ok.stdout)["converged"] is True
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("error [missing_column]: net.csv lacks the column(s) 'to', 'r_N_s2_m8'")
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("text", "code", "words"),
    [
        ("edge_id,from,r_N_s2_m8\n1,1,0.1\n", "missing_column", "'to'"),
        (f"{HEADER}\n1,a,1,,0.1,0,0,0,0,0\n", "unknown_node", "'to' node is empty"),
        (f"{HEADER}\n1,a,1,2,-0.1,0,0,0,0,0\n", "negative_resistance", "negative resistance"),
        (f"{HEADER}\n1,a,1,2,abc,0,0,0,0,0\n", "bad_value", "'abc'"),
        (
            f"{HEADER}\n1,a,1,2,0.1,0,0,0,0,0\n2,b,3,4,0.1,0,0,0,0,0\n3,c,4,3,0.1,0,0,0,0,0\n",
            "disconnected",
            "'3'",
        ),
        (f"{HEADER}\n1,a,1,2,0.1,0,0,0,0,0\n2,b,2,1,0.1,0,0,0,0,0\n", "no_path", "no intake"),
        (f"{HEADER}\n", "empty", "no airways"),
    ],
)
def test_bad_file_gives_exit_1_and_a_readable_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, code: str, words: str
) -> None:
    status = main(["solve", str(_write(tmp_path, text)), "--total-flow", "10"])
    err = capsys.readouterr().err

    assert status == EXIT_BAD_INPUT
    assert err.startswith(f"error [{code}]: ")
    assert words in err
    assert "Traceback" not in err and "Error(" not in err


def test_missing_and_unsupported_files_are_unreadable(tmp_path: Path) -> None:
    for path, code in (
        (tmp_path / "absent.csv", "not_found"),
        (_write(tmp_path, "x", "net.json"), "unreadable"),
    ):
        with pytest.raises(NetworkError) as info:
            read_topology(path)
        assert info.value.code == code
    latin = tmp_path / "latin.csv"
    latin.write_bytes("edge_id,from,to,r_N_s2_m8,name\n1,1,2,0.1,é\n".encode("latin-1"))
    with pytest.raises(NetworkError, match="neither UTF-8 nor GB18030"):
        read_topology(latin)


def test_xlsx_with_the_same_headers_solves_like_the_csv(tmp_path: Path) -> None:
    workbook = Workbook()
    sheet = workbook.active
    csv_network = read_topology(TOPOLOGY_A)
    sheet.append(["edge_id", "name", "from", "to", "r_N_s2_m8", "adjust_r", "is_fan"])
    for a in csv_network.airways:
        # Excel users type node numbers as numbers: 3 must still be node "3", not "3.0".
        sheet.append(
            [
                int(a.edge_id),
                a.name,
                int(a.from_node),
                int(a.to_node),
                a.resistance_ns2_m8,
                a.regulator_ns2_m8,
                0,
            ]
        )
    path = tmp_path / "net.xlsx"
    workbook.save(path)

    assert read_topology(path) == csv_network


def test_optional_columns_fixed_flow_and_nvp_are_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "edge_id,from,to,r_N_s2_m8,fixed_q_m3_s,nvp_Pa\n1,1,2,0.1,,25\n2,2,3,0.2,4.5,\n",
    )
    a, b = read_topology(path).airways

    assert a.fixed_flow_m3_s is None and a.nvp_pa == 25.0
    assert b.fixed_flow_m3_s == 4.5 and b.nvp_pa == 0.0

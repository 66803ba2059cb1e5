"""Readers for the published benchmark under ``tests/data/ventilation-networks`` (tests and bench/).

Source: Jia et al., mine-ventilation-network-benchmark,
https://github.com/changtian0509/mine-ventilation-network-benchmark (CC BY 4.0, see its LICENSE);
the files are copied unchanged (UTF-8 with a byte-order mark).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from ventapp.domain.network import Airway, FanCurve, Network

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "ventilation-networks"

ENGINEERING = {
    "A_hongshagang_1": 151.295,
    "B_hongshagang_difficult": 154.09,
}
"""Folder -> total flow Q (m³/s) of the benchmark README's table."""

FAN_FAMILY_TOTAL_FLOW_M3_S = 12.0
_FAN_FAMILY_EDGES = ((1, 1, 2), (2, 2, 3), (3, 1, 3), (4, 3, 4), (5, 4, 5), (6, 5, 6), (7, 3, 5))


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def published(folder: str, filename: str, key: str, value: str, method: str = "dcp") -> dict[str, float]:
    """``{key: value}`` of one solver's rows in ``folder/filename`` (e.g. solutions.csv)."""
    return {
        row[key]: float(row[value]) for row in _rows(DATA_DIR / folder / filename) if row["method"] == method
    }


@dataclass(frozen=True)
class FanInstance:
    """One of the 64 (a2, r) instances with the published dcp flows."""

    instance_id: str
    a2_pa_s2_m6: float
    r_ns2_m8: float
    dcp_flows_m3_s: dict[str, float]

    def network(self) -> Network:
        """The instance per the benchmark README: edge 1 the fan (R 0.05, a0 200, a1 30), others r."""
        return Network(
            tuple(
                Airway(
                    edge_id=str(e),
                    from_node=str(u),
                    to_node=str(v),
                    resistance_ns2_m8=0.05 if e == 1 else self.r_ns2_m8,
                    fan=FanCurve(200.0, 30.0, self.a2_pa_s2_m6) if e == 1 else None,
                )
                for e, u, v in _FAN_FAMILY_EDGES
            )
        )


def fan_family() -> list[FanInstance]:
    """The 64 instances of ``fan_family_64`` in file order."""
    flows: dict[str, dict[str, float]] = {}
    for row in _rows(DATA_DIR / "fan_family_64" / "edges.csv"):
        if row["method"] == "dcp":
            flows.setdefault(row["instance_id"], {})[row["edge_id"]] = float(row["q_m3_s"])
    return [
        FanInstance(
            row["instance_id"], float(row["a2_Pa_s2_m6"]), float(row["r_N_s2_m8"]), flows[row["instance_id"]]
        )
        for row in _rows(DATA_DIR / "fan_family_64" / "instances.csv")
    ]


def fan_family_published_convergence() -> dict[str, int]:
    """Instances each published method converged on (loop 30, node 44, dcp 64 per the README)."""
    counts: dict[str, int] = {}
    for row in _rows(DATA_DIR / "fan_family_64" / "summary.csv"):
        counts[row["method"]] = counts.get(row["method"], 0) + int(row["converged"])
    return counts

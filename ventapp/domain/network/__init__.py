"""Steady-state airflow network solving (see :mod:`ventapp.domain.network.solver`).

Command line: ``python -m ventapp.domain.network solve TOPOLOGY.csv --total-flow Q``.
"""

from ventapp.domain.network.model import Airway, ErrorCode, FanCurve, Network, NetworkError
from ventapp.domain.network.solver import FanDuty, NetworkSolution, solve_network
from ventapp.domain.network.topology_file import network_from_rows, read_topology

__all__ = [
    "Airway",
    "ErrorCode",
    "FanCurve",
    "FanDuty",
    "Network",
    "NetworkError",
    "NetworkSolution",
    "network_from_rows",
    "read_topology",
    "solve_network",
]

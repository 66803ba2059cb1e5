"""Command line of the network solver (the same code the agent's tool calls).

Usage::

    python -m ventapp.domain.network solve TOPOLOGY.csv --total-flow Q [--format json|table]

Exit status: 0 when the solve converged, 2 when it did not (the output says so), 1 with a
readable message on standard error for a file that cannot be solved as given (missing column,
unknown node, negative resistance, no path from intake to exit, ...).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ventapp.domain.network.model import Network, NetworkError
from ventapp.domain.network.solver import NetworkSolution, solve_network
from ventapp.domain.network.topology_file import read_topology

EXIT_CONVERGED = 0
EXIT_BAD_INPUT = 1
EXIT_NOT_CONVERGED = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ventapp.domain.network", description="Steady-state mine ventilation network solver."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    solve = commands.add_parser("solve", help="solve a topology file (.csv or .xlsx)")
    solve.add_argument("topology", help="topology file with the columns edge_id, from, to, r_N_s2_m8, ...")
    solve.add_argument("--total-flow", type=float, default=None, metavar="Q", help="fixed total flow, m³/s")
    solve.add_argument("--format", choices=("json", "table"), default="json")
    solve.add_argument("--tol-pa", type=float, default=1e-6, help="largest loop residual, Pa (default 1e-6)")
    solve.add_argument(
        "--max-iter", type=int, default=100, help="Newton steps before giving up (default 100)"
    )
    return parser


def format_table(network: Network, solution: NetworkSolution) -> str:
    """Plain-text report: status line, airways, fans and node pressures."""
    status = "converged" if solution.converged else "NOT CONVERGED — the numbers below are not a steady state"
    lines = [
        f"{status}: {solution.iterations} iterations, largest loop residual {solution.max_residual_pa:.3g} Pa",
        solution.message,
    ]
    if solution.total_flow_m3_s is not None:
        lines.append(
            f"total flow {solution.total_flow_m3_s:g} m³/s, boundary pressure {solution.boundary_pressure_pa:.2f} Pa"
        )
    lines += ["", f"{'airway':>10} {'from':>8} {'to':>8} {'q (m³/s)':>12} {'h (Pa)':>10}  note"]
    for airway in network.airways:
        q = solution.flows_m3_s[airway.edge_id]
        notes = [n for n, on in (("reversed", q < 0), ("fan", airway.fan is not None)) if on]
        if airway.fixed_flow_m3_s is not None:
            notes.append("fixed")
        lines.append(
            f"{airway.edge_id:>10} {airway.from_node:>8} {airway.to_node:>8} {q:12.4f} "
            f"{solution.pressure_drops_pa[airway.edge_id]:10.2f}  {' '.join(notes)} {airway.name}".rstrip()
        )
    if solution.fans:
        lines += ["", f"{'fan':>10} {'q (m³/s)':>12} {'p (Pa)':>10}  stability"]
        for fan in solution.fans:
            state = "UNSTABLE (rising part of the curve)" if fan.unstable else "stable"
            lines.append(f"{fan.edge_id:>10} {fan.flow_m3_s:12.4f} {fan.fan_pressure_pa:10.2f}  {state}")
    lines += ["", f"{'node':>10} {'p (Pa)':>12}"]
    lines += [f"{node:>10} {p:12.2f}" for node, p in solution.node_pressures_pa.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        network = read_topology(args.topology)
        solution = solve_network(network, args.total_flow, tol_pa=args.tol_pa, max_iter=args.max_iter)
    except NetworkError as exc:
        print(f"error [{exc.code}]: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.format == "json":
        print(json.dumps(solution.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(format_table(network, solution))
    return EXIT_CONVERGED if solution.converged else EXIT_NOT_CONVERGED


if __name__ == "__main__":
    sys.exit(main())

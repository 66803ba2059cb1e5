"""Time the airflow network solver: benchmark networks and generated grids (prints figures).

    .venv/bin/python -m bench.bench_network [--repeat 5] [--sizes 100,500,1000,2000,5000]

Cold start every time (a fresh solve from the max-flow allocation, including building the
system). The benchmark networks are those of ``tests/data/ventilation-networks`` (Jia et al.,
CC BY 4.0). Grids: ``rows × cols`` nodes, airways to the right and downwards with seeded random
resistances, a fifth of them drawn against the flow (so they solve reversed), three booster fans
on interior airways; intake at the top-left corner, exit at the bottom-right.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from tests.domain.network.benchmark_data import DATA_DIR, ENGINEERING, FAN_FAMILY_TOTAL_FLOW_M3_S, fan_family
from ventapp.domain.network import Airway, FanCurve, Network, read_topology, solve_network


def grid_network(airways_wanted: int, seed: int = 1) -> tuple[Network, float]:
    """A square-ish grid with about ``airways_wanted`` airways, and its total flow (m³/s)."""
    rng = np.random.default_rng(seed)
    side = max(2, round(math.sqrt(airways_wanted / 2)))
    rows, cols = side, max(2, round(airways_wanted / (2 * side)))
    node = lambda r, c: f"{r}_{c}"  # noqa: E731
    airways: list[Airway] = []
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0)):
                if r + dr >= rows or c + dc >= cols:
                    continue
                tail, head = node(r, c), node(r + dr, c + dc)
                interior = 0 < r < rows - 1 and 0 < c < cols - 1
                if interior and rng.random() < 0.2:
                    tail, head = head, tail
                airways.append(Airway(f"e{len(airways)}", tail, head, float(rng.uniform(0.001, 0.05))))
    for k in rng.choice(len(airways), size=3, replace=False):
        airways[k] = Airway(
            airways[k].edge_id,
            airways[k].from_node,
            airways[k].to_node,
            0.001,
            fan=FanCurve(300.0, 5.0, -0.2),
        )
    return Network(tuple(airways)), 200.0


def _time(network: Network, total: float, repeat: int) -> tuple[float, float, int, bool, int]:
    times, solution = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        solution = solve_network(network, total)
        times.append(time.perf_counter() - start)
    assert solution is not None
    return (
        min(times),
        statistics.median(times),
        solution.iterations,
        solution.converged,
        len(solution.reversed_edges),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="100,500,1000,2000,5000")
    args = parser.parse_args()

    print(
        f"{'network':<28} {'airways':>7} {'best ms':>8} {'median ms':>9} {'iter':>5} {'conv':>5} {'reversed':>8}"
    )
    for folder, total in ENGINEERING.items():
        network = read_topology(DATA_DIR / folder / "topology.csv")
        best, median, iters, ok, rev = _time(network, total, args.repeat)
        print(
            f"{folder:<28} {len(network.airways):>7} {best * 1e3:8.1f} {median * 1e3:9.1f} {iters:>5} {ok!s:>5} {rev:>8}"
        )

    family = fan_family()
    times, iters, converged = [], [], 0
    for instance in family:
        start = time.perf_counter()
        solution = solve_network(instance.network(), FAN_FAMILY_TOTAL_FLOW_M3_S)
        times.append(time.perf_counter() - start)
        iters.append(solution.iterations)
        converged += solution.converged
    print(
        f"{'fan_family_64 (64 solves)':<28} {7:>7} {min(times) * 1e3:8.1f} {statistics.median(times) * 1e3:9.1f} "
        f"{max(iters):>5} {converged:>3}/64 {'':>6}  (iterations {min(iters)}–{max(iters)})"
    )

    for size in (int(s) for s in args.sizes.split(",")):
        network, total = grid_network(size)
        best, median, iters, ok, rev = _time(network, total, args.repeat)
        label = f"grid ~{size}"
        print(
            f"{label:<28} {len(network.airways):>7} {best * 1e3:8.1f} {median * 1e3:9.1f} {iters:>5} {ok!s:>5} {rev:>8}"
        )


if __name__ == "__main__":
    main()

"""Laws every solution must obey whatever the network (Hypothesis property tests).

Kirchhoff's laws for ventilation networks (McPherson, *Subsurface Ventilation Engineering*,
2nd ed., 2009, ch. 7): conservation of volume flow at every node, and the pressure drops around
every closed loop summing to zero; plus the monotonicity of a network of square-law airways
(more resistance in an airway never draws more air through it) and independence of the order
in which the airways are listed.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import replace

import networkx as nx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ventapp.domain.network import Airway, FanCurve, Network, NetworkError, NetworkSolution, solve_network

PROPERTY_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    # The same 60 networks on every run: CI must not turn red on a network drawn once in many runs.
    # Exploring more is a local run with derandomize off; what it finds becomes a test below.
    derandomize=True,
)
resistances = st.floats(min_value=0.005, max_value=2.0, allow_nan=False)


@st.composite
def networks(draw: st.DrawFn, *, with_fan: bool = False) -> tuple[Network, float]:
    """A connected network: a chain 0→1→…→n−1 (intake 0, exit n−1) plus random cross airways."""
    n = draw(st.integers(min_value=3, max_value=10))
    airways = [Airway(f"c{i}", str(i), str(i + 1), draw(resistances)) for i in range(n - 1)]
    extra = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), resistances, st.booleans()),
            max_size=2 * n,
        )
    )
    for k, (i, j, r, flip) in enumerate(extra):
        if i == j:
            continue
        low, high = sorted((i, j))
        tail, head = (high, low) if flip and low != 0 and high != n - 1 else (low, high)
        airways.append(Airway(f"x{k}", str(tail), str(head), r))
    if with_fan and draw(st.booleans()):
        fan = FanCurve(draw(st.floats(50, 2000)), 0.0, -draw(st.floats(0.01, 1.0)))
        airways[0] = replace(airways[0], fan=fan)
    total = draw(st.floats(min_value=1.0, max_value=200.0))
    return Network(tuple(airways)), total


def _solve(network: Network, total: float) -> NetworkSolution:
    try:
        solution = solve_network(network, total)
    except NetworkError:
        assume(False)
        raise
    assert solution.converged, solution.message
    return solution


def _branch_law_pa(airway: Airway, q: float) -> float:
    fan = airway.fan.pressure_pa(q) if airway.fan else 0.0
    return airway.total_resistance_ns2_m8 * q * abs(q) - fan - airway.nvp_pa


@PROPERTY_SETTINGS
@given(networks(with_fan=True))
def test_flow_is_conserved_at_every_node(case: tuple[Network, float]) -> None:
    network, total = case
    solution = _solve(network, total)
    net_out: dict[str, float] = defaultdict(float)
    for a in network.airways:
        net_out[a.from_node] += solution.flows_m3_s[a.edge_id]
        net_out[a.to_node] -= solution.flows_m3_s[a.edge_id]
    intakes, exits = set(network.intakes), set(network.exits)

    for node, balance in net_out.items():
        if node not in intakes | exits:
            assert abs(balance) <= 1e-9, node
    assert sum(net_out[n] for n in intakes) == pytest.approx(total, abs=1e-9)
    assert sum(net_out[n] for n in exits) == pytest.approx(-total, abs=1e-9)


@PROPERTY_SETTINGS
@given(networks(with_fan=True))
def test_pressure_drops_sum_to_zero_around_every_loop_of_a_cycle_basis(case: tuple[Network, float]) -> None:
    network, total = case
    solution = _solve(network, total)
    merged = {n: "atmosphere" for n in network.intakes} | {n: "exit" for n in network.exits}
    graph = nx.MultiGraph()
    for a in network.airways:
        graph.add_edge(merged.get(a.from_node, a.from_node), merged.get(a.to_node, a.to_node), key=a.edge_id)
    tree = nx.minimum_spanning_tree(graph)
    by_id = {a.edge_id: a for a in network.airways}

    def signed_law(edge_id: str, start: str) -> float:
        a = by_id[edge_id]
        law = _branch_law_pa(a, solution.flows_m3_s[edge_id])
        return law if merged.get(a.from_node, a.from_node) == start else -law

    loops = 0
    for u, v, key in graph.edges(keys=True):
        if tree.has_edge(u, v, key):
            continue
        path = nx.shortest_path(tree, v, u)
        total_pa = signed_law(key, u) if u != v else 0.0
        for x, y in itertools.pairwise(path):
            (tree_key,) = tree[x][y]
            total_pa += signed_law(tree_key, x)
        assert abs(total_pa) <= 1e-5, f"loop through {key}"
        loops += 1
    assert loops == graph.number_of_edges() - graph.number_of_nodes() + 1


@PROPERTY_SETTINGS
@given(networks(), st.data())
def test_raising_an_airways_resistance_never_raises_its_own_flow(case: tuple[Network, float], data) -> None:
    network, total = case
    before = _solve(network, total)
    index = data.draw(st.integers(0, len(network.airways) - 1))
    factor = data.draw(st.floats(min_value=1.01, max_value=100.0))
    airways = list(network.airways)
    target = airways[index]
    airways[index] = replace(target, resistance_ns2_m8=target.resistance_ns2_m8 * factor)
    after = _solve(Network(tuple(airways)), total)

    assert abs(after.flows_m3_s[target.edge_id]) <= abs(before.flows_m3_s[target.edge_id]) + 1e-9


@PROPERTY_SETTINGS
@given(networks(with_fan=True), st.randoms(use_true_random=False))
def test_solution_does_not_depend_on_the_order_of_the_airways(case: tuple[Network, float], rng) -> None:
    network, total = case
    shuffled = list(network.airways)
    rng.shuffle(shuffled)
    first = _solve(network, total)
    second = _solve(Network(tuple(shuffled)), total)

    for edge_id, q in first.flows_m3_s.items():
        assert second.flows_m3_s[edge_id] == pytest.approx(q, rel=1e-7, abs=1e-7)
    for node, p in first.node_pressures_pa.items():
        assert second.node_pressures_pa[node] == pytest.approx(p, rel=1e-7, abs=1e-6)


def _stalling_network() -> tuple[Network, float]:
    """A network Hypothesis drew on 3 December 2026: a fan (651 Pa shut-off) in parallel with a
    0.26 N·s²/m⁸ airway it recirculates through, 70.5 m³/s fixed through the system."""
    links = [
        ("c0", "0", "1", 1.53125), ("c1", "1", "2", 0.970703125), ("c2", "2", "3", 1.324986098098987),
        ("c3", "3", "4", 1.0), ("c4", "4", "5", 0.5), ("c5", "5", "6", 0.8), ("c6", "6", "7", 0.99999),
        ("x0", "0", "1", 0.2578125), ("x1", "0", "2", 0.2758767639893021), ("x2", "0", "4", 1.4561593300865736),
        ("x3", "3", "4", 1.75), ("x4", "3", "4", 0.5), ("x5", "3", "7", 1.4561593300865736), ("x6", "6", "7", 0.5),
    ]  # fmt: skip
    airways = [Airway(edge_id=e, from_node=a, to_node=b, resistance_ns2_m8=r) for e, a, b, r in links]
    airways[0] = replace(airways[0], fan=FanCurve(a0_pa=651.0, a1_pa_s_m3=0.0, a2_pa_s2_m6=-0.71875))
    return Network(tuple(airways)), 70.5


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="known: the line search stalls 1.2e-6 Pa from the 1e-6 Pa tolerance",
)
def test_a_fan_recirculating_through_a_parallel_airway_converges() -> None:
    """Found by the property test above (random draw, 3 December 2026): ``solve_network`` stops with
    "the line search found no decrease" at a loop residual of 1.2e-6 Pa. Strict: once the solver
    converges here, this test fails and the mark must go."""
    network, total = _stalling_network()
    assert solve_network(network, total).converged

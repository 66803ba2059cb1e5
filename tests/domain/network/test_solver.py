"""Golden tests of the network solver against the published benchmark.

Expected numbers: Jia et al., mine-ventilation-network-benchmark
(https://github.com/changtian0509/mine-ventilation-network-benchmark, CC BY 4.0), the ``dcp``
solver's published flows, pressure drops and node pressures; tolerances of the publication:
1e-4 m³/s on flows, 0.1 Pa on pressures.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.domain.network.benchmark_data import (
    DATA_DIR,
    ENGINEERING,
    FAN_FAMILY_TOTAL_FLOW_M3_S,
    fan_family,
    fan_family_published_convergence,
    published,
)
from ventapp.domain.network import Airway, FanCurve, Network, NetworkError, read_topology, solve_network
from ventapp.domain.network._system import build_system, max_flow_start

FLOW_TOL_M3_S = 1e-4
PRESSURE_TOL_PA = 0.1
FAN_FAMILY = fan_family()


@pytest.mark.parametrize("folder", sorted(ENGINEERING))
def test_engineering_network_matches_published_dcp_flows(folder: str) -> None:
    network = read_topology(DATA_DIR / folder / "topology.csv")
    solution = solve_network(network, ENGINEERING[folder])
    expected = published(folder, "solutions.csv", "edge_id", "q_m3_s")

    assert solution.converged, solution.message
    assert solution.max_residual_pa < 1e-6
    assert set(solution.flows_m3_s) == set(expected)
    for edge_id, q in expected.items():
        assert solution.flows_m3_s[edge_id] == pytest.approx(q, abs=FLOW_TOL_M3_S), edge_id


@pytest.mark.parametrize("folder", sorted(ENGINEERING))
def test_engineering_network_matches_published_pressures(folder: str) -> None:
    # The publication reports pressures as losses accumulated from the intake (positive
    # downstream); ours are physical pressures relative to the atmosphere, hence the sign.
    solution = solve_network(read_topology(DATA_DIR / folder / "topology.csv"), ENGINEERING[folder])
    drops = published(folder, "solutions.csv", "edge_id", "h_Pa")
    nodes = published(folder, "pressures.csv", "node_id", "p_Pa")

    for edge_id, h in drops.items():
        assert solution.pressure_drops_pa[edge_id] == pytest.approx(-h, abs=PRESSURE_TOL_PA), edge_id
    for node_id, p in nodes.items():
        assert solution.node_pressures_pa[node_id] == pytest.approx(-p, abs=PRESSURE_TOL_PA), node_id


def test_network_a_boundary_pressure_is_the_total_loss_along_any_path() -> None:
    solution = solve_network(read_topology(DATA_DIR / "A_hongshagang_1" / "topology.csv"), 151.295)
    exits = read_topology(DATA_DIR / "A_hongshagang_1" / "topology.csv").exits

    assert solution.boundary_pressure_pa == pytest.approx(-solution.node_pressures_pa[exits[0]])
    assert solution.boundary_pressure_pa > 1000  # a real mine's resistance, not zero


def test_fan_family_has_64_instances_and_the_published_methods_struggle() -> None:
    assert len(FAN_FAMILY) == 64
    assert fan_family_published_convergence() == {"loop": 30, "node": 44, "dcp": 64}


@pytest.mark.parametrize("instance", FAN_FAMILY, ids=lambda i: i.instance_id)
def test_fan_family_instance_matches_published_dcp_flows(instance) -> None:
    solution = solve_network(instance.network(), FAN_FAMILY_TOTAL_FLOW_M3_S)

    assert solution.converged, solution.message
    assert solution.start == "max-flow"
    for edge_id, q in instance.dcp_flows_m3_s.items():
        assert solution.flows_m3_s[edge_id] == pytest.approx(q, abs=FLOW_TOL_M3_S), edge_id
    assert solution.reversed_edges == ("3",)  # recirculation through edge 3
    (fan,) = solution.fans
    assert fan.fan_pressure_pa == pytest.approx(
        200 + 30 * fan.flow_m3_s + instance.a2_pa_s2_m6 * fan.flow_m3_s**2
    )
    assert fan.unstable == (30 + 2 * instance.a2_pa_s2_m6 * fan.flow_m3_s > 0)


def test_fan_family_cold_start_lies_in_the_fans_negative_stiffness_region() -> None:
    # What makes these instances hard (benchmark README): at the max-flow start the fan branch's
    # law R·q|q| − p_fan(q) has a negative slope, so plain Newton steps go the wrong way.
    for instance in FAN_FAMILY:
        network = instance.network()
        q0 = max_flow_start(build_system(network, FAN_FAMILY_TOTAL_FLOW_M3_S))
        fan_q = q0[0]
        slope = 2 * 0.05 * abs(fan_q) - network.airways[0].fan.slope_pa_s_m3(fan_q)
        assert slope < 0


def test_fan_duty_in_the_rising_part_of_its_curve_is_flagged_unstable() -> None:
    # One fan (a0 100 Pa, rising curve up to q = 10 m³/s) in a single airway of R = 2:
    # R·q² = 100 + 10q − 0.5q²  ->  2.5q² − 10q − 100 = 0  ->  q = 2 + √44 ≈ 8.633 m³/s.
    network = Network((Airway("f", "in", "out", 2.0, fan=FanCurve(100.0, 10.0, -0.5)),))
    solution = solve_network(network)

    assert solution.converged
    (fan,) = solution.fans
    assert fan.flow_m3_s == pytest.approx(2 + np.sqrt(44), rel=1e-9)
    assert fan.unstable and fan.slope_pa_s_m3 > 0


def test_non_converged_solve_says_so() -> None:
    network = read_topology(DATA_DIR / "B_hongshagang_difficult" / "topology.csv")
    solution = solve_network(network, 154.09, max_iter=1)

    assert not solution.converged
    assert solution.iterations == 1
    assert solution.max_residual_pa > 1e-6
    assert "not converged" in solution.message


def test_fixed_quantity_airway_keeps_its_flow_and_conserves() -> None:
    # Two parallel airways from the intake to the exit, one fixed at 4 m³/s, total 10 m³/s.
    network = Network(
        (
            Airway("a", "in", "x", 0.1),
            Airway("b", "x", "out", 0.2),
            Airway("c", "x", "out", 0.4, fixed_flow_m3_s=4.0),
        )
    )
    solution = solve_network(network, 10.0)

    assert solution.converged
    assert solution.flows_m3_s == pytest.approx({"a": 10.0, "b": 6.0, "c": 4.0})
    # b's law fixes the pressure at x; c's drop is whatever it must be (its regulator's job).
    assert solution.pressure_drops_pa["c"] == pytest.approx(0.2 * 36.0)


def test_natural_ventilation_pressure_drives_flow_without_a_fan() -> None:
    # One loop (shaft down, shaft up) with NVP 50 Pa and R = 0.5 + 1.5: q = √(50/2) = 5 m³/s.
    network = Network(
        (
            Airway("down", "top_a", "bottom", 0.5, nvp_pa=50.0),
            Airway("up", "bottom", "top_a", 1.5),
        )
    )
    solution = solve_network(network)

    assert solution.converged
    assert solution.flows_m3_s["down"] == pytest.approx(5.0)
    assert solution.flows_m3_s["up"] == pytest.approx(5.0)


@pytest.mark.parametrize(
    ("airways", "total", "code"),
    [
        (
            (Airway("a", "1", "2", 0.1), Airway("b", "3", "4", 0.1), Airway("c", "4", "3", 0.1)),
            10.0,
            "disconnected",
        ),
        ((Airway("a", "1", "2", 0.1), Airway("b", "2", "1", 0.1)), 10.0, "no_path"),
        ((Airway("a", "1", "2", 0.1), Airway("b", "2", "3", 0.1, fixed_flow_m3_s=10.0)), 10.0, "no_path"),
    ],
)
def test_network_without_a_path_from_intake_to_exit_is_refused(airways, total, code) -> None:
    with pytest.raises(NetworkError) as info:
        solve_network(Network(airways), total)
    assert info.value.code == code
    assert "intake" in str(info.value)


@pytest.mark.parametrize(
    ("airway", "code"),
    [
        (Airway("a", "1", "2", -0.1), "negative_resistance"),
        (Airway("a", "1", "2", 0.1, regulator_ns2_m8=-1.0), "negative_resistance"),
        (Airway("a", "1", "1", 0.1), "self_loop"),
        (Airway("a", "1", " ", 0.1), "unknown_node"),
        (Airway("a", "1", "2", float("nan")), "bad_value"),
    ],
)
def test_invalid_airway_is_refused_with_a_code(airway: Airway, code: str) -> None:
    with pytest.raises(NetworkError) as info:
        Network((airway,))
    assert info.value.code == code


def test_duplicate_airway_ids_are_refused() -> None:
    with pytest.raises(NetworkError, match="more than once") as info:
        Network((Airway("a", "1", "2", 0.1), Airway("a", "2", "3", 0.1)))
    assert info.value.code == "duplicate_edge"


def test_network_that_nothing_drives_is_refused_not_solved_to_zero() -> None:
    """A tester's finding: a published network without its total airflow "converged" at 0 m³/s."""
    network = read_topology(DATA_DIR / "A_hongshagang_1" / "topology.csv")
    assert not any(a.fan or a.nvp_pa or a.fixed_flow_m3_s for a in network.airways)

    with pytest.raises(NetworkError) as info:
        solve_network(network)
    assert info.value.code == "no_driver"
    assert "total airflow" in str(info.value) and "m³/s" in str(info.value)
    # The same network with its total airflow solves as published.
    assert solve_network(network, ENGINEERING["A_hongshagang_1"]).converged

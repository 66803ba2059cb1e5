"""The boundary model turned into arrays: merged nodes, incidence matrix, supplies, tree.

Private to :mod:`ventapp.domain.network.solver`. Node 0 is the atmosphere (every intake);
with a fixed total flow node 1 is the exit (every node with no outgoing airway), otherwise
the exits are at atmospheric pressure too and join node 0.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ventapp.domain.network.model import Network, NetworkError

if TYPE_CHECKING:
    # SciPy's sparse package costs ~0.3 s of import: the app loads this module with its tools at
    # start-up, so the functions below import it at the first solve.
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

ATMOSPHERE = 0
"""Merged index of the intakes (reference pressure 0 Pa)."""
EXIT = 1
"""Merged index of the exits when a total flow is fixed."""


@dataclass
class System:
    """Arrays of one network under the boundary model (free = not fixed-quantity branches)."""

    node_index: dict[str, int]
    n_nodes: int
    tail: np.ndarray  # merged from-node per airway, shape (m,)
    head: np.ndarray  # merged to-node per airway, shape (m,)
    free: np.ndarray  # bool, shape (m,)
    fixed_flow: np.ndarray  # m³/s, 0 for free airways, shape (m,)
    supply: np.ndarray  # net outflow each node must carry through free airways, m³/s, shape (n,)
    resistance: np.ndarray  # N·s²/m⁸, free airways, shape (m_f,)
    a0: np.ndarray  # Pa
    a1: np.ndarray  # Pa·s/m³
    a2: np.ndarray  # Pa·s²/m⁶
    nvp: np.ndarray  # Pa
    incidence: sp.csr_matrix  # reduced (reference row dropped), shape (n-1, m_f)
    tree: np.ndarray  # indices into the free airways of a spanning tree, shape (n-1,)
    _tree_lu: spla.SuperLU | None = None

    def conserve(self, flows_m3_s: np.ndarray, supply: np.ndarray | None = None) -> np.ndarray:
        """``flows`` with the imbalance ``b − A·q`` at every node moved onto the tree branches.

        The tree's incidence matrix is unimodular, so this restores conservation to rounding
        whatever the conditioning of the Newton system that produced the flows. ``supply``
        defaults to the network's (pass zeros to project a step).
        """
        if self._tree_lu is None:
            return flows_m3_s
        target = self.supply if supply is None else supply
        imbalance = target[1:] - self.incidence @ flows_m3_s
        corrected = flows_m3_s.copy()
        corrected[self.tree] += self._tree_lu.solve(imbalance, trans="T")
        return corrected

    def tree_pressures(self, law_pa: np.ndarray) -> np.ndarray:
        """Node pressures (Pa, reference 0) that satisfy every tree branch's law exactly."""
        pressures = np.zeros(self.n_nodes)
        if self._tree_lu is not None:
            pressures[1:] = self._tree_lu.solve(law_pa[self.tree])
        return pressures


def _merge_nodes(network: Network, fixed_total: bool) -> tuple[dict[str, int], int]:
    intakes, exits = set(network.intakes), set(network.exits)
    if fixed_total and not intakes:
        raise NetworkError(
            "no_path",
            "The network has no intake (a node with no incoming airway), so no air can enter it.",
            variant="no_intake",
        )
    if fixed_total and not exits:
        raise NetworkError(
            "no_path",
            "The network has no exit (a node with no outgoing airway), so no air can leave it.",
            variant="no_exit",
        )
    index: dict[str, int] = {}
    next_index = 2 if fixed_total else 1
    for node in network.nodes:
        if node in intakes:
            index[node] = ATMOSPHERE
        elif node in exits:
            index[node] = EXIT if fixed_total else ATMOSPHERE
        else:
            index[node] = next_index
            next_index += 1
    if not intakes and not exits:  # a closed network: its first node is the reference
        first = network.nodes[0]
        index = {node: (i - 1 if i > index[first] else i) for node, i in index.items()}
        index[first] = ATMOSPHERE
        next_index -= 1
    return index, next_index


def _spanning_tree(
    n_nodes: int, tail: np.ndarray, head: np.ndarray, weight: np.ndarray
) -> tuple[list[int], set[int]]:
    """Kruskal on the least-resistance branches, and the nodes joined to the atmosphere.

    The chords left over (one per independent loop) carry the loop-law residuals.
    """
    parent = list(range(n_nodes))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    tree: list[int] = []
    for k in np.argsort(weight, kind="stable"):
        a, b = root(int(tail[k])), root(int(head[k]))
        if a != b:
            parent[a] = b
            tree.append(int(k))
    reference = root(ATMOSPHERE)
    return tree, {i for i in range(n_nodes) if root(i) == reference}


def _connectivity_error(network: Network, index: dict[str, int], joined: set[int], fixed_total: bool) -> None:
    if fixed_total and EXIT not in joined:
        raise NetworkError(
            "no_path",
            "No path of airways joins the intakes to the exits (fixed-quantity airways do not count), "
            "so the total flow has nowhere to go.",
            variant="no_route",
        )
    loose = [node for node, i in index.items() if i not in joined]
    if loose:
        shown = ", ".join(repr(n) for n in loose[:5]) + (" …" if len(loose) > 5 else "")
        raise NetworkError(
            "disconnected",
            f"Node(s) {shown} are not joined to the intakes by airways whose flow is free; "
            "their pressure cannot be determined.",
            nodes=tuple(loose[:5]) + (("…",) if len(loose) > 5 else ()),
            count=(str(len(loose)),),
        )


def build_system(network: Network, total_flow_m3_s: float | None) -> System:
    """Apply the boundary model to ``network``.

    Raises
    ------
    NetworkError
        ``no_path`` (no intake, no exit, or intakes and exits not joined) or ``disconnected``.
    """
    fixed_total = total_flow_m3_s is not None
    index, n_nodes = _merge_nodes(network, fixed_total)
    airways = network.airways
    tail = np.array([index[a.from_node] for a in airways], dtype=np.int64)
    head = np.array([index[a.to_node] for a in airways], dtype=np.int64)
    free = np.array([a.fixed_flow_m3_s is None for a in airways])
    fixed_flow = np.array([a.fixed_flow_m3_s or 0.0 for a in airways])
    supply = np.zeros(n_nodes)
    if fixed_total:
        supply[ATMOSPHERE] += float(total_flow_m3_s)  # type: ignore[arg-type]  # fixed_total checked
        supply[EXIT] -= float(total_flow_m3_s)  # type: ignore[arg-type]
    np.add.at(supply, tail[~free], -fixed_flow[~free])
    np.add.at(supply, head[~free], fixed_flow[~free])

    free_airways = [a for a in airways if a.fixed_flow_m3_s is None]
    resistance = np.array([a.total_resistance_ns2_m8 for a in free_airways])
    fans = [a.fan for a in free_airways]
    a0 = np.array([f.a0_pa if f else 0.0 for f in fans])
    a1 = np.array([f.a1_pa_s_m3 if f else 0.0 for f in fans])
    a2 = np.array([f.a2_pa_s2_m6 if f else 0.0 for f in fans])
    nvp = np.array([a.nvp_pa for a in free_airways])
    import scipy.sparse as sp  # first solve: see TYPE_CHECKING above
    import scipy.sparse.linalg as spla

    ft, fh = tail[free], head[free]
    m_free = len(free_airways)
    cols = np.arange(m_free)
    full = sp.csr_matrix(
        (np.r_[np.ones(m_free), -np.ones(m_free)], (np.r_[ft, fh], np.r_[cols, cols])),
        shape=(n_nodes, m_free),
    )
    incidence = full[1:, :].tocsr()

    tree, joined = _spanning_tree(n_nodes, ft, fh, resistance)
    _connectivity_error(network, index, joined, fixed_total)
    tree_arr = np.array(tree, dtype=np.int64)
    lu = spla.splu(incidence[:, tree_arr].T.tocsc()) if len(tree) else None
    return System(
        node_index=index,
        n_nodes=n_nodes,
        tail=tail,
        head=head,
        free=free,
        fixed_flow=fixed_flow,
        supply=supply,
        resistance=resistance,
        a0=a0,
        a1=a1,
        a2=a2,
        nvp=nvp,
        incidence=incidence,
        tree=tree_arr,
        _tree_lu=lu,
    )


def laminar_start(system: System) -> np.ndarray:
    """Flows of the same network under a linear law ``p = R·q`` (always conserves at every node)."""
    if not np.any(system.supply):
        return np.zeros(len(system.resistance))
    import scipy.sparse as sp  # first solve: see TYPE_CHECKING above
    import scipy.sparse.linalg as spla

    weight = 1.0 / np.maximum(system.resistance, 1e-9 * max(float(system.resistance.max()), 1e-12))
    a = system.incidence
    lam = spla.spsolve((a @ sp.diags(weight) @ a.T).tocsc(), system.supply[1:])
    return weight * (a.T @ lam)


def max_flow_start(system: System) -> np.ndarray | None:
    """The max-flow allocation of the supplies along the airways' orientation, or None if infeasible.

    Each airway may carry up to the total supply; parallel airways share their pair's flow evenly.
    This is the "max-flow initial airflow allocation" of the benchmark's published runs, computed
    with SciPy's Dinic algorithm on capacities scaled to integers (the first conservation
    correction of the iteration removes the rounding).
    """
    import scipy.sparse as sp  # first solve: see TYPE_CHECKING above
    from scipy.sparse import csgraph

    supply = system.supply
    m_free = len(system.resistance)
    if not np.any(supply):
        return np.zeros(m_free)
    capacity = float(supply[supply > 0].sum())
    tail, head = system.tail[system.free], system.head[system.free]
    pairs: dict[tuple[int, int], list[int]] = defaultdict(list)
    for k, (u, v) in enumerate(zip(tail.tolist(), head.tolist(), strict=True)):
        if u != v:
            pairs[(u, v)].append(k)
    n = system.n_nodes
    source, sink = n, n + 1
    widest = max((len(ks) for ks in pairs.values()), default=1)
    unit = (2**30) / (capacity * (widest + len(supply)))  # integer capacities, no int32 overflow
    rows = [u for u, _ in pairs] + [source] * int(np.sum(supply > 0)) + np.flatnonzero(supply < 0).tolist()
    cols = [v for _, v in pairs] + np.flatnonzero(supply > 0).tolist() + [sink] * int(np.sum(supply < 0))
    caps = [round(capacity * len(ks) * unit) for ks in pairs.values()]
    caps += [round(s * unit) for s in supply[supply > 0]] + [round(-s * unit) for s in supply[supply < 0]]
    graph = sp.csr_matrix(
        (np.array(caps, dtype=np.int32), (np.array(rows), np.array(cols))), shape=(n + 2, n + 2)
    )
    result = csgraph.maximum_flow(graph, source, sink, method="dinic")
    if result.flow_value < round(capacity * unit) * (1.0 - 1e-9) - len(supply):
        return None
    flow = result.flow.tocsr()
    q = np.zeros(m_free)
    for (u, v), ks in pairs.items():
        q[ks] = max(float(flow[u, v]), 0.0) / unit / len(ks)
    return q

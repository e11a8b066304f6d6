"""Analytic models used to check simulations and to overlay on figures."""

from __future__ import annotations

import math


def lambert_w0(x: float) -> float:
    """Principal branch of Lambert W for x in [−1/e, 0), by Halley's iteration."""
    if not -1 / math.e <= x < 0:
        raise ValueError(f"lambert_w0 is implemented on [-1/e, 0), not at {x}")
    w = -0.5
    for _ in range(200):
        ew = math.exp(w)
        f = w * ew - x
        w_next = w - f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2))
        if abs(w_next - w) < 1e-15:
            return w_next
        w = w_next
    return w


def greedy_waf(rho: float) -> float:
    """Write amplification of greedy GC under uniform random page writes, in the limit of many
    pages per block (Xiang & Kurkoski): WA = (1+ρ) / ((1+ρ) + W0(−(1+ρ)·e^{−(1+ρ)})),
    ρ = physical/logical − 1."""
    if rho <= 0:
        raise ValueError(f"over-provisioning ρ must be > 0, not {rho}")
    a = 1 + rho
    return a / (a + lambert_w0(-a * math.exp(-a)))


def greedy_waf_config(rho: float, pages_per_block: int, logical_pages: int = 1 << 18) -> dict:
    """The simulation `greedy_waf` models: uniform random 4 KiB writes (8 per logical page, the
    first 3 per page warm-up after a fill) on a page FTL with greedy GC and no buffer."""
    return {
        "workload": {"kind": "uniform", "requests": logical_pages * 8, "footprint_bytes": logical_pages * 4096},
        "device": {"pages_per_block": pages_per_block, "op": rho, "logical_bytes": logical_pages * 4096},
        "buffer": {"kind": "none"},
        "ftl": {"gc": "greedy", "page": {"gc_free_blocks": 2}},
        "run": {"precondition": "fill", "warmup_requests": logical_pages * 3},
    }


def _check_load(rho: float) -> None:
    if not 0 <= rho < 1:
        raise ValueError(f"utilisation ρ must be in [0, 1), not {rho}")


def mm1_response(service_us: float, rho: float) -> float:
    """Mean response time of an M/M/1 queue (Poisson arrivals, exponential service of mean S,
    FIFO): S / (1 − ρ)."""
    _check_load(rho)
    return service_us / (1 - rho)


def md1_response(service_us: float, rho: float) -> float:
    """Mean response time of an M/D/1 queue (deterministic service S), by Pollaczek–Khinchine:
    S + ρS / (2(1 − ρ))."""
    _check_load(rho)
    return service_us + rho * service_us / (2 * (1 - rho))


def closed_network_iops(servers: int, customers: int, service_us: float) -> float:
    """Throughput (per second) of N customers circulating with no think time among D identical
    FIFO servers with exponential service of mean S, each visit to a server chosen uniformly at
    random: D·N / ((N + D − 1)·S). Every one of the C(N+D−1, D−1) placements is equally likely, and
    a server is busy in N/(N+D−1) of them."""
    if servers < 1 or customers < 1:
        raise ValueError("servers and customers must be ≥ 1")
    return servers * customers / ((customers + servers - 1) * service_us) * 1e6


# Seed 002 (Park & Kang, §3.2): the cost of block padding against a full merge, in units of a
# page read (R), page write (W) and block erase (E), for a log block of N_p pages that clusters of
# S_c pages are written to.


def _check_cluster(s_c: float, n_p: int) -> None:
    if n_p < 1:
        raise ValueError(f"pages per block N_p must be ≥ 1, not {n_p}")
    if not 0 <= s_c <= n_p:
        raise ValueError(f"cluster size S_c must be in [0, N_p = {n_p}], not {s_c}")


def padding_cost(s_c: float, n_p: int = 128, r: float = 1, w: float = 6, e: float = 10) -> float:
    """Seed 002, Eq. 1: one cluster of S_c pages padded to a whole block and switch-merged,
    C_BP = (N_p − S_c)·R + N_p·W + E (the N_p − S_c missing pages read, the block written, the
    old data block erased). With N_p = 128, R = 1, W = 6, E = 10: 906 − S_c."""
    _check_cluster(s_c, n_p)
    return (n_p - s_c) * r + n_p * w + e


def full_merge_cost(s_c: float, n_p: int = 128, r: float = 1, w: float = 6, e: float = 10) -> float:
    """Seed 002, Eq. 2: one cluster of S_c pages written to a log block that is then
    full-merged, C_FM = S_c·W + N_p·(R + W) + 2E (the cluster written, every page copied into a
    new block, the log block and the old data block erased). With N_p = 128, R = 1, W = 6,
    E = 10: 6·S_c + 916."""
    _check_cluster(s_c, n_p)
    return s_c * w + n_p * (r + w) + 2 * e


def _check_sizes(sizes: list[float], n_p: int) -> None:
    if not sizes:
        raise ValueError("at least one cluster (reference) is needed")
    for s in sizes:
        _check_cluster(s, n_p)


def full_merge_cost_refs(sizes: list[float], n_p: int = 128, r: float = 1, w: float = 6, e: float = 10) -> float:
    """Seed 002, Eq. 3: n clusters S_c^1 … S_c^n written to one LBN's log block before its merge
    (n − 1 re-references), without padding. Each time the log block overflows it is full-merged
    with N_p pages and the rest goes to a new log block, which is full-merged in the end:
    C_FM = ⌊ΣS_c / N_p⌋·(N_p·W + N_p·(R + W) + 2E) + (ΣS_c mod N_p)·W + N_p·(R + W) + 2E.
    With N_p = 128, R = 1, W = 6, E = 10: ⌊ΣS_c/128⌋·(6·128 + 916) + 6·(ΣS_c mod 128) + 916.
    As printed, a sum that is an exact multiple k·N_p is charged k full blocks plus the merge of
    an empty remainder (k + 1 merges)."""
    _check_sizes(sizes, n_p)
    total = sum(sizes)
    blocks, rest = divmod(total, n_p)
    whole = n_p * w + n_p * (r + w) + 2 * e
    return blocks * whole + rest * w + n_p * (r + w) + 2 * e


def padding_cost_refs(sizes: list[float], n_p: int = 128, r: float = 1, w: float = 6, e: float = 10) -> float:
    """Seed 002, Eq. 4: the same n clusters, each padded and switch-merged when flushed:
    C_BP = Σ_i C_BP(S_c^i) (with N_p = 128, R = 1, W = 6, E = 10: Σ (906 − S_c^i))."""
    _check_sizes(sizes, n_p)
    return sum(padding_cost(s, n_p, r, w, e) for s in sizes)

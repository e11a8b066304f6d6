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

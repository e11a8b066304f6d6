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

"""WAF of greedy GC under uniform random 4 KiB writes against Xiang & Kurkoski's expression,
for the issue notes: `python benches/waf_table.py` (also run by `make bench`)."""

import math
import sys

import ssdlab


def lambert_w0(x: float) -> float:
    w = -0.5
    for _ in range(200):
        ew = math.exp(w)
        f = w * ew - x
        w_next = w - f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2))
        if abs(w_next - w) < 1e-15:
            break
        w = w_next
    return w


def analytic(rho: float) -> float:
    a = 1 + rho
    return a / (a + lambert_w0(-a * math.exp(-a)))


def main() -> int:
    lp = 1 << 18  # 1 GiB logical
    print(f"{'ρ':>5} {'pages/block':>12} {'ssdlab WAF':>11} {'analytic':>9} {'error':>8}")
    for ppb in (128, 256):
        for rho in (0.1, 0.2, 0.3, 0.5):
            r = ssdlab.simulate(
                {
                    "workload": {"kind": "uniform", "requests": lp * 8, "footprint_bytes": lp * 4096},
                    "device": {"pages_per_block": ppb, "op": rho, "logical_bytes": lp * 4096},
                    "buffer": {"kind": "none"},
                    "ftl": {"gc": "greedy", "gc_free_blocks": 2},
                    "run": {"precondition": "fill", "warmup_requests": lp * 3},
                }
            )
            waf, ref = r.metrics["waf"], analytic(rho)
            print(f"{rho:>5} {ppb:>12} {waf:>11.4f} {ref:>9.4f} {waf / ref - 1:>+8.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

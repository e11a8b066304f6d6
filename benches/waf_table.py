"""WAF of greedy GC under uniform random 4 KiB writes against Xiang & Kurkoski's expression,
for the issue notes: `python benches/waf_table.py` (also run by `make bench`)."""

import sys

import ssdlab
from ssdlab.analytic import greedy_waf as analytic
from ssdlab.analytic import greedy_waf_config


def main() -> int:
    lp = 1 << 18  # 1 GiB logical
    print(f"{'ρ':>5} {'pages/block':>12} {'ssdlab WAF':>11} {'analytic':>9} {'error':>8}")
    for ppb in (128, 256):
        for rho in (0.1, 0.2, 0.3, 0.5):
            r = ssdlab.simulate(greedy_waf_config(rho, ppb, lp))
            waf, ref = r.metrics["waf"], analytic(rho)
            print(f"{rho:>5} {ppb:>12} {waf:>11.4f} {ref:>9.4f} {waf / ref - 1:>+8.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

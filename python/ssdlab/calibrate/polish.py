"""Polishing a calibration's best trial: a coordinate search after the optimiser's trials.

TPE samples a space of some 15 parameters well enough to find a good basin in 160 trials, but
not its floor: a fit of the ZNS namespace left its page types' read times where its tight QD-1
reads came out bimodal, though moving the lower page's time alone lowers the error. The search
moves one parameter at a time from the best point, in the optimiser's own scale (log or linear,
a relative parameter's factor): a step up, else a step down, kept when the error falls. A sweep
over every parameter that keeps nothing halves the step. It stops after `budget` evaluations or
when the step falls below `min_step`. Deterministic: the same start and errors give the same
evaluations in the same order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from .space import Param

FIRST_STEP = 0.1  # a tenth of the range (in the parameter's scale)
MIN_STEP = 0.005


def raw_of(params: Sequence[Param], values: Mapping) -> dict:
    """The optimiser's values of configuration `values`: a relative parameter's factor, the rest as they are."""
    return {p.key: p.clip(p.factor(values)) if p.relative_to else values[p.key] for p in params}


def moved(p: Param, x: float, step: float, sign: int) -> float | int:
    """`x` moved by `step` of `p`'s range in its scale, towards `sign`, inside the bounds."""
    if p.integer:
        return p.clip(x + sign * max(1, round(step * (p.high - p.low))))
    if p.log:
        return p.clip(math.exp(math.log(x) + sign * step * math.log(p.high / p.low)))
    return p.clip(x + sign * step * (p.high - p.low))


def coordinate_search(
    params: Sequence[Param],
    start: Mapping,
    start_error: float,
    evaluate: Callable[[dict], float],
    budget: int,
    first_step: float = FIRST_STEP,
    min_step: float = MIN_STEP,
) -> tuple[dict, float]:
    """Minimise `evaluate` (optimiser values -> error; NaN for a failed trial) from `start`
    within `budget` calls; the best values and their error."""
    best, best_err = dict(start), start_error
    step, calls = first_step, 0
    while calls < budget and step >= min_step:
        improved = False
        for p in params:
            for sign in (1, -1):
                x = moved(p, best[p.key], step, sign)
                if x == best[p.key]:
                    continue  # at a bound
                if calls >= budget:
                    return best, best_err
                cand = dict(best) | {p.key: x}
                err = evaluate(cand)
                calls += 1
                if err < best_err:  # False for NaN
                    best, best_err, improved = cand, err, True
                    break
        if not improved:
            step /= 2
    return best, best_err

"""ssdlab: a fast, trace-driven SSD simulator.

    >>> import ssdlab
    >>> r = ssdlab.simulate({"workload": {"kind": "uniform", "requests": 10000}})
    >>> r.metrics["waf"]

See README.md for the tour and docs/ for the configuration keys, metrics and components.
"""

from ._core import SsdlabError, __version__
from .api import Config, Result, components, simulate
from .store import load_results
from .sweep import expand_study, run_sweep
from .traces import (
    latency_summary,
    measured_latencies,
    trace_convert,
    trace_detect,
    trace_formats,
    trace_info,
    trace_profile,
)

__all__ = [
    "Config",
    "Result",
    "SsdlabError",
    "__version__",
    "components",
    "expand_study",
    "latency_summary",
    "load_results",
    "measured_latencies",
    "run_sweep",
    "simulate",
    "trace_convert",
    "trace_detect",
    "trace_formats",
    "trace_info",
    "trace_profile",
]

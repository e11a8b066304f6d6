"""fio as ssdlab reads it: a run's JSON output as a measurement (`read_output`, `ssdlab fio info`)."""

from .output import FioError, Job, Measurement, OpStats, parse_size, parse_time, read_output

__all__ = ["FioError", "Job", "Measurement", "OpStats", "parse_size", "parse_time", "read_output"]

"""The `ssdlab` command line: run, compare, config show, trace info|profile|convert|generate,
fio JOBFILE|--plan|info, profiles,
policies, sweep, results, plot, report, reproduce, claims, calibrate, validate.

User errors (bad configuration, bad trace, capacity) print one line without a traceback and exit
with status 2; Ctrl-C exits with status 130.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .. import api
from .._core import SsdlabError
from .calibrate import CALIBRATE_TRIALS, _add_calibrate_parsers
from .common import ProgressBar, print_table
from .fio import _add_fio_parsers, fio_argv
from .report import _add_report_parsers, cmd_plot
from .reproduce import _add_claims_parser, _add_reproduce_parser
from .run import _add_run_parsers, components_markdown
from .sweep import _add_sweep_parsers
from .trace import _add_trace_parsers

# What scripts and tests reach through `ssdlab.cli` (each command group is a module of its own).
__all__ = ["CALIBRATE_TRIALS", "ProgressBar", "build_parser", "cmd_plot", "components_markdown", "main", "print_table"]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ssdlab", description="Trace-driven SSD simulator.")
    ap.add_argument("--version", action="version", version=f"ssdlab {api._core.__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    _add_run_parsers(sub)
    _add_trace_parsers(sub)
    _add_fio_parsers(sub)
    _add_sweep_parsers(sub)
    _add_report_parsers(sub)
    _add_reproduce_parser(sub)
    _add_claims_parser(sub)
    _add_calibrate_parsers(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(fio_argv(list(sys.argv[1:] if argv is None else argv)))
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows up here at the latest
        return code
    except BrokenPipeError:
        # The reader went away (`ssdlab run | head`): stop quietly, as `cat` would. Point stdout at
        # /dev/null so that the interpreter's final flush does not complain again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a process killed by a closed pipe
    except SsdlabError as e:
        print(f"ssdlab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nssdlab: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        # What a check before the run could not foresee (a full disk): in ssdlab's words too.
        print(f"ssdlab: error: {api.os_error_message(e)}", file=sys.stderr)
        return 2
    except json.JSONDecodeError as e:
        print(f"ssdlab: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""What the commands share: progress, tables, JSON and CSV output, output-path checks, the
`--config`/`--set` and trace arguments, failures of a sweep."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from .. import api
from .._core import SsdlabError


class ProgressBar:
    """A one-line progress bar on stderr, shown only on a terminal and only for runs > 1 s."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.quiet = not enabled
        self.start = time.monotonic()
        self.shown = False
        self.noted: list[str] = []

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or time.monotonic() - self.start < 1.0:
            return
        self.shown = True
        elapsed = time.monotonic() - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        if total:
            frac = min(done / total, 1.0)
            bar = "#" * int(frac * 30)
            left = (total - done) / rate if rate > 0 else 0.0
            line = f"\r[{bar:<30}] {frac:6.1%} {done:,}/{total:,} requests, {rate:,.0f}/s, {left:,.0f} s left"
        else:
            line = f"\r{done:,} requests, {rate:,.0f}/s"
        sys.stderr.write(line)
        sys.stderr.flush()

    def note(self, message: str) -> None:
        """A warning the engine gives before the run ends (a request that will take minutes)."""
        self.noted.append(message)
        if self.quiet:
            return
        if self.shown:
            sys.stderr.write("\n")
        print(f"warning: {message}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def _config_from_args(args) -> api.Config:
    cfg = api.Config.from_toml(args.config) if args.config else api.Config()
    if getattr(args, "profile", None):
        from ..fio.profile import load_profile

        cfg = api.Config(load_profile(args.profile).run_config(cfg.to_dict(), getattr(args, "host", None)))
    return apply_sets(cfg, args.set or [])


def apply_sets(cfg: api.Config, items) -> api.Config:
    """`cfg` with each `--set SECTION.KEY=VALUE` of `items` applied, in order."""
    for item in items:
        if "=" not in item:
            raise SsdlabError(f"--set {item!r}: expected section.key=value")
        key, value = item.split("=", 1)
        cfg = cfg.set(key.strip(), api.parse_value(value.strip()))
    return cfg


def _fmt(v) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:,.4f}"
    return str(v)


def _json_safe(v):
    """NaN and infinities as null: JSON has no NaN, and `json.dumps` would write it anyway."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return v


def fmt_us(v: float) -> str:
    """A latency in µs: whole µs from 100 µs up, else 3 significant digits."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def write_json(dest: str, doc) -> None:
    """Write `doc` as JSON to the file `dest`, or to standard output when `dest` is `-`."""
    text = json.dumps(_json_safe(doc), indent=2, allow_nan=False) + "\n"
    if dest == "-":
        sys.stdout.write(text)
        return
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    Path(dest).write_text(text)


def check_output_file(option: str, path: str | os.PathLike) -> None:
    """Check, before anything runs, that the file `path` (given as `option`) can be written: not a
    folder, an existing file writable, or else a folder to create it in. An error names the option
    and the path in ssdlab's words. `-` (standard output) passes."""
    if str(path) == "-":
        return
    p = Path(path)
    if p.is_dir():
        raise SsdlabError(f"{option} {path}: is a folder; expected a file")
    if p.exists():
        if not p.is_file():
            return  # a device or a pipe (`/dev/stdout`): opened when written, not before
        try:
            os.close(os.open(p, os.O_WRONLY))  # opened, not truncated: the file stays as it is
        except OSError as e:
            raise SsdlabError(f"{option} {path}: exists and cannot be written ({api.os_error_words(e)})") from None
        return
    _check_folder(option, path, p.parent)


def check_output_dir(option: str, path: str | os.PathLike, files: tuple[str, ...] = ()) -> None:
    """Check, before anything runs, that the folder `path` (given as `option`) can hold output:
    an existing folder to write in (and the `files` to be written there not folders), or a place
    to create it."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise SsdlabError(f"{option} {path}: exists and is a file; expected a folder")
    if not p.is_dir():
        _check_folder(option, path, p.parent)
        return
    _check_folder(option, path, p)
    for name in files:
        check_output_file(option, p / name)


def _check_folder(option: str, path, folder: Path) -> None:
    """`folder`, or the nearest of its parents that exists (the rest are created), is a folder
    this process can create files in (tried: permissions alone miss read-only file systems)."""
    at = folder
    while not at.exists() and at != at.parent:
        at = at.parent
    if not at.is_dir():
        raise SsdlabError(f"{option} {path}: `{at}` is a file, not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=at, prefix=".ssdlab-check-"):
            pass
    except OSError as e:
        raise SsdlabError(f"{option} {path}: cannot write in the folder `{at}` ({api.os_error_words(e)})") from None


def table_lines(rows: list[list[str]], header: list[str], left: int = 1) -> list[str]:
    """A text table's lines (header, rule, rows): the first `left` columns aligned left, the others right."""
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]

    def fmt(r):
        cells = (
            str(c).ljust(w) if i < left else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=False))
        )
        return "  ".join(cells).rstrip()

    line = fmt(header)
    return [line, "-" * (sum(widths) + 2 * (len(widths) - 1))] + [fmt(r) for r in rows]


def print_table(rows: list[list[str]], header: list[str], file=None, left: int = 1) -> None:
    """A text table: the first `left` columns aligned left, the others right."""
    for line in table_lines(rows, header, left):
        print(line, file=file)


def _failures(summary, allow: bool) -> int:
    """The exit status of a sweep: 1 when cells failed (after one summary line on stderr), unless
    --allow-failures."""
    if not summary.failed:
        return 0
    print(f"ssdlab: {summary.failure_line()}", file=sys.stderr)
    return 0 if allow else 1


def _executor_options(args) -> dict:
    """How a command runs its cells or trials (--executor, --address, --workers, --quiet): dask when
    only a scheduler address is given."""
    return {
        "executor": args.executor or ("dask" if args.address else "local"),
        "address": args.address,
        "workers": args.workers,
        "progress": not args.quiet,
    }


def _add_executor_args(p: argparse.ArgumentParser, executor: str, address: str, workers: str) -> None:
    """--executor, --address, --workers and --quiet, with each command's own help texts."""
    p.add_argument("--executor", choices=["local", "dask"], help=executor)
    p.add_argument("--address", metavar="tcp://HOST:PORT", help=address)
    p.add_argument("--workers", type=int, metavar="N", help=workers)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")


def _add_grid_args(p: argparse.ArgumentParser, executor: str, address: str, workers: str, traces: str) -> None:
    """What `sweep` and `reproduce` take to run a study's cells: the executor arguments, --traces
    and --allow-failures, with each command's own help texts."""
    _add_executor_args(p, executor=executor, address=address, workers=workers)
    p.add_argument("--traces", metavar="DIR", help=traces)
    p.add_argument("--allow-failures", action="store_true", help="exit 0 even when cells failed")


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", "-c", help="TOML configuration file")
    p.add_argument(
        "--set",
        "-s",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help="override one key (repeatable), e.g. --set buffer.bytes=8MiB",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")


def _add_trace_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file")
    p.add_argument("--format", "-f", help="trace format (default: detect)")
    p.add_argument("--device", type=int, help="keep only this device / volume / LUN")
    p.add_argument("--skip-invalid", action="store_true", help="count and skip malformed records")
    p.add_argument("--blkparse-action", choices=["Q", "D", "C"], help="blkparse action to use")
    p.add_argument("--generic", metavar="SPEC.json", help="column spec for --format generic")

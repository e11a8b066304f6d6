"""The `desktop` profile at the thesis's scale against seed 000 Table 4.

The trace is written by `ssdlab trace generate` and measured here with an independent numpy
implementation of the thesis's definitions (§5.1):

* a write request is *sequential* if it is contiguous with any of the 10 write requests before or
  after it (its start is another's end, or its end is another's start), else *random*;
* it is an *update* if its start sector was written before, else a first write;
* the histogram counts, per 512-byte sector of the 20 GiB device, how often it was written.

MB is read as 10^6 bytes: with 2^20, the first writes (7,567 MB) would carry more bytes than all
sectors ever written (15,296,137 sectors = 7,469 MiB).

Run `python tests/test_desktop_table4.py` to print the comparison table.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SECTOR = 512
DEVICE_SECTORS = 41_943_040  # 20 GiB
WRITE_REQUESTS = 1_509_409
MB = 10**6

# (row, thesis value)
TABLE4 = [
    ("sequential first writes", 82_648),
    ("random first writes", 102_174),
    ("sequential updates", 359_161),
    ("random updates", 965_426),
    ("sequential share %", 29.3),
    ("random share %", 70.7),
    ("sequential first-write MB", 4_545),
    ("random first-write MB", 3_022),
    ("sequential update MB", 11_686),
    ("random update MB", 7_176),
    ("sectors written 0 times", 26_646_903),
    ("sectors written 1-100 times", 15_286_890),
    ("sectors written 101-1000 times", 8_791),
    ("sectors written 1001-10000 times", 419),
    ("sectors written 10001-30000 times", 21),
    ("sectors written >=30001 times", 16),
]


def read_msr_writes(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Start sector and length (sectors) of every write request of an MSR CSV, in order."""
    start, size = [], []
    with open(path) as f:
        for line in f:
            p = line.split(",")
            if p[3] == "Write":
                start.append(int(p[4]))
                size.append(int(p[5]))
    return np.array(start, np.int64) // SECTOR, np.array(size, np.int64) // SECTOR


def sequential(start: np.ndarray, end: np.ndarray, window: int = 10) -> np.ndarray:
    seq = np.zeros(len(start), bool)
    for k in range(1, window + 1):
        touch = (start[k:] == end[:-k]) | (end[k:] == start[:-k])  # request i+k with request i
        seq[k:] |= touch
        seq[:-k] |= touch
    return seq


def first_writes_and_counts(start, length, device_sectors, chunk=100_000):
    """(is the request's start sector new?, per-sector write counts), sector by sector."""
    n = len(start)
    first_writer = np.full(device_sectors, n, np.int64)  # earliest request writing each sector
    delta = np.zeros(device_sectors + 1, np.int64)
    np.add.at(delta, start, 1)
    np.add.at(delta, start + length, -1)
    counts = np.cumsum(delta)[:-1]
    for lo in range(0, n, chunk):
        s, ln = start[lo : lo + chunk], length[lo : lo + chunk]
        req = np.repeat(np.arange(lo, lo + len(s)), ln)
        sec = np.arange(len(req)) - np.repeat(np.cumsum(ln) - ln, ln) + np.repeat(s, ln)
        # `req` is ascending, so the first occurrence of a sector is its earliest writer here.
        u, i = np.unique(sec, return_index=True)
        new = first_writer[u] == n
        first_writer[u[new]] = req[i[new]]
    return first_writer[start] == np.arange(n), counts


def measure(path: Path, device_sectors: int = DEVICE_SECTORS) -> dict[str, float]:
    start, length = read_msr_writes(path)
    seq = sequential(start, start + length)
    first, counts = first_writes_and_counts(start, length, device_sectors)
    nbytes = length * SECTOR
    out: dict[str, float] = {}
    for name, mb, mask in [
        ("sequential first writes", "sequential first-write MB", seq & first),
        ("random first writes", "random first-write MB", ~seq & first),
        ("sequential updates", "sequential update MB", seq & ~first),
        ("random updates", "random update MB", ~seq & ~first),
    ]:
        out[name] = int(mask.sum())
        out[mb] = nbytes[mask].sum() / MB
    out["sequential share %"] = 100 * seq.mean()
    out["random share %"] = 100 * (1 - seq.mean())
    edges = [(0, 0), (1, 100), (101, 1000), (1001, 10000), (10001, 30000)]
    for lo, hi in edges:
        label = "0" if hi == 0 else f"{lo}-{hi}"
        out[f"sectors written {label} times"] = int(((counts >= lo) & (counts <= hi)).sum())
    out["sectors written >=30001 times"] = int((counts >= 30001).sum())
    out["requests"] = len(start)
    return out


def generate(out: Path) -> None:
    """The default desktop profile at the thesis's scale, through the command line."""
    cmd = [sys.executable, "-m", "ssdlab", "trace", "generate", "--quiet"]
    for kv in [
        "workload.kind=desktop",
        "workload.footprint_bytes=20GiB",
        f"workload.requests={WRITE_REQUESTS}",
        "workload.read_fraction=0",
    ]:
        cmd += ["--set", kv]
    subprocess.run(cmd + [str(out)], check=True, capture_output=True)


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> dict[str, float]:
    path = tmp_path_factory.mktemp("table4") / "desktop.csv"
    generate(path)
    return measure(path)


@pytest.mark.parametrize("row,thesis", TABLE4, ids=[r for r, _ in TABLE4])
def test_table4_row_within_15_percent(measured, row, thesis):
    got = measured[row]
    assert abs(got - thesis) <= 0.15 * thesis, f"{row}: ssdlab {got:,.1f} vs thesis {thesis:,}"


def test_every_request_is_a_write_and_fits(measured):
    assert measured["requests"] == WRITE_REQUESTS
    total = sum(measured[r] for r, _ in TABLE4 if r.startswith("sectors written"))
    assert total == DEVICE_SECTORS


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "desktop.csv"
        generate(p)
        m = measure(p)
    print("| row | thesis | ssdlab | error |\n|---|---:|---:|---:|")
    for row, thesis in TABLE4:
        got = m[row]
        fmt = "{:,.1f}" if isinstance(thesis, float) else "{:,.0f}"
        print(f"| {row} | {fmt.format(thesis)} | {fmt.format(got)} | {100 * (got - thesis) / thesis:+.1f}% |")

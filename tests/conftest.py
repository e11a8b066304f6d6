import csv
import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TRACES = Path(os.environ.get("SSDLAB_TRACES", ROOT.parent / "shared" / "traces"))


@pytest.fixture(scope="session")
def traces() -> Path:
    if not TRACES.is_dir():
        pytest.fail(f"real traces not found at {TRACES} (set SSDLAB_TRACES)")
    return TRACES


def ssdlab_cmd(*args, cwd=None, check=False):
    """`python -m ssdlab ARGS` in a fresh interpreter, its output captured as text (`check`: raise
    when it fails)."""
    return subprocess.run([sys.executable, "-m", "ssdlab", *args], capture_output=True, text=True, cwd=cwd, check=check)


def swept(tmp_path_factory, name, study):
    """The results folder of `study` run once (one worker, quietly) into a fresh `name`/out: a
    module's results fixture."""
    from ssdlab.sweep import run_sweep

    out = tmp_path_factory.mktemp(name) / "out"
    run_sweep(study, out, workers=1, progress=False)
    return out


# The page stream and libcachesim's LRU that the buffer tests check ssdlab against (derived here,
# independently of ssdlab's trace readers).
PAGE = 4096


def pages_of(offset, size):
    """The 4 KiB pages a request of `size` bytes at `offset` touches (none when size is 0)."""
    return list(range(offset // PAGE, (offset + size - 1) // PAGE + 1)) if size else []


def lru_hits(stream, capacity):
    """libcachesim's LRU of `capacity` pages fed the page stream `stream`: its hits."""
    import libcachesim as lcs

    cache = lcs.LRU(cache_size=capacity)
    hits = 0
    for page in stream:
        req = lcs.Request()
        req.obj_id = page
        req.obj_size = 1
        hits += bool(cache.get(req))
    return hits


def msr_requests(path):
    """(op, offset bytes, size bytes) of an MSR Cambridge CSV."""
    with open(path) as f:
        return [(row[3].strip()[0].upper(), int(row[4]), int(row[5])) for row in csv.reader(f)]


def cloud_requests(path):
    with open(path) as f:
        return [
            ("W" if row["op"].lower() == "2a" else "R", int(row["lbn"]) * 512, int(row["size"]))
            for row in csv.DictReader(f)
            if row["op"].lower() in ("28", "2a")
        ]


def blkreplay_requests(path):
    out = []
    with gzip.open(path, "rt") as f:
        for line in f:
            parts = [p.strip() for p in line.split(";")]
            if len(parts) < 4 or parts[3] not in ("R", "W"):
                continue
            try:
                out.append((parts[3], int(parts[1]) * 512, int(parts[2]) * 512))
            except ValueError:
                continue
    return out


def page_stream(reqs, ops="RW"):
    return [p for op, off, size in reqs if op in ops for p in pages_of(off, size)]

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TRACES = Path(os.environ.get("SSDLAB_TRACES", ROOT.parent / "shared" / "traces"))


@pytest.fixture(scope="session")
def traces() -> Path:
    if not TRACES.is_dir():
        pytest.fail(f"real traces not found at {TRACES} (set SSDLAB_TRACES)")
    return TRACES


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

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

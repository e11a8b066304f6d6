"""The real-devices study's cells and profiles: a held-out check, then (refit_all) a second
calibration on every point whose profile is the one written, its header carrying the check."""

import math
import tomllib
from pathlib import Path

import pytest
from ssdlab.store import load_results
from ssdlab.studies.real_devices import figures as study

EVO = Path(__file__).resolve().parents[2] / "shared" / "devices" / "samsung_evo_2tb_partition"
pytestmark = pytest.mark.skipif(not EVO.exists(), reason="../shared/devices is not beside the repository")


def _spec(refit_all: bool) -> dict:
    return {
        "study": {"name": "real-devices"},
        "calibrate": {"trials": 3, "polish": 1, "seed": 0, "refit_all": refit_all},
        "device": [{"profile": "evo", "device": "test", "folders": [str(EVO)], "held_out": ["rand*_qd64.json"]}],
    }


@pytest.mark.parametrize("refit_all", [True, False])
def test_the_shipped_profile_is_refitted_on_every_point_after_the_held_out_check(tmp_path, refit_all):
    summary = study.run(_spec(refit_all), tmp_path, workers=2, progress=False)
    assert summary.failed == 0
    df = study._axes(load_results(tmp_path))
    trials = df[df["kind"] == "trial"]
    assert (trials["fit"] == "split").sum() == 4
    assert (trials["fit"] == "all").sum() == (4 if refit_all else 0)

    # The check: the split fit's error over the two held-out points, as the report computes it.
    split = study._points(df)
    held = split[split["split"] == "held out"]
    assert sorted(held["point"]) == ["randread_4k_qd64", "randwrite_4k_qd64"]
    check = study._mean_error(held)

    prof = tmp_path / "evo.toml"
    meta = tomllib.loads(prof.read_text())["profile"]
    assert meta["held_out"]["points"] == 2 and meta["held_out"]["refitted"] is refit_all
    assert meta["held_out"]["objective"] == pytest.approx(check, abs=1e-5)
    assert meta["fit"]["points"] == (18 if refit_all else 16)
    refit = study._points(df, "refit")
    assert len(refit) == (18 if refit_all else 0)
    if refit_all:
        assert "held-out check before this fit" in prof.read_text()
        # The refitted profile's error over every point is its own best trial's objective, and
        # it starts from the split fit (with the host's CPU costs measured again, on every point),
        # so it is no worse than that fit over every point but for what those costs move.
        assert study._mean_error(refit) == pytest.approx(meta["fit"]["objective"], abs=1e-4)
        assert meta["fit"]["objective"] <= study._mean_error(split) * 1.01
    heads = study.sections(load_results(tmp_path))[0][1]
    assert ("%.1f%%" % (100 * check)) in heads and math.isfinite(check)

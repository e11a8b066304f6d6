"""hitstat2009 (seed 000): the always-padding identity on the engine, the claims file's rows and
open values, and the judges on small frames built to hold and built to fail."""

import json
import tomllib

import pandas as pd
import pytest
import ssdlab
from ssdlab import studies
from ssdlab.sweep.cells import expand_study

STUDY = studies.get("hitstat2009")
FIG = STUDY.judges()
ELAPSED = FIG.ELAPSED
THROUGHPUT = FIG.THROUGHPUT
MIB = 1 << 20


def test_always_padding_is_one_erase_and_n_programs_per_flushed_group_on_both_ftls():
    """Tables 5–6's 0.00 row (131,960 erases, 128 × 131,960 page writes in both tables) is the
    identity of padding every flushed group on a filled device: each group becomes one whole-block
    write replacing its data block (one switch-merge erase, N page writes), no log block is used,
    so BAST and FAST agree, and HitStat(adj) with a threshold of 0 is HitStat."""
    base = {
        "workload": {"kind": "desktop", "requests": 30000, "footprint_bytes": "256MiB"},
        "device": {"logical_bytes": "256MiB", "pages_per_block": 128, "op": 0.07},
        "buffer": {"bytes": "4MiB", "padding": "fixed"},
        "padding": {"fixed": {"threshold": 0.0}},
        "run": {"precondition": "fill"},
    }
    keys = ["nand.erases", "nand.programs.total", "buffer.flushed_groups", "buffer.padded_flushes", ELAPSED]
    seen = {}
    for ftl, logs in (("bast", 32), ("fast", 8)):
        for kind in ("hitstat", "hitstat-adj"):
            cfg = json.loads(json.dumps(base))
            cfg["ftl"] = {"kind": ftl, "log_blocks": logs}
            cfg["buffer"]["kind"] = kind
            m = ssdlab.simulate(cfg).metrics
            assert m["buffer.flushed_groups"] > 1000
            assert m["nand.erases"] == m["buffer.flushed_groups"] == m["ftl.erases.switch"]
            assert m["nand.programs.total"] == 128 * m["nand.erases"]
            assert m["ftl.erases.full"] == m["ftl.erases.partial"] == 0
            assert m[ELAPSED] == m["nand.erases"] * (1500 + 128 * 800)
            seen[ftl, kind] = [m[k] for k in keys]
    assert len({tuple(v) for v in seen.values()}) == 1, seen


# -- the claims file -----------------------------------------------------------------------------


def _claims():
    with open(STUDY.folder / "claims.toml", "rb") as f:
        return tomllib.load(f)


def test_every_row_has_its_kind_and_reading_and_a_judge_or_why_not():
    doc = _claims()
    ids = [c["id"] for c in doc["claim"]]
    assert len(ids) == len(set(ids)) >= 40
    for c in doc["claim"]:
        assert c["kind"] in ("seed", "extension"), c["id"]
        assert len(c["reading"]) > 40, c["id"]
        assert ("judge" in c) != ("not_judged" in c), c["id"]
        if "judge" in c:
            assert callable(getattr(FIG, c["judge"], None)), c["id"]
        reserved = {"kind", "reading", "quick", "not_judged", "robust"}
        assert not (set(c) - {"id", "figure", "claim", "seed_value", "judge"} - reserved) & reserved
    # the statements issue 37 names are all rows
    for needed in (
        "update-interval-short",
        "group-size-order",
        "sector-hit-order",
        "bast-log-util-45",
        "fab-bplru-cross-fast",
        "adj-below-hitstat-fast",
        "fast-overhead-lowest",
        "always-pad",
    ):
        assert needed in ids
    assert {c["kind"] for c in doc["claim"]} == {"seed", "extension"}


def _get(resolved, key):
    node = resolved
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(key)
        node = node[part]
    return node


def _matches(resolved, where):
    for k, want in (where or {}).items():
        try:
            v = _get(resolved, k)
        except KeyError:
            return False
        if v not in (want if isinstance(want, list) else [want]):
            return False
    return True


@pytest.mark.parametrize("quick", [True, False])
def test_open_values_name_real_keys_that_are_no_axis_of_the_cells_they_apply_to(quick, traces):
    """Each [[open]] key resolves in the cells its `where` selects, holds the study's own value
    among its values, and is never an axis of those cells; corners name opens and their values."""
    doc = _claims()
    cells = expand_study(STUDY.spec(quick=quick, traces=traces))
    opens = {o["id"]: o for o in doc["open"]}
    assert {"cluster-pages", "hitstat-period", "model-stats"} <= set(opens)
    for o in doc["open"]:
        assert o["source"] and len(o["values"]) >= 2, o["id"]
        hit = [c for c in cells if _matches(c.resolved, o.get("where"))]
        assert hit, f"{o['id']}: `where` selects no cell"
        for c in hit:
            assert o["key"] not in c.values, f"{o['id']}: {o['key']} is an axis of cell {c.index}"
            assert _get(c.resolved, o["key"]) in o["values"], o["id"]
        # every value is accepted by the configuration
        for v in o["values"]:
            ssdlab.api.Config(hit[0].config).set(o["key"], v).resolved()
    for corner in doc.get("corner", []):
        for oid, v in corner["set"].items():
            assert v in opens[oid]["values"], (corner["id"], oid)


# -- judges on frames built to hold and to fail --------------------------------------------------

BUFFER_AXES = json.dumps(sorted(FIG.BUFFER_AXES))
LOG_AXES = json.dumps(["buffer.kind", "ftl.log_blocks"])


def _row(axes, **kv):
    base = {
        "status": "ok",
        "axes": axes,
        "device.logical_bytes": 20 << 30,
        "device.pages_per_block": 128,
        "device.page_bytes": 4096,
        "nand.program_us": 800.0,
        "nand.erase_us": 1500.0,
        "buffer.padding": "fixed",
        "ftl.erases.full": 0.0,
        "nand.erases": 1.0,
        "histograms": None,
    }
    base.update(kv)
    base["cell"] = "/".join(
        str(base.get(k))
        for k in ("ftl.kind", "buffer.kind", "buffer.bytes", "ftl.log_blocks", "padding.fixed.threshold")
    )
    return base


def _buffers(values, logs=None):
    """A buffer-grid frame: values[(ftl, kind, MiB)] = {metric: value}."""
    logs = logs or {"bast": 2048, "fast": 128}
    return pd.DataFrame(
        [
            _row(
                BUFFER_AXES,
                **{"ftl.kind": f, "buffer.kind": k, "buffer.bytes": s * MIB, "ftl.log_blocks": logs[f]},
                **m,
            )
            for (f, k, s), m in values.items()
        ]
    )


def _hist(name, pairs):
    return json.dumps({name: pairs})


def test_full_merge_share_judges_both_hitstat_variants():
    def frame(adj_full):
        full = {"fab": 80, "bplru": 70, "hitstat": 15, "hitstat-adj": adj_full}
        return _buffers(
            {
                ("fast", k, 32): {
                    "nand.erases": 100.0,
                    "ftl.erases.full": float(v),
                    "buffer.flushed_groups": 50.0,
                    "buffer.padded_flushes": 10.0,
                }
                for k, v in full.items()
            }
        )

    claim = {"at_most": 0.5}
    assert FIG.full_merge_share(frame(16), claim).holds is True
    out = FIG.full_merge_share(frame(40), claim)  # HitStat far below, HitStat(adj) not
    assert out.holds is False and "HitStat(adj) (0.57×)" in out.why and "HitStat (0." not in out.why


def test_crossing_is_interpolated_and_held_to_its_band():
    claim = {"ftl": "fast", "near_mib": 20, "factor": 1.5}

    def frame(diffs):  # FAB's throughput minus BPLRU's per size (MiB)
        vals = {}
        for s, d in diffs.items():
            vals["fast", "fab", s] = {THROUGHPUT: 1.0 + d}
            vals["fast", "bplru", s] = {THROUGHPUT: 1.0}
        return _buffers(vals)

    out = FIG.crossing(frame({8: -0.2, 16: -0.1, 24: 0.1, 32: 0.2}), claim)
    assert out.holds is True and "≈ 19.6 MiB" in out.measured  # halfway in log size: sqrt(16 × 24)
    out = FIG.crossing(frame({8: -0.2, 32: -0.1, 40: 0.1}), claim)
    assert out.holds is False and "35.8 MiB" in out.measured and "outside 13.3–30.0 MiB" in out.why
    out = FIG.crossing(frame({8: -0.2, 32: -0.1}), claim)  # BPLRU ahead throughout
    assert out.holds is False and "no crossing" in out.measured
    out = FIG.crossing(frame({8: 0.2, 32: -0.1}), claim)  # the other way round is no overtaking by FAB
    assert out.holds is False and "no crossing" in out.measured


def test_update_interval_and_group_size_shares_read_the_histograms():
    interval = "buffer.group_update_interval"
    sizes = "buffer.flushed_group_pages"

    def frame(fab, bplru, hitstat):  # (share of intervals < 2048, share of groups >= 40 pages)
        vals = {}
        for k, (short, big) in {"fab": fab, "bplru": bplru, "hitstat": hitstat}.items():
            h = {
                interval: [[1024, 100 * short], [2048, 100 * (1 - short)]],
                sizes: [[8, 100 * (1 - big)], [40, 100 * big]],
            }
            vals["bast", k, 32] = {"histograms": json.dumps(h)}
        return _buffers(vals)

    seedlike = frame((0.59, 0.18), (0.29, 0.26), (0.26, 0.39))
    out = FIG.update_interval_short(seedlike, {"below": 2048, "ratio": 1.5})
    assert out.holds is True and "FAB 59.0%, BPLRU 29.0%, HitStat 26.0%" in out.measured
    assert FIG.group_size_order(seedlike, {"at_least": 40}).holds is True
    flat = frame((0.40, 0.30), (0.30, 0.26), (0.26, 0.20))
    assert FIG.update_interval_short(flat, {"below": 2048, "ratio": 1.5}).holds is False  # 1.33×
    assert FIG.group_size_order(flat, {"at_least": 40}).holds is False  # BPLRU's share above HitStat's


def test_update_interval_growth_needs_fab_to_change_little():
    interval = "buffer.group_update_interval"

    def frame(fab, bplru):  # share of intervals < 2048 at 2 and 128 MiB
        vals = {}
        for k, shares in {"fab": fab, "bplru": bplru}.items():
            for s, short in zip((2, 128), shares, strict=True):
                h = {interval: [[1024, 1000 * short], [4096, 1000 * (1 - short)]]}
                vals["bast", k, s] = {"histograms": json.dumps(h), "buffer.group_update_interval.mean": 1.0}
        return _buffers(vals)

    claim = {"below": 2048, "fab_at_most": 0.5}
    assert FIG.update_interval_growth(frame((0.6, 0.55), (0.5, 0.2)), claim).holds is True
    out = FIG.update_interval_growth(frame((0.8, 0.6), (0.5, 0.2)), claim)
    assert out.holds is False and "0.67× BPLRU's" in out.why
    assert FIG.update_interval_growth(frame((0.6, 0.6), (0.2, 0.3)), claim).holds is False  # BPLRU's shorten


def test_fab_cdf_step_is_the_largest_share_at_one_size():
    def frame(pairs):
        return _buffers({("bast", "fab", 32): {"histograms": _hist("buffer.flushed_group_pages", pairs)}})

    out = FIG.fab_cdf_step(frame([[2, 5], [4, 40], [17, 16], [30, 39]]), {"step": 0.08})
    assert out.holds is True and "rises most at 4 pages: 5.0% → 45.0% (40.0 points" in out.measured
    assert FIG.fab_cdf_step(frame([[2, 5], [4, 40], [17, 16], [30, 39]]), {"step": 0.5}).holds is False
    out = FIG.fab_cdf_step(frame([[k, 1] for k in range(1, 101)]), {"step": 0.08})
    assert out.holds is False  # spread evenly: no size holds 8%


def test_sector_hit_order_reads_slightly_as_a_band():
    def frame(hitstat):
        return _buffers(
            {
                ("bast", k, 32): {"buffer.sector_hit_ratio": v}
                for k, v in {"fab": 0.05, "bplru": 0.10, "hitstat": hitstat}.items()
            }
        )

    claim = {"slightly": 0.1}
    assert FIG.sector_hit_order(frame(0.095), claim).holds is True
    out = FIG.sector_hit_order(frame(0.08), claim)
    assert out.holds is False and "20.0% below BPLRU" in out.why and "40% of the way" in out.why
    assert FIG.sector_hit_order(frame(0.11), claim).holds is False  # above BPLRU: the order fails


def test_adj_vs_hitstat_below_up_to_16_mib_and_close_above():
    def frame(rel):  # HitStat(adj)'s elapsed time over HitStat's, per size
        vals = {}
        for s, r in rel.items():
            vals["fast", "hitstat", s] = {ELAPSED: 100.0}
            vals["fast", "hitstat-adj", s] = {ELAPSED: 100.0 * (1 + r)}
        return _buffers(vals)

    claim = {"ftl": "fast", "up_to": "16MiB", "close": 0.05}
    assert FIG.adj_vs_hitstat(frame({8: -0.1, 16: -0.01, 32: 0.04, 64: -0.03}), claim).holds is True
    out = FIG.adj_vs_hitstat(frame({8: -0.1, 16: 0.01, 32: 0.04}), claim)
    assert out.holds is False and "16 MiB (+1.0%)" in out.why
    out = FIG.adj_vs_hitstat(frame({8: -0.1, 16: -0.01, 96: 0.06}), claim)
    assert out.holds is False and "96 MiB (+6.0%)" in out.why


def test_shrinks_least_compares_both_counts():
    def frame(bplru_fall_programs):
        vals = {}
        for k, fall in {"bplru": (0.1, bplru_fall_programs), "fab": (0.5, 0.5), "hitstat": (0.6, 0.5)}.items():
            vals["bast", k, 2] = {"nand.erases": 100.0, "nand.programs.total": 100.0}
            vals["bast", k, 128] = {"nand.erases": 100.0 * (1 - fall[0]), "nand.programs.total": 100.0 * (1 - fall[1])}
        return _buffers(vals)

    claim = {"ftl": "bast", "policy": "bplru", "others": ["fab", "hitstat"], "at_most": 0.5}
    assert FIG.shrinks_least(frame(0.2), claim).holds is True
    assert FIG.shrinks_least(frame(0.3), claim).holds is False  # page writes fall 0.6× the others'


def _padding(ftl, kind, elapsed, stats=None):
    """Tables 5–6 frame: fixed thresholds -> elapsed (and merge statistics), plus a model cell."""
    axes = json.dumps(["padding.fixed.threshold"])
    rows = []
    for t, e in elapsed.items():
        extra = {"ftl.model_samples": 1.0, **(stats or {}).get(t, {})}
        rows.append(
            _row(axes, **{"ftl.kind": ftl, "buffer.kind": kind, "padding.fixed.threshold": t, ELAPSED: e}, **extra)
        )
    rows.append(
        _row(
            json.dumps(["ftl.model_stats"]),
            **{
                "ftl.kind": ftl,
                "buffer.kind": kind,
                "buffer.padding": "model",
                "ftl.model_stats": "seed",
                ELAPSED: 1.0,
            },
        )
    )
    return pd.DataFrame(rows)


def test_padding_interior_best_needs_both_ends_well_above_it():
    claim = {"ftl": "bast", "at_least": 0.05}
    seedlike = _padding("bast", "hitstat", {1.0: 12817.5, 0.16: 11699.6, 0.06: 12304.9, 0.0: 13710.6})
    out = FIG.padding_interior_best(seedlike, claim)
    assert out.holds is True and "best fixed 0.16" in out.measured and "+9.6%" in out.measured
    never_best = _padding("bast", "hitstat", {1.0: 100.0, 0.16: 101.0, 0.0: 130.0})
    assert FIG.padding_interior_best(never_best, claim).holds is False
    flat = _padding("bast", "hitstat", {1.0: 103.0, 0.16: 100.0, 0.0: 130.0})
    assert FIG.padding_interior_best(flat, claim).holds is False  # never padding only 3% slower


def test_stat_ends_skip_thresholds_without_samples():
    e = {1.0: 5.0, 0.5: 4.0, 0.07: 3.0, 0.03: 4.0, 0.0: 6.0}
    stats = {1.0: {"ftl.r_db": 3.98}, 0.5: {"ftl.r_db": 5.75}, 0.07: {"ftl.r_db": 13.14}, 0.03: {"ftl.r_db": 6.77}}
    stats[0.0] = {"ftl.r_db": 0.0, "ftl.model_samples": 0.0}  # always padding: no merge sample
    claim = {"ftl": "fast", "stat": "ftl.r_db", "shape": "max"}
    out = FIG.stat_ends(_padding("fast", "hitstat-adj", e, stats), claim)
    assert out.holds is True and "6.77 at 0.03" in out.measured and "13.14 at 0.07" in out.measured
    stats[0.03] = {"ftl.r_db": 14.0}  # rises to the end: not a hump
    assert FIG.stat_ends(_padding("fast", "hitstat-adj", e, stats), claim).holds is False


def test_lowest_in_most_counts_the_log_block_settings():
    def frame(wins):  # wins: log blocks where HitStat is lowest on BAST
        rows = []
        for n in (64, 128, 256, 512):
            for k in ("fab", "bplru", "hitstat"):
                e = 90.0 if (k == "hitstat") == (n in wins) else 100.0 + (k == "bplru")
                rows.append(
                    _row(
                        LOG_AXES,
                        **{
                            "ftl.kind": "bast",
                            "buffer.kind": k,
                            "buffer.bytes": 32 * MIB,
                            "ftl.log_blocks": n,
                            ELAPSED: e,
                        },
                    )
                )
        return pd.DataFrame(rows)

    claim = {"policies": {"bast": "hitstat"}}
    assert FIG.lowest_in_most(frame({64, 128, 256}), claim).holds is True
    out = FIG.lowest_in_most(frame({64, 128}), claim)  # two of four is not most
    assert out.holds is False and "lowest in 2 of 4" in out.measured

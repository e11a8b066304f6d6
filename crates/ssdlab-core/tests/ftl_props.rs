//! Property tests of the FTLs (`page`, `block`, `bast`, `fast`, `lines`): after any sequence of
//! single-page writes, multi-page units, whole-block units (padded or full, with or without
//! filler) and trims, every LPN maps to its latest version and every block's valid count
//! matches its pages (`Ftl::check_integrity`, run after every step).
//!
//! Cases default to 256 per FTL (≤ 200 steps each) with a fixed seed, so the suite is deterministic and fast;
//! `PROPTEST_CASES=N` and `PROPTEST_RNG_SEED=S` override both (e.g. a longer local run:
//! `PROPTEST_CASES=5000 cargo test -p ssdlab-core --test ftl_props`).

use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use ssdlab_core::ftl::bast::{BastFtl, Params};
use ssdlab_core::ftl::block::BlockFtl;
use ssdlab_core::ftl::fast::FastFtl;
use ssdlab_core::ftl::hybrid::ModelStats;
use ssdlab_core::ftl::lines::{self, LinesFtl};
use ssdlab_core::ftl::log_stats::Utilisation;
use ssdlab_core::ftl::page::PageFtl;
use ssdlab_core::ftl::{Ftl, Shape, Unit, UnitPage};
use ssdlab_core::gc::VictimPolicy;
use ssdlab_core::nand::{Cause, Nand};
use ssdlab_core::placement::{none::FixedLines, size_ema, Classifier};
use ssdlab_core::units::Geometry;

fn config() -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = 256;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        c.rng_seed = RngSeed::Fixed(0x55d1_ab00);
    }
    // The seed is fixed and a failure prints its shrunk input: no regression files.
    c.failure_persistence = None;
    c
}

/// One step of a run, in units the geometry resolves (`lbn` and offsets are taken modulo).
#[derive(Clone, Debug)]
enum Step {
    /// One page.
    Page { lbn: u64, offset: u32 },
    /// A run of consecutive pages of one block.
    Run { lbn: u64, start: u32, len: u32 },
    /// A whole-block unit: the host pages of `mask` (bit i = offset i; an empty mask writes
    /// offset 0), plus, when `pad`, a Pad copy of every other offset holding data.
    /// Without `pad` it is sent as a whole block only when `mask` covers the block.
    Group {
        lbn: u64,
        mask: u64,
        pad: bool,
        fill: bool,
    },
    /// Discard one page.
    Trim { lbn: u64, offset: u32 },
}

fn step() -> impl Strategy<Value = Step> {
    // Most traffic on a few hot blocks, so that logs fill and merges and GC happen.
    let lbn = prop_oneof![0u64..3, any::<u64>()];
    prop_oneof![
        4 => (lbn.clone(), any::<u32>()).prop_map(|(lbn, offset)| Step::Page { lbn, offset }),
        2 => (lbn.clone(), any::<u32>(), any::<u32>())
            .prop_map(|(lbn, start, len)| Step::Run { lbn, start, len }),
        2 => (lbn.clone(), any::<u64>(), any::<bool>(), any::<bool>())
            .prop_map(|(lbn, mask, pad, fill)| Step::Group { lbn, mask, pad, fill }),
        1 => (lbn, any::<u32>()).prop_map(|(lbn, offset)| Step::Trim { lbn, offset }),
    ]
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(step(), 1..200)
}

fn geo(ppb: u64, logical_blocks: u64, physical_blocks: u64) -> Geometry {
    Geometry {
        page_bytes: 4096,
        pages_per_block: ppb,
        logical_pages: logical_blocks * ppb,
        physical_blocks,
    }
}

/// Apply `steps` to `f`, checking the whole mapping after each one against the latest
/// version of every LPN (0 = never written or trimmed).
fn run(
    f: &mut dyn Ftl,
    nand: &mut Nand,
    g: &Geometry,
    streams: u32,
    steps: &[Step],
) -> Result<(), TestCaseError> {
    let ppb = g.pages_per_block as u32;
    let lbns = g.logical_blocks();
    let mut latest = vec![0u32; g.logical_pages as usize];
    let mut version = 0u32;
    for (i, s) in steps.iter().enumerate() {
        let (lbn, host, pad, shape): (u64, Vec<u32>, bool, Shape) = match *s {
            Step::Page { lbn, offset } => (lbn, vec![offset % ppb], false, Shape::Pages),
            Step::Run { lbn, start, len } => {
                let start = start % ppb;
                let len = 1 + len % (ppb - start);
                (lbn, (start..start + len).collect(), false, Shape::Pages)
            }
            Step::Group {
                lbn,
                mask,
                pad,
                fill,
            } => {
                let mut host: Vec<u32> = (0..ppb).filter(|o| mask >> o & 1 == 1).collect();
                if host.is_empty() {
                    host.push(0);
                }
                let shape = if pad || host.len() == ppb as usize {
                    Shape::Block { fill }
                } else {
                    Shape::Pages
                };
                (lbn, host, pad, shape)
            }
            Step::Trim { lbn, offset } => {
                let lpn = (lbn % lbns) * ppb as u64 + (offset % ppb) as u64;
                f.trim(lpn);
                latest[lpn as usize] = 0;
                prop_assert!(
                    !f.is_mapped(lpn),
                    "step {i}: LPN {lpn} mapped after its trim"
                );
                if let Err(e) = f.check_integrity(&latest) {
                    return Err(TestCaseError::fail(format!("step {i} ({s:?}): {e}")));
                }
                continue;
            }
        };
        let lbn = lbn % lbns;
        let first = lbn * ppb as u64;
        let mut pages = Vec::new();
        for o in 0..ppb {
            let lpn = (first + o as u64) as usize;
            if host.contains(&o) {
                version += 1;
                latest[lpn] = version;
                pages.push(UnitPage::new(o, version, Cause::Host));
            } else if pad && latest[lpn] != 0 {
                // Padding re-writes the page's current data, read from flash.
                prop_assert_eq!(
                    f.version_of(lpn as u64),
                    latest[lpn],
                    "step {}: LPN {}",
                    i,
                    lpn
                );
                pages.push(UnitPage::new(o, latest[lpn], Cause::Pad));
            }
        }
        let hint = version % streams.max(1);
        if let Err(e) = f.write_unit(Unit::new(lbn, &pages, shape).with_hint(hint), nand) {
            return Err(TestCaseError::fail(format!("step {i} ({s:?}): write: {e}")));
        }
        if let Err(e) = f.check_integrity(&latest) {
            return Err(TestCaseError::fail(format!("step {i} ({s:?}): {e}")));
        }
    }
    for (lpn, &v) in latest.iter().enumerate() {
        prop_assert_eq!(f.is_mapped(lpn as u64), v != 0, "LPN {}", lpn);
        prop_assert_eq!(f.version_of(lpn as u64), v, "LPN {}", lpn);
    }
    Ok(())
}

/// Total erases reported by the FTL's counters equal the NAND's.
fn erases_agree(f: &dyn Ftl, nand: &Nand) -> Result<(), TestCaseError> {
    let erases: u64 = f
        .counters()
        .iter()
        .filter(|(k, _)| k.starts_with("ftl.erases"))
        .map(|x| x.1)
        .sum();
    if f.counters()
        .iter()
        .any(|(k, _)| k.starts_with("ftl.erases"))
    {
        prop_assert_eq!(erases, nand.counters.erases);
    }
    Ok(())
}

/// Seed 002's log-block statistics are consistent: one requested cluster per unit, hits and
/// misses among them, every merged log record counted once in each histogram, used pages within
/// the merged records' capacity (and, counting written pages, at least one page per reference).
fn log_stats_agree(
    f: &dyn Ftl,
    ppb: u64,
    util: Utilisation,
    steps: &[Step],
) -> Result<(), TestCaseError> {
    let counters = f.counters();
    let c = |k: &str| counters.iter().find(|(n, _)| *n == k).unwrap().1;
    let units = steps
        .iter()
        .filter(|s| !matches!(s, Step::Trim { .. }))
        .count() as u64;
    prop_assert_eq!(c("ftl.log.requested_clusters"), units);
    prop_assert!(c("ftl.log.hits") + c("ftl.log.misses") <= units);
    let never = c("ftl.log.merged_never_rereferenced");
    let reref = c("ftl.log.merged_rereferenced_fits") + c("ftl.log.merged_rereferenced_overflows");
    let hists = f.histograms();
    let count = |k: &str| -> u64 {
        hists
            .iter()
            .find(|(n, _)| *n == k)
            .unwrap()
            .1
            .iter()
            .map(|x| x.1)
            .sum()
    };
    prop_assert_eq!(count("ftl.log.references_at_merge"), never + reref);
    prop_assert_eq!(count("ftl.log.utilisation_at_merge"), never + reref);
    prop_assert_eq!(count("ftl.log.utilisation_at_merge_rereferenced"), reref);
    let used = c("ftl.log.used_pages_at_merge");
    let used_reref = c("ftl.log.used_pages_at_merge_rereferenced");
    prop_assert!(used_reref <= used && used <= (never + reref) * ppb);
    prop_assert!(used_reref <= reref * ppb);
    if util == Utilisation::Written {
        prop_assert!(used_reref >= 2 * reref && used >= never + 2 * reref);
    }
    Ok(())
}

/// A hybrid FTL's padding-model statistics and seed 002 utilisation reading.
fn model_and_utilisation() -> impl Strategy<Value = (ModelStats, Utilisation)> {
    let util = prop_oneof![Just(Utilisation::Written), Just(Utilisation::Valid)];
    (model(), util)
}

/// A page FTL: pages per block, logical blocks, victim policy, host streams, a GC frontier apart.
fn page_shape() -> impl Strategy<Value = (u64, u64, VictimPolicy, u32, bool)> {
    let policy = prop_oneof![
        Just(VictimPolicy::Greedy),
        Just(VictimPolicy::CostBenefit),
        Just(VictimPolicy::Fifo)
    ];
    (ppb(), 1u64..8, policy, 1u32..3, any::<bool>())
}

/// `run` of a block-mapped or hybrid FTL (one stream) on a fresh NAND, then its erase counts
/// and, given the utilisation reading of its seed 002 log statistics, those checked too.
fn run_hybrid(
    f: &mut dyn Ftl,
    g: &Geometry,
    steps: &[Step],
    util: Option<Utilisation>,
) -> Result<(), TestCaseError> {
    let mut n = Nand::new(g.physical_blocks);
    run(f, &mut n, g, 1, steps)?;
    erases_agree(f, &n)?;
    match util {
        Some(util) => log_stats_agree(f, g.pages_per_block, util, steps),
        None => Ok(()),
    }
}

fn ppb() -> impl Strategy<Value = u64> {
    prop_oneof![Just(2u64), Just(4), Just(8)]
}

/// Pages per block and logical blocks of a small device.
fn device() -> impl Strategy<Value = (u64, u64)> {
    (ppb(), 1u64..8)
}

fn model() -> impl Strategy<Value = ModelStats> {
    prop_oneof![Just(ModelStats::Seed), Just(ModelStats::AllMerges)]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn page_ftl_keeps_latest_versions(
        (ppb, lbns, policy, streams, separate_gc) in page_shape(),
        // 0 = automatic; 1 is rejected by the configuration (GC needs a free block to copy
        // into), so the FTL is only ever built with 0 or ≥ 2.
        gc_free in prop_oneof![Just(0u64), 2u64..4],
        extra in 0u64..3,
        steps in steps(),
    ) {
        // The smallest pool the page FTL accepts, plus `extra` blocks.
        let frontiers = streams as u64 + separate_gc as u64;
        let threshold = if gc_free == 0 { frontiers + 2 } else { gc_free };
        let g = geo(ppb, lbns, lbns + threshold + frontiers + 1 + extra);
        let mut f = PageFtl::new(&g, policy, gc_free, streams, separate_gc, true).unwrap();
        let mut n = Nand::new(g.physical_blocks);
        run(&mut f, &mut n, &g, streams, &steps)?;
    }

    /// The line FTL: pages served from its ring until their batch is programmed, stale ring
    /// entries programmed dead, padding filler, pblk's or another victim choice, and placements
    /// that spread host pages and GC copies over several lines (with or without a GC line, GC copies
    /// written at once or through the ring with the host entries, a GC request at a time), under
    /// every GC pacing (pblk's rate limiter, burst, the garbage-fraction trigger).
    #[test]
    fn lines_ftl_keeps_latest_versions(
        (ppb, lbns) in device(),
        victim in prop_oneof![Just("pblk"), Just("greedy"), Just("cost-benefit"), Just("fifo")],
        placement in 0usize..5,
        batch_pages in 1u32..10,
        gc_line in any::<bool>(),
        extra in 0u64..3,
        gc in prop_oneof![Just("pblk"), Just("burst"), Just("gp")],
        gc_write in prop_oneof![Just("auto"), Just("ring"), Just("direct")],
        steps in steps(),
    ) {
        let classifier: Box<dyn Classifier> = match placement {
            0 => Box::new(FixedLines { gc: 0 }),
            1 => Box::new(FixedLines { gc: 1 }),
            // Tags 0..3 (the hint) are the classes; GC copies stay in their source's line.
            2 => Box::new(size_ema::SizeEma::new(
                &size_ema::Params { gc: "source".into(), ..Default::default() },
                false,
            )),
            // GC copies through the ring, per entry or averaged into the host entries' batches.
            k => Box::new(size_ema::SizeEma::new(
                &size_ema::Params { gc: "ring".into(), ..Default::default() },
                k == 4,
            )),
        };
        let open = classifier.classes() as u64 + gc_line as u64;
        let p = lines::Params {
            victim: victim.into(),
            batch_pages,
            gc_line,
            gc: gc.into(),
            gc_write: gc_write.into(),
            luns: (ppb as u32 / 2).max(1),
            // A ring of 16 windows or more: on these few lines host writes then wait only at
            // the reserve, below which closed lines hold garbage. With fewer windows they wait
            // below up to `high` free lines, which several open lines of a tiny device may
            // already take with nothing to collect: pblk would wait forever, and ssdlab stops.
            write_buffer_size: 1024,
            ..Default::default()
        };
        // pblk takes an over-provisioning holding its reserve (⌈100 / OP%⌉ lines, 2 at OP ≥
        // 50%); paced GC needs the open lines and two more.
        let spare = if gc == "pblk" { lbns + open + 4 } else { p.spare_lines(open) };
        let g = geo(ppb, lbns, lbns + spare + extra);
        let mut f = LinesFtl::new(&g, &p, classifier, true).unwrap();
        let mut n = Nand::new(g.physical_blocks);
        run(&mut f, &mut n, &g, 4, &steps)?;
    }

    /// The page FTL's bulk precondition leaves the state whole-block writes of every logical
    /// block would: same mapping, counters and wear, then and after the same writes with GC.
    #[test]
    fn page_ftl_bulk_fill_equals_block_writes(
        (ppb, lbns, policy, streams, separate_gc) in page_shape(),
        extra in 0u64..3,
        writes in prop::collection::vec((any::<u64>(), any::<u32>(), any::<u32>()), 0..200),
    ) {
        let frontiers = streams as u64 + separate_gc as u64;
        let g = geo(ppb, lbns, lbns + 2 * frontiers + 3 + extra);
        let build = || (PageFtl::new(&g, policy, 0, streams, separate_gc, false).unwrap(), Nand::new(g.physical_blocks));
        let (mut bulk, mut bn) = build();
        prop_assert!(bulk.fill_bulk(&mut bn).unwrap());
        let (mut each, mut en) = build();
        let p = g.pages_per_block as u32;
        for lbn in 0..lbns {
            let unit: Vec<UnitPage> = (0..p).map(|offset| UnitPage::new(offset, 0, Cause::Host)).collect();
            each.write_unit(Unit::new(lbn, &unit, Shape::Block { fill: false }), &mut en).unwrap();
        }
        let same = |a: &PageFtl, an: &Nand, b: &PageFtl, bn: &Nand| {
            (0..g.logical_pages).all(|l| a.ppn_of(l) == b.ppn_of(l))
                && a.counters() == b.counters()
                && an.counters == bn.counters
                && an.erase_counts == bn.erase_counts
        };
        prop_assert!(same(&bulk, &bn, &each, &en), "after the fill");
        for (i, &(lbn, offset, hint)) in writes.iter().enumerate() {
            let page = [UnitPage::new(offset % p, 0, Cause::Host)];
            bulk.write_unit(Unit::pages(lbn % lbns, &page).with_hint(hint), &mut bn).unwrap();
            each.write_unit(Unit::pages(lbn % lbns, &page).with_hint(hint), &mut en).unwrap();
            prop_assert!(same(&bulk, &bn, &each, &en), "after write {i}");
        }
        bulk.check_integrity(&[]).unwrap();
        // Not on a device that has been written.
        prop_assert!(!bulk.fill_bulk(&mut bn).unwrap());
    }

    #[test]
    fn block_ftl_keeps_latest_versions(
        (ppb, lbns) in device(),
        extra in 1u64..3,
        steps in steps(),
    ) {
        let g = geo(ppb, lbns, lbns + extra);
        run_hybrid(&mut BlockFtl::new(&g, true).unwrap(), &g, &steps, None)?;
    }

    #[test]
    fn bast_ftl_keeps_latest_versions(
        (ppb, lbns) in device(),
        logs in 1u64..4,
        single in any::<bool>(),
        chain_limit in 1u32..4,
        lookahead in 1u32..4,
        (model, util) in model_and_utilisation(),
        steps in steps(),
    ) {
        let g = geo(ppb, lbns, lbns + logs + 1);
        let variant = if single { "single" } else { "chain" };
        let p = Params::new(variant, chain_limit, lookahead);
        let mut f = BastFtl::new(&g, logs, &p, model, util, true).unwrap();
        run_hybrid(&mut f, &g, &steps, Some(util))?;
    }

    #[test]
    fn fast_ftl_keeps_latest_versions(
        (ppb, lbns) in device(),
        logs in 2u64..6,
        (model, util) in model_and_utilisation(),
        steps in steps(),
    ) {
        let g = geo(ppb, lbns, lbns + logs + 1);
        let mut f = FastFtl::new(&g, logs, model, util, true).unwrap();
        run_hybrid(&mut f, &g, &steps, Some(util))?;
    }
}

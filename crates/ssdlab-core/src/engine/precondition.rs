//! The campaign's preconditioning (`run.precondition`), done once per device: the device a
//! `fill-random` leaves behind (FTL and NAND state, integrity versions) is kept, and a later run
//! in this process on the same device starts from a copy of it instead of writing it again.
//!
//! "The same device" is every key of the resolved configuration but what the runs on it differ
//! in: the workload and flows, the host, and the run's keys other than its seed (which seeds the
//! random writes), its precondition and integrity checking. A calibration simulates many fio
//! points on one candidate device; they share one preconditioning. The copy is exact (a test
//! compares a run from it with a run that wrote it), kept only for devices of at most
//! [`MAX_CACHED_PAGES`] logical pages (its memory stays in use) on the page FTL without
//! placement (the FTL whose state it copies), and only the last device's: runs that alternate
//! between two devices write each every time.

use super::flush::FtlBox;
use super::sim::Sim;
use crate::config::{Config, RunConfig};
use crate::error::Result;
use crate::ftl::page::PageFtl;
use crate::nand::Nand;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The largest device whose preconditioned state is kept (16 GiB of 4 KiB pages: some 100 MiB
/// of FTL tables).
pub const MAX_CACHED_PAGES: u64 = 1 << 22;

/// A preconditioned device's state.
struct State {
    ftl: PageFtl,
    nand: Nand,
    latest: Vec<u32>,
    version: u32,
}

/// The last device preconditioned, by its key; its state once written (None while the first
/// run on it writes it).
struct Entry {
    key: String,
    state: Arc<Mutex<Option<State>>>,
}

static CACHE: Mutex<Option<Entry>> = Mutex::new(None);
static HITS: AtomicU64 = AtomicU64::new(0);

/// Runs that started from a kept preconditioned device (so far, in this process).
pub fn cache_hits() -> u64 {
    HITS.load(Ordering::Relaxed)
}

/// Forget the kept device (its memory is freed once no run copies from it).
pub fn clear_cache() {
    *lock(&CACHE) = None;
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Precondition `sim` as `resolved.run.precondition` says, from the kept device when it is this one.
pub(super) fn precondition(sim: &mut Sim, resolved: &Config) -> Result<()> {
    // Only a device whose FTL can be copied goes through the cache (and its lock): runs on
    // other FTLs write their own in parallel.
    let copyable = matches!(&sim.be.ftl, FtlBox::Page(p) if p.copyable());
    if resolved.run.precondition != "fill-random"
        || sim.geo.logical_pages > MAX_CACHED_PAGES
        || !copyable
    {
        return write(sim, resolved);
    }
    let key = key(sim, resolved);
    let slot = {
        let mut cache = lock(&CACHE);
        match &*cache {
            Some(e) if e.key == key => e.state.clone(),
            _ => {
                let state = Arc::new(Mutex::new(None));
                *cache = Some(Entry {
                    key,
                    state: state.clone(),
                });
                state
            }
        }
    };
    // Held while the first run writes the device: the others wait for it rather than write it too.
    let mut kept = lock(&slot);
    if let Some(s) = kept.as_ref() {
        if let Some(ftl) = s.ftl.try_clone() {
            sim.be.ftl = FtlBox::Page(Box::new(ftl));
            sim.be.nand = s.nand.clone();
            sim.latest.clone_from(&s.latest);
            sim.version = s.version;
            HITS.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
    }
    write(sim, resolved)?;
    let ftl = match &sim.be.ftl {
        FtlBox::Page(p) => p.try_clone(),
        FtlBox::Other(_) => None,
    };
    *kept = ftl.map(|ftl| State {
        ftl,
        nand: sim.be.nand.clone(),
        latest: sim.latest.clone(),
        version: sim.version,
    });
    Ok(())
}

/// Write the device as the campaign did: every logical page once in order, then (`fill-random`)
/// twice the logical pages at random.
fn write(sim: &mut Sim, resolved: &Config) -> Result<()> {
    if resolved.run.fills() {
        sim.precondition_fill()?;
    }
    if resolved.run.precondition == "fill-random" {
        sim.precondition_random(2 * sim.geo.logical_pages, resolved.run.seed)?;
    }
    Ok(())
}

/// What makes two runs' preconditioned devices the same (module docstring).
fn key(sim: &Sim, resolved: &Config) -> String {
    let mut device = resolved.clone();
    device.workload = Default::default();
    device.flows.clear();
    device.host = Default::default();
    device.warnings.clear();
    device.run = RunConfig {
        seed: resolved.run.seed,
        precondition: resolved.run.precondition.clone(),
        check_integrity: resolved.run.check_integrity,
        ..Default::default()
    };
    format!("{device:?} {:?} {}", sim.geo, sim.check)
}

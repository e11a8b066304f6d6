//! Traces that interleave several devices or volumes (MSR `DiskNumber`, DiskSim `devno`, Tencent
//! `VolumeID`, blkparse `maj,min`, SYSTOR `LUN`): each request's `dev`.
//!
//! Replayed as they are (`merge`), every volume's addresses fall into one address space and
//! alias: offset 4096 of disk 0 and of disk 1 become the same page. `separate` gives each volume
//! its own range of the device, in the order the volumes are first seen, each as long as the
//! volume's highest address rounded up to the alignment (a logical block, so that no two
//! volumes share one). A reader counts the requests of every volume it hands out, so that a
//! run can say when it merged several without being told to.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::TraceOptions;
use crate::error::{Result, SimError};

/// How the volumes of a trace meet the device (`workload.volumes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Volumes {
    /// One address space: volumes' addresses alias.
    Merge,
    /// Each volume its own range, in the order first seen.
    Separate,
}

impl Volumes {
    /// The names in configuration files.
    pub const NAMES: &'static [&'static str] = &["merge", "separate"];
}

/// The requests a reader handed out of one volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct VolumeCount {
    pub dev: u32,
    pub requests: u64,
}

/// One volume's range of the device under `separate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct VolumeRange {
    pub dev: u32,
    /// Where the volume's offset 0 lands.
    pub base_bytes: u64,
    /// Its highest address (offset + size), rounded up to the alignment.
    pub span_bytes: u64,
}

/// A value per volume, in the order the volumes are first seen.
#[derive(Clone, Debug)]
pub(crate) struct ByVolume<T> {
    items: Vec<(u32, T)>,
    index: FxHashMap<u32, usize>,
}

impl<T> Default for ByVolume<T> {
    fn default() -> Self {
        ByVolume {
            items: Vec::new(),
            index: FxHashMap::default(),
        }
    }
}

impl<T: Default> ByVolume<T> {
    /// Volume `dev`'s value (a default one the first time).
    pub(crate) fn get(&mut self, dev: u32) -> &mut T {
        let next = self.items.len();
        let i = *self.index.entry(dev).or_insert(next);
        if i == next {
            self.items.push((dev, T::default()));
        }
        &mut self.items[i].1
    }
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
    /// Every volume with its value, in the order first seen.
    pub(crate) fn into_vec(self) -> Vec<(u32, T)> {
        self.items
    }
}

/// What a reader counts of the requests it hands out: per volume in the order first seen, and
/// those of [`LARGE_REQUEST_BYTES`] or more. A request of the volume before it and of a usual
/// size costs an addition and one branch; the rest is out of line.
#[derive(Clone, Debug)]
pub(crate) struct VolumeTally {
    /// Requests counted, and how many of them came before the current run of one volume.
    requests: u64,
    run_start: u64,
    /// The current run's volume (`u32::MAX` before the first request, with `started` false).
    last: u32,
    started: bool,
    seen: ByVolume<u64>,
    pub(crate) large: u64,
}

impl Default for VolumeTally {
    fn default() -> Self {
        VolumeTally {
            requests: 0,
            run_start: 0,
            last: u32::MAX,
            started: false,
            seen: ByVolume::default(),
            large: 0,
        }
    }
}

/// Requests this large are rare in block traces; a trace made mostly of them was probably read
/// in the wrong unit (bytes as 512-byte sectors).
pub const LARGE_REQUEST_BYTES: u64 = 1 << 20;

impl VolumeTally {
    #[inline(always)]
    pub(crate) fn note(&mut self, dev: u32, len_bytes: u64) {
        self.requests += 1;
        // Before the first switch `last` is u32::MAX: a trace of that one volume never
        // switches, and `settle` credits it then.
        if dev != self.last || len_bytes >= LARGE_REQUEST_BYTES {
            self.other(dev, len_bytes);
        }
    }

    #[cold]
    #[inline(never)]
    fn other(&mut self, dev: u32, len_bytes: u64) {
        self.large += (len_bytes >= LARGE_REQUEST_BYTES) as u64;
        if self.started && dev == self.last {
            return;
        }
        // The request just counted starts a run of `dev`.
        self.settle(self.requests - 1);
        self.seen.get(dev);
        (self.last, self.started, self.run_start) = (dev, true, self.requests - 1);
    }

    /// Credits the current run (before the first switch: volume u32::MAX's, see `note`) with
    /// its requests up to `end`.
    fn settle(&mut self, end: u64) {
        if self.started || end > 0 {
            *self.seen.get(self.last) += end - self.run_start;
            (self.started, self.run_start) = (true, end);
        }
    }

    /// Every volume seen so far with its requests, in the order first seen.
    pub(crate) fn counts(&self) -> Vec<VolumeCount> {
        let mut t = self.clone();
        t.settle(t.requests);
        t.seen
            .into_vec()
            .into_iter()
            .map(|(dev, requests)| VolumeCount { dev, requests })
            .collect()
    }

    /// The warnings about how a trace read, once a pass has ended (`key`: its workload's keys,
    /// `workload` or `flows[i].workload`; `merged_unasked`: its volumes were merged without
    /// `volumes` or `device` saying so): several volumes merged; requests mostly 1 MiB or more.
    pub(crate) fn warnings(
        &self,
        key: &str,
        merged_unasked: bool,
        format: Option<&str>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        if merged_unasked {
            out.extend(merged_warning(&self.counts(), key));
        }
        out.extend(large_requests_warning(self.large, self.requests, format));
        out
    }
}

/// Each volume's range under `separate`: one pass over the trace (read as `opts` says, its
/// volumes merged).
pub fn layout(path: &Path, opts: &TraceOptions) -> Result<Vec<VolumeRange>> {
    let align = match opts.volume_align_bytes {
        0 => 4096,
        a => a,
    };
    let merged = TraceOptions {
        volumes: Some(Volumes::Merge),
        ..opts.clone()
    };
    let mut ends: ByVolume<u64> = ByVolume::default();
    for r in super::open(path, &merged)? {
        let r = r?;
        let end = ends.get(r.dev);
        *end = (*end).max(r.end_bytes());
    }
    let mut base = 0u64;
    let mut out = Vec::with_capacity(ends.len());
    for (dev, end) in ends.into_vec() {
        let span = end.div_ceil(align).max(1).saturating_mul(align);
        out.push(VolumeRange {
            dev,
            base_bytes: base,
            span_bytes: span,
        });
        base = base.checked_add(span).ok_or_else(|| {
            SimError::Invalid(format!(
                "{}: the volumes' ranges under volumes = \"separate\" add up to more than 2^64 bytes",
                path.display()
            ))
        })?;
    }
    Ok(out)
}

/// The warning for a trace whose requests are mostly [`LARGE_REQUEST_BYTES`] or more (`large`
/// of `requests`); None otherwise.
pub fn large_requests_warning(large: u64, requests: u64, format: Option<&str>) -> Option<String> {
    if requests == 0 || large * 2 <= requests {
        return None;
    }
    let read_as = format.map_or(String::new(), |f| format!(" as format `{f}`"));
    Some(format!(
        "{:.0}% of the trace's requests are 1 MiB or larger (read{read_as}): block traces rarely \
         are; sizes in bytes read as 512-byte sectors look like this. Check the format \
         (`ssdlab trace info` shows how the file reads; workload.format to choose)",
        100.0 * large as f64 / requests as f64
    ))
}

/// The warning for a replay that merged several volumes without being told to (`key`: the
/// workload's key prefix, `workload` or `flows[i].workload`); None for one volume.
pub fn merged_warning(counts: &[VolumeCount], key: &str) -> Option<String> {
    if counts.len() < 2 {
        return None;
    }
    let total: u64 = counts.iter().map(|c| c.requests).sum();
    let mut by_share = counts.to_vec();
    by_share.sort_by(|a, b| b.requests.cmp(&a.requests).then(a.dev.cmp(&b.dev)));
    const SHOWN: usize = 8;
    let mut list: Vec<String> = by_share
        .iter()
        .take(SHOWN)
        .map(|c| {
            format!(
                "{} ({:.1}%)",
                c.dev,
                100.0 * c.requests as f64 / total.max(1) as f64
            )
        })
        .collect();
    if by_share.len() > SHOWN {
        list.push(format!("and {} more", by_share.len() - SHOWN));
    }
    let largest = by_share[0].dev;
    Some(format!(
        "the trace interleaves {} volumes (by share of requests: {}), replayed into one address \
         space where their addresses alias; set {key}.volumes = \"separate\" to give each volume \
         its own range of the device, {key}.device = {largest} (say) to replay one, or \
         {key}.volumes = \"merge\" to keep them merged",
        counts.len(),
        list.join(", "),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_counts_runs_in_first_seen_order() {
        let mut t = VolumeTally::default();
        for d in [5, 5, 2, 5, 9, 9, 9, 2] {
            t.note(d, 4096 << d);
        }
        assert_eq!(t.large, 3, "the three requests of 2 MiB");
        let c = t.counts();
        let got: Vec<(u32, u64)> = c.iter().map(|c| (c.dev, c.requests)).collect();
        assert_eq!(got, vec![(5, 3), (2, 2), (9, 3)]);
        // counts() does not disturb the tally.
        t.note(9, 0);
        assert_eq!(t.counts()[2].requests, 4);
        assert!(VolumeTally::default().counts().is_empty());
        // The one volume whose number is the sentinel's.
        let mut t = VolumeTally::default();
        for len in [512, 4 << 20, 512] {
            t.note(u32::MAX, len);
        }
        t.note(3, 512);
        let got: Vec<(u32, u64)> = t.counts().iter().map(|c| (c.dev, c.requests)).collect();
        assert_eq!((got, t.large), (vec![(u32::MAX, 3), (3, 1)], 1));
    }

    #[test]
    fn warning_names_volumes_shares_and_keys() {
        let one = [VolumeCount {
            dev: 0,
            requests: 9,
        }];
        assert_eq!(merged_warning(&one, "workload"), None);
        let three = [
            VolumeCount {
                dev: 0,
                requests: 1,
            },
            VolumeCount {
                dev: 1,
                requests: 2,
            },
            VolumeCount {
                dev: 2,
                requests: 1,
            },
        ];
        let w = merged_warning(&three, "workload").unwrap();
        assert!(w.contains("3 volumes"), "{w}");
        assert!(w.contains("1 (50.0%), 0 (25.0%), 2 (25.0%)"), "{w}");
        assert!(w.contains("workload.volumes = \"separate\""), "{w}");
        assert!(w.contains("workload.device = 1"), "{w}");
        let many: Vec<VolumeCount> = (0..20)
            .map(|d| VolumeCount {
                dev: d,
                requests: 1,
            })
            .collect();
        let w = merged_warning(&many, "flows[1].workload").unwrap();
        assert!(
            w.contains("and 12 more") && w.contains("flows[1].workload.volumes"),
            "{w}"
        );
    }
}

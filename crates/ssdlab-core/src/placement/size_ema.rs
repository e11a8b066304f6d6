//! `size-ema-batch` and `size-ema-entry` (seed 001, §3.2–3.3): a write request's size s against
//! an exponential moving average m of request sizes (m ← (1 − w)·m + w·s, w = 0.0001: about the
//! last 10,000 requests) gives its class: s ≤ 0.5m → 0 (hottest), ≤ m → 1, ≤ 1.5m → 2, else 3
//! (coldest); the request is classified before m is updated. Every page of the request carries
//! the class in its buffer entry. `size-ema-batch` is the thesis as implemented: the write thread
//! averages the classes of the entries it took and writes the whole batch to that line;
//! `size-ema-entry` is its future work (§5.2): each entry goes to its own class's line.

use super::{Class, Classifier};
use crate::error::{one_of, Result, SimError};
use crate::units::Lpn;

crate::params! {
    /// The size classifier's parameters (`[placement.size-ema-batch]`, `[placement.size-ema-entry]`).
    pub struct Params {
        /// EMA weight w of the newest request size (0.0001: the last ~10,000 requests).
        weight: f64 = 0.0001,
        /// Class bounds as fractions of the average, ascending: a request of size s is in the first
        /// class whose bound b has s ≤ b·m, else in the last (classes = bounds + 1).
        bounds: Vec<f64> = vec![0.5, 1.0, 1.5],
        /// The class of GC copies: coldest (the last class) | source (the class of the line they
        /// were collected from) | ring (coldest, and through the line FTL's write ring whatever
        /// `ftl.lines.gc_write` says). The thesis does not say. The line FTL paced as pblk puts
        /// the copies in its ring as pblk's `pblk_write_gc_to_cache` does (`ftl.lines.gc_write`),
        /// each entry carrying this class, batched with host entries: in size-ema-batch they
        /// count in the batch's average; written directly, they go to this class's line.
        gc: String = "coldest".into(),
        /// size-ema-batch: the batch's class is the average of its entries' classes rounded to
        /// nearest (halves up) | floor (integer division).
        rounding: String = "nearest".into(),
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        if !(self.weight > 0.0 && self.weight <= 1.0) {
            return Err(SimError::config(
                format!("{table}.weight"),
                format!("{} must be in (0, 1]", self.weight),
            ));
        }
        let ascending = self.bounds.windows(2).all(|w| w[0] < w[1]);
        if self.bounds.is_empty() || self.bounds.len() > 63 || !ascending || self.bounds[0] <= 0.0 {
            return Err(SimError::config(
                format!("{table}.bounds"),
                format!(
                    "{:?} must be 1..=63 positive, strictly ascending fractions",
                    self.bounds
                ),
            ));
        }
        let gc = ["coldest", "source", "ring"];
        one_of(&format!("{table}.gc"), &self.gc, &gc)?;
        one_of(
            &format!("{table}.rounding"),
            &self.rounding,
            &["nearest", "floor"],
        )
    }
}

pub struct SizeEma {
    weight: f64,
    bounds: Vec<f64>,
    /// The average request size in bytes (None before the first request, which sets it).
    mean: Option<f64>,
    /// The class of the request being tagged.
    current: Class,
    per_batch: bool,
    gc_source: bool,
    gc_ring: bool,
    floor: bool,
    /// Requests per class (`placement.size-ema.requests_class<k>`).
    requests: [u64; 4],
}

impl SizeEma {
    pub fn new(p: &Params, per_batch: bool) -> SizeEma {
        SizeEma {
            weight: p.weight,
            bounds: p.bounds.clone(),
            mean: None,
            current: 0,
            per_batch,
            gc_source: p.gc == "source",
            gc_ring: p.gc == "ring",
            floor: p.rounding == "floor",
            requests: [0; 4],
        }
    }

    /// The class of a request of `bytes` against the average `mean`.
    pub fn class_of(&self, bytes: f64, mean: f64) -> Class {
        self.bounds
            .iter()
            .position(|&b| bytes <= b * mean)
            .unwrap_or(self.bounds.len()) as Class
    }

    /// The current average request size in bytes.
    pub fn mean(&self) -> Option<f64> {
        self.mean
    }
}

impl Classifier for SizeEma {
    fn classes(&self) -> u32 {
        self.bounds.len() as u32 + 1
    }
    fn begin_request(&mut self, bytes: u64) {
        let s = bytes as f64;
        // The first request starts the average at its own size (class of s = m).
        let m = *self.mean.get_or_insert(s);
        self.current = self.class_of(s, m);
        self.mean = Some((1.0 - self.weight) * m + self.weight * s);
        if let Some(r) = self.requests.get_mut(self.current as usize) {
            *r += 1;
        }
    }
    fn tag(&mut self, _lpn: Lpn) -> u32 {
        self.current
    }
    fn per_batch(&self) -> bool {
        self.per_batch
    }
    fn batch_class(&self, tags: &[u32]) -> Class {
        if tags.is_empty() {
            return 0;
        }
        let (sum, n) = (
            tags.iter().map(|&t| t as u64).sum::<u64>(),
            tags.len() as u64,
        );
        let c = if self.floor {
            sum / n
        } else {
            (2 * sum + n) / (2 * n)
        };
        c.min(self.bounds.len() as u64) as Class
    }
    fn user(&mut self, _lpn: Lpn, tag: u32, _now: u64) -> Class {
        tag.min(self.bounds.len() as u32)
    }
    /// The class a GC copy (or, through the ring, its entry) carries: the thesis tags an entry
    /// from its request's size and GC entries come from no request, so this is a choice:
    /// `source` keeps the class of the line collected; `coldest` and `ring` give the coldest
    /// (data that outlived its line), `ring` also sending it through the ring.
    fn gc(&mut self, _lpn: Lpn, from: Class, _now: u64) -> Class {
        if self.gc_source {
            from
        } else {
            self.bounds.len() as Class
        }
    }
    fn gc_through_ring(&self) -> bool {
        self.gc_ring
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("placement.size_ema.requests_class0", self.requests[0]),
            ("placement.size_ema.requests_class1", self.requests[1]),
            ("placement.size_ema.requests_class2", self.requests[2]),
            ("placement.size_ema.requests_class3", self.requests[3]),
        ]
    }
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        vec![("placement.size_ema.mean_bytes", self.mean.unwrap_or(0.0))]
    }
}

/// The registry entry of `size-ema-batch`.
pub static BATCH: super::Entry = super::entry! {
    "size-ema-batch", Params,
    "Seed 001 as implemented: a write request's size against an EMA of request sizes (weight 0.0001) gives its class \
     (≤ 0.5·mean → 0 hottest, ≤ mean → 1, ≤ 1.5·mean → 2, else 3), carried by its pages' ring entries; the write \
     thread writes each batch to the line of its entries' average class. GC copies carry the coldest class or their \
     source line's; the line FTL paced as pblk puts them in its ring as pblk's pblk_write_gc_to_cache, where they \
     count in a batch's average with the host entries (ring: the coldest class, through the ring under any pacing).",
    build |_cfg, _, q| Ok(Box::new(SizeEma::new(&q, true))),
    classes |_, q| Ok(q.bounds.len() as u32 + 1),
    gc_through_ring |q| Ok(q.gc == "ring"),
};

/// The registry entry of `size-ema-entry`.
pub static ENTRY_WISE: super::Entry = super::entry! {
    "size-ema-entry", Params,
    "Seed 001's future work: the size classes of size-ema-batch, but every page goes to its own class's line.",
    build |_cfg, _, q| Ok(Box::new(SizeEma::new(&q, false))),
    classes |_, q| Ok(q.bounds.len() as u32 + 1),
    gc_through_ring |q| Ok(q.gc == "ring"),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand: w = 0.5 so the average moves visibly. m starts at the first size, 8 KiB.
    /// size  class (bounds 0.5m, m, 1.5m)      m after
    /// 8K    8K ≤ 1.0·8K → 1                   8K
    /// 2K    2K ≤ 0.5·8K = 4K → 0              5K
    /// 16K   16K > 1.5·5K = 7.5K → 3           10.5K
    /// 12K   10.5K < 12K ≤ 15.75K → 2          11.25K
    #[test]
    fn classes_worked_by_hand() {
        let p = Params {
            weight: 0.5,
            ..Params::default()
        };
        let mut c = SizeEma::new(&p, false);
        let k = 1024;
        let mut got = Vec::new();
        for s in [8 * k, 2 * k, 16 * k, 12 * k] {
            c.begin_request(s);
            got.push(c.tag(0));
        }
        assert_eq!(got, [1, 0, 3, 2]);
        assert_eq!(c.mean(), Some(11.25 * k as f64));
        assert_eq!(c.user(5, 2, 0), 2);
        assert_eq!(c.gc(5, 1, 0), 3, "GC copies go to the coldest line");
    }

    /// The thesis's Fig 3.9: entries of lines 3, 2, 1, 2 average to line 2.
    #[test]
    fn batch_average() {
        let p = Params::default();
        let c = SizeEma::new(&p, true);
        assert!(c.per_batch());
        assert_eq!(c.batch_class(&[3, 2, 1, 2]), 2);
        assert_eq!(c.batch_class(&[0, 1]), 1, "0.5 rounds up");
        assert_eq!(c.batch_class(&[0, 0, 1]), 0);
        let floor = SizeEma::new(
            &Params {
                rounding: "floor".into(),
                ..Params::default()
            },
            true,
        );
        assert_eq!(floor.batch_class(&[0, 1]), 0);
        assert_eq!(floor.batch_class(&[3, 3, 2]), 2);
    }

    #[test]
    fn bad_params_name_the_field() {
        use crate::params::Params as _;
        let p = Params {
            bounds: vec![1.0, 0.5],
            ..Params::default()
        };
        let e = p.check("placement.size-ema-batch").unwrap_err().to_string();
        assert!(e.contains("placement.size-ema-batch.bounds"), "{e}");
        let p = Params {
            gc: "warmest".into(),
            ..Params::default()
        };
        let e = p.check("placement.size-ema-batch").unwrap_err().to_string();
        assert!(e.contains("placement.size-ema-batch.gc"), "{e}");
        assert!(e.contains("valid: coldest, source, ring"), "{e}");
    }
}

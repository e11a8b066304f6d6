//! Pad-or-log decision for a flushed group: pad (read the missing pages from flash and write the
//! whole block, so a hybrid FTL can switch-merge) or log (write only the buffered pages).
//! Group-based buffers ask their `Padding` once per victim, passing the FTL's read-only view.

pub mod reref;

use crate::ftl::FtlView;
use crate::units::Lbn;

/// A padding policy from the configuration (its registry entry's builder).
pub type Ctor = fn(&crate::config::Config) -> crate::error::Result<Box<dyn Padding>>;

/// A padding policy's registry entry with its name written once: `entry!(name, Params, keys,
/// summary, |cfg, q| build)`, where `q` is its `[padding.<name>]` table read as `Params`
/// (`crate::params::NoParams` for none).
macro_rules! entry {
    ($name:literal, $params:ty, $keys:expr, $summary:expr, |$cfg:ident, $q:pat_param| $build:expr $(,)?) => {
        $crate::component::Entry::<$crate::padding::Ctor> {
            info: $crate::component::Component::of::<$params>("padding", $name, $summary, $keys),
            build: |$cfg| {
                let $q: $params = $crate::params::of(&$cfg.padding, "padding", $name)?;
                $build
            },
        }
    };
}
pub(crate) use entry;

pub trait Padding: Send {
    /// Should the group of `lbn` holding `buffered_pages` pages be padded to a full block?
    fn pad(
        &mut self,
        lbn: Lbn,
        buffered_pages: u64,
        pages_per_block: u64,
        view: &dyn FtlView,
    ) -> bool;

    /// As `pad`, told whether the group's pages are the block's in-order prefix 0..n−1 (what
    /// group-based buffers call). A policy that prices the merge its unpadded log block would
    /// get overrides this.
    fn pad_unit(
        &mut self,
        lbn: Lbn,
        buffered_pages: u64,
        _in_order_prefix: bool,
        pages_per_block: u64,
        view: &dyn FtlView,
    ) -> bool {
        self.pad(lbn, buffered_pages, pages_per_block, view)
    }

    /// The current padding threshold in pages (groups with at least this many pages are padded),
    /// or None when the policy never pads. HitStat(adj) uses it as a weight floor.
    fn threshold_pages(&mut self, _pages_per_block: u64, _view: &dyn FtlView) -> Option<f64> {
        None
    }

    /// The policy's own gauges (e.g. a predictor's accuracy); the default has none.
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// The policy gauges a buffer owning `padding` reports: "padding.threshold_fraction" = the current
/// threshold in pages / pages per block (B_w/N for `model`; none when the policy has no
/// threshold), then the policy's own.
pub fn gauges(
    padding: &mut dyn Padding,
    pages_per_block: u64,
    view: &dyn FtlView,
) -> Vec<(&'static str, f64)> {
    let mut g: Vec<_> = padding
        .threshold_pages(pages_per_block, view)
        .map(|t| ("padding.threshold_fraction", t / pages_per_block as f64))
        .into_iter()
        .collect();
    g.extend(padding.gauges());
    g
}

/// `none`: never pad.
pub struct NoPadding;

impl Padding for NoPadding {
    fn pad(
        &mut self,
        _lbn: Lbn,
        _buffered_pages: u64,
        _pages_per_block: u64,
        _view: &dyn FtlView,
    ) -> bool {
        false
    }
}

crate::params! {
    /// Fixed padding's parameters (`[padding.fixed]`).
    pub struct FixedParams {
        /// Pad groups holding at least this fraction of a block (0.5 is BPLRU's setting in
        /// seed 000; 1.0 pads only full groups; 0.0 always pads).
        threshold: f64 = 0.5,
    }
}

impl crate::params::Params for FixedParams {
    fn check(&self, table: &str) -> crate::error::Result<()> {
        if !(0.0..=1.0).contains(&self.threshold) {
            return Err(crate::error::SimError::config(
                format!("{table}.threshold"),
                format!("{} is not in [0, 1]", self.threshold),
            ));
        }
        Ok(())
    }
}

/// `fixed`: pad a group holding at least `threshold` × pages-per-block pages.
pub struct FixedPadding {
    pub threshold: f64,
}

impl Padding for FixedPadding {
    fn pad(
        &mut self,
        _lbn: Lbn,
        buffered_pages: u64,
        pages_per_block: u64,
        _view: &dyn FtlView,
    ) -> bool {
        buffered_pages < pages_per_block
            && buffered_pages as f64 >= self.threshold * pages_per_block as f64
    }

    fn threshold_pages(&mut self, pages_per_block: u64, _view: &dyn FtlView) -> Option<f64> {
        Some(self.threshold * pages_per_block as f64)
    }
}

/// `model`: seed 000's Padding Model (§3.5). Pad a group holding at least
/// B_w = R_LB·N·U_LB·(C_e + N·C_w) / ((R_LB + R_DB)·C_e + (R_LB·U_LB + R_DB)·N·C_w) pages, with
/// R_DB, R_LB, U_LB the FTL's running "r_db", "r_lb", "u_lb" (U_LB as a fraction in (0, 1]) read
/// from the view at every decision, C_e = `nand.erase_us`, C_w = `nand.program_us`. Until the FTL
/// reports all three (positive), B_w = `initial` × N.
pub struct ModelPadding {
    pub erase_us: f64,
    pub program_us: f64,
    /// Threshold as a fraction of a block used while the FTL has no merge statistics.
    pub initial: f64,
}

impl ModelPadding {
    /// Initial threshold by FTL kind (thesis Table 2): 1.00 on BAST, 0.33 on FAST. Any other FTL
    /// (the page FTL, block mapping) starts at 1.00: nothing is padded until merge statistics
    /// exist, since under page mapping padding only adds reads and programs.
    pub fn initial_for(ftl_kind: &str) -> f64 {
        match ftl_kind {
            "fast" => 0.33,
            _ => 1.0,
        }
    }

    /// B_w in pages from explicit statistics.
    pub fn balanced_burst(&self, r_db: f64, r_lb: f64, u_lb: f64, n: f64) -> f64 {
        let (ce, cw) = (self.erase_us, self.program_us);
        r_lb * n * u_lb * (ce + n * cw) / ((r_lb + r_db) * ce + (r_lb * u_lb + r_db) * n * cw)
    }

    /// The current B_w in pages.
    pub fn current(&self, pages_per_block: u64, view: &dyn FtlView) -> f64 {
        let n = pages_per_block as f64;
        let fallback = self.initial * n;
        match (view.stat("r_db"), view.stat("r_lb"), view.stat("u_lb")) {
            (Some(r_db), Some(r_lb), Some(u_lb)) if r_db > 0.0 && r_lb > 0.0 && u_lb > 0.0 => {
                let b = self.balanced_burst(r_db, r_lb, u_lb, n);
                if b.is_finite() {
                    b
                } else {
                    fallback
                }
            }
            _ => fallback,
        }
    }
}

impl Padding for ModelPadding {
    fn pad(
        &mut self,
        _lbn: Lbn,
        buffered_pages: u64,
        pages_per_block: u64,
        view: &dyn FtlView,
    ) -> bool {
        buffered_pages < pages_per_block
            && buffered_pages as f64 >= self.current(pages_per_block, view)
    }

    fn threshold_pages(&mut self, pages_per_block: u64, view: &dyn FtlView) -> Option<f64> {
        Some(self.current(pages_per_block, view))
    }
}

/// The registry entry of padding `none`.
pub static NO_PADDING: crate::component::Entry<Ctor> = entry! {
    "none", crate::params::NoParams, &[],
    "Never pad: flushed groups go to the FTL as they are.",
    |_cfg, _| Ok(Box::new(NoPadding))
};

/// The registry entry of padding `fixed`.
pub static FIXED: crate::component::Entry<Ctor> = entry! {
    "fixed", FixedParams, &["buffer.padding_fill"],
    "Pad a flushed group (read its missing pages, write the whole block) when it holds at least \
     `threshold` of a block.",
    |_cfg, q| Ok(Box::new(FixedPadding { threshold: q.threshold }))
};

/// The registry entry of padding `model`.
pub static MODEL: crate::component::Entry<Ctor> = entry! {
    "model", crate::params::NoParams,
    &["nand.erase_us", "nand.program_us", "ftl.kind", "ftl.model_stats", "buffer.padding_fill"],
    "Seed 000's Padding Model: pad a group holding at least B_w pages, B_w computed at every flush from the FTL's running r_db, r_lb, u_lb and nand.erase_us / program_us; until the FTL reports them, 1.00 of a block (BAST, page and other FTLs: no padding) or 0.33 (FAST).",
    |cfg, _| {
        Ok(Box::new(ModelPadding {
            erase_us: cfg.nand.erase_us,
            program_us: cfg.nand.program_us,
            initial: ModelPadding::initial_for(&cfg.ftl.kind),
        }))
    }
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Lpn;

    struct View(Vec<(&'static str, f64)>);
    impl FtlView for View {
        fn is_mapped(&self, _lpn: Lpn) -> bool {
            false
        }
        fn stat(&self, name: &str) -> Option<f64> {
            self.0.iter().find(|(k, _)| *k == name).map(|&(_, v)| v)
        }
    }

    fn thesis(initial: f64) -> ModelPadding {
        ModelPadding {
            erase_us: 1500.0,
            program_us: 800.0,
            initial,
        }
    }

    #[test]
    fn model_fast_table6() {
        // FAST: R_LB = U_LB = 1, R_DB = 12.36 → B_w = N / 13.36 ≈ 0.07 N.
        let m = thesis(0.33);
        let v = View(vec![("r_db", 12.36), ("r_lb", 1.0), ("u_lb", 1.0)]);
        let b = m.current(128, &v) / 128.0;
        assert!((b - 1.0 / 13.36).abs() < 1e-12, "{b}");
        assert_eq!(format!("{b:.2}"), "0.07");
    }

    #[test]
    fn model_bast_table5() {
        let m = thesis(1.0);
        let v = View(vec![("r_db", 1.0), ("r_lb", 1.02), ("u_lb", 0.1619)]);
        let b = m.current(128, &v) / 128.0;
        assert_eq!(format!("{b:.2}"), "0.14");
        assert!((b - 0.14023).abs() < 1e-4, "{b}");
    }

    #[test]
    fn model_falls_back_to_initial() {
        let mut m = thesis(ModelPadding::initial_for("fast"));
        let empty = View(vec![]);
        assert!((m.current(128, &empty) - 0.33 * 128.0).abs() < 1e-9);
        assert!(!m.pad(0, 42, 128, &empty));
        assert!(m.pad(0, 43, 128, &empty));
        assert!(!m.pad(0, 128, 128, &empty), "full groups need no padding");
        // Zero statistics (no merge yet) also fall back.
        let zero = View(vec![("r_db", 0.0), ("r_lb", 0.0), ("u_lb", 0.0)]);
        assert!((m.current(128, &zero) - 0.33 * 128.0).abs() < 1e-9);
        assert_eq!(ModelPadding::initial_for("bast"), 1.0);
        assert_eq!(ModelPadding::initial_for("page"), 1.0);
        let mut bast = thesis(1.0);
        assert!(!bast.pad(0, 127, 128, &empty));
        assert_eq!(bast.threshold_pages(128, &empty), Some(128.0));
    }

    #[test]
    fn fixed_threshold() {
        let mut f = FixedPadding { threshold: 0.5 };
        let v = View(vec![]);
        assert!(!f.pad(0, 63, 128, &v));
        assert!(f.pad(0, 64, 128, &v));
        assert_eq!(f.threshold_pages(128, &v), Some(64.0));
        assert_eq!(NoPadding.threshold_pages(128, &v), None);
    }
}

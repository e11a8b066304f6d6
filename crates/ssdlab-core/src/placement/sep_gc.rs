//! `sep-gc`: user writes in line 0, GC copies in line 1 (SepBIT's SepGC; Van Houdt's double
//! write frontier).

/// The registry entry of `sep-gc`.
pub static ENTRY: super::Entry = super::entry! {
    "sep-gc", crate::params::NoParams,
    "Host writes to line 0, GC copies to line 1 (SepGC; a double write frontier).",
    build |_cfg, _, _| Ok(Box::new(super::none::FixedLines { gc: 1 })),
    classes |_, _| Ok(2),
    gc_through_ring |_| Ok(false),
};

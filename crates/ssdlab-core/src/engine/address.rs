//! Address mapping: how host LPNs become device LPNs (`workload.address_map`).

use super::source::At;
use crate::error::{Result, SimError};
use crate::request::Request;
use crate::units::{Geometry, Lpn};
use rustc_hash::FxHashMap;

/// How host addresses become device LPNs.
pub(super) enum AddressMap {
    /// As they are; an address beyond the device is an error.
    None,
    /// Modulo the device's logical pages.
    Fold,
    /// Logical blocks renumbered densely in order of first touch (host LBN → device LBN).
    Compact(Compact),
}

/// The compact map: host LBN → device LBN, with the last pair looked up (a request's pages
/// mostly share their block).
pub(super) struct Compact {
    dense: FxHashMap<u64, u64>,
    last: Option<(u64, u64)>,
}

impl AddressMap {
    /// The map named by `workload.address_map` (validated: anything else is "none").
    pub(super) fn new(name: &str) -> AddressMap {
        match name {
            "fold" => AddressMap::Fold,
            "compact" => AddressMap::Compact(Compact {
                dense: FxHashMap::default(),
                last: None,
            }),
            _ => AddressMap::None,
        }
    }

    /// The device LPN of host `lpn` (of request `req`, from `at`: for error messages).
    #[inline(always)]
    pub(super) fn map_lpn(
        &mut self,
        geo: &Geometry,
        lpn: Lpn,
        req: &Request,
        at: At,
    ) -> Result<Lpn> {
        match self {
            AddressMap::None if lpn < geo.logical_pages => Ok(lpn),
            _ => self.map_other(geo, lpn, req, at),
        }
    }

    #[inline(never)]
    fn map_other(&mut self, geo: &Geometry, lpn: Lpn, req: &Request, at: At) -> Result<Lpn> {
        let lp = geo.logical_pages;
        match self {
            AddressMap::None => Err(SimError::Capacity(format!(
                "request at {} (offset {} B, {} B) ends beyond the device's logical capacity of {} B; \
                 set workload.address_map = \"fold\" or \"compact\", or raise device.logical_bytes",
                at,
                req.offset_bytes,
                req.len_bytes,
                geo.logical_bytes()
            ))),
            AddressMap::Fold => Ok(lpn % lp),
            AddressMap::Compact(c) => {
                let ppb = geo.pages_per_block;
                let lbn = lpn / ppb;
                let dense = match c.last {
                    Some((host, dense)) if host == lbn => dense,
                    _ => {
                        let next = c.dense.len() as u64;
                        let dense = *c.dense.entry(lbn).or_insert(next);
                        c.last = Some((lbn, dense));
                        dense
                    }
                };
                let out = dense * ppb + lpn % ppb;
                if out >= lp {
                    return Err(SimError::Capacity(format!(
                        "request at {}: the workload touches more than the device's {} logical blocks; \
                         raise device.logical_bytes (or use \"auto\")",
                        at,
                        geo.logical_blocks()
                    )));
                }
                Ok(out)
            }
        }
    }
}

//! Address mapping: how host LPNs become device LPNs (`workload.address_map`).

use super::source::At;
use crate::error::{Result, SimError};
use crate::request::Request;
use crate::units::{Geometry, Lpn};
use rustc_hash::FxHashMap;

/// How host addresses become device LPNs: into the device's logical pages, or a flow's range
/// of them (`[[flows]]`).
pub(super) struct AddressMap {
    kind: Kind,
    /// The device LPNs mapped into: `base..base + pages`.
    base: Lpn,
    pages: Lpn,
    /// Whose range it is, for errors ("" = the device's).
    owner: String,
}

enum Kind {
    /// As they are; an address beyond the range is an error.
    None,
    /// Modulo the range's pages.
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
    /// The map named by `workload.address_map` (validated: anything else is "none") onto the
    /// device's logical pages.
    pub(super) fn new(name: &str, geo: &Geometry) -> AddressMap {
        AddressMap::onto(name, 0, geo.logical_pages, String::new())
    }

    /// The same onto `pages` device LPNs from `base` (a flow's range; `owner` names it).
    pub(super) fn onto(name: &str, base: Lpn, pages: Lpn, owner: String) -> AddressMap {
        let kind = match name {
            "fold" => Kind::Fold,
            "compact" => Kind::Compact(Compact {
                dense: FxHashMap::default(),
                last: None,
            }),
            _ => Kind::None,
        };
        AddressMap {
            kind,
            base,
            pages,
            owner,
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
        match self.kind {
            Kind::None if lpn < self.pages => Ok(self.base + lpn),
            _ => self.map_other(geo, lpn, req, at),
        }
    }

    #[inline(never)]
    fn map_other(&mut self, geo: &Geometry, lpn: Lpn, req: &Request, at: At) -> Result<Lpn> {
        let lp = self.pages;
        let range = if self.owner.is_empty() {
            format!("the device's logical capacity of {} B", geo.logical_bytes())
        } else {
            format!("{}'s range of {} B", self.owner, lp * geo.page_bytes)
        };
        let out = match &mut self.kind {
            Kind::None => {
                return Err(SimError::Capacity(format!(
                    "request at {} (offset {} B, {} B) ends beyond {range}; \
                     set workload.address_map = \"fold\" or \"compact\", or raise device.logical_bytes",
                    at, req.offset_bytes, req.len_bytes,
                )))
            }
            Kind::Fold => lpn % lp,
            Kind::Compact(c) => {
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
                    let whose = if self.owner.is_empty() { "the device's" } else { &self.owner };
                    return Err(SimError::Capacity(format!(
                        "request at {at}: the workload touches more than {whose} {} logical blocks; \
                         raise device.logical_bytes (or use \"auto\")",
                        lp / ppb
                    )));
                }
                out
            }
        };
        Ok(self.base + out)
    }
}

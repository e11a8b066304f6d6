//! Units and geometry arithmetic: sectors, pages (LPN/PPN), blocks (LBN/PBN), sizes with units.

use crate::error::{Result, SimError};

pub const SECTOR_BYTES: u64 = 512;

/// Logical page number.
pub type Lpn = u64;
/// Logical block number (LPN / pages_per_block).
pub type Lbn = u64;
/// Physical page number (PBN * pages_per_block + offset).
pub type Ppn = u32;
/// Physical block number.
pub type Pbn = u32;
/// Bit i set = sector i of the page is present / written.
pub type SectorMask = u64;

/// A time in µs, ordered (for heaps of times; times are finite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct At(pub f64);
impl Eq for At {}
impl Ord for At {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}
impl PartialOrd for At {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// Resolved device geometry. All sizes are exact multiples of the units below them.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    pub page_bytes: u64,
    pub pages_per_block: u64,
    /// Logical (host-visible) pages.
    pub logical_pages: u64,
    /// Physical blocks, including over-provisioning.
    pub physical_blocks: u64,
}

impl Geometry {
    pub fn sectors_per_page(&self) -> u64 {
        self.page_bytes / SECTOR_BYTES
    }
    pub fn full_mask(&self) -> SectorMask {
        full_mask(self.sectors_per_page())
    }
    pub fn logical_blocks(&self) -> u64 {
        self.logical_pages.div_ceil(self.pages_per_block)
    }
    pub fn physical_pages(&self) -> u64 {
        self.physical_blocks * self.pages_per_block
    }
    pub fn logical_bytes(&self) -> u64 {
        self.logical_pages * self.page_bytes
    }
    pub fn block_bytes(&self) -> u64 {
        self.page_bytes * self.pages_per_block
    }
    /// Over-provisioning ρ = physical / logical − 1.
    pub fn op(&self) -> f64 {
        self.physical_pages() as f64 / self.logical_pages as f64 - 1.0
    }
}

/// Physical blocks at over-provisioning ρ: ⌈logical · (1 + ρ)⌉, a product within rounding
/// error of a whole number taken as that number (22 · (1 + 10/22) is 32, not 33).
pub fn physical_blocks(logical_blocks: u64, op: f64) -> u64 {
    let v = logical_blocks as f64 * (1.0 + op);
    (v - v * 1e-12).ceil() as u64
}

pub fn full_mask(sectors: u64) -> SectorMask {
    if sectors >= 64 {
        u64::MAX
    } else {
        (1u64 << sectors) - 1
    }
}

/// Parse a size: an integer number of bytes or a number with a unit
/// (B, KiB, MiB, GiB, TiB, and the decimal KB, MB, GB, TB; case-insensitive; K/M/G/T = binary).
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num = num.replace('_', "");
    if num.is_empty() {
        return Err(format!(
            "`{text}` is not a size (expected e.g. 4096, \"16MiB\", \"1.5GiB\")"
        ));
    }
    let value: f64 = num.parse().map_err(|_| format!("`{text}` is not a size"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tib" => 1024.0f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        other => {
            return Err(format!(
            "unknown size unit `{other}` in `{text}` (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"
        ))
        }
    };
    let bytes = value * mult;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("size `{text}` out of range"));
    }
    if bytes.fract() != 0.0 {
        return Err(format!("size `{text}` is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// A byte size in configuration: accepts an integer or a string with a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Size(pub u64);

impl serde::Serialize for Size {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(SizeVisitor).map(Size)
    }
}

/// Reads a size from an integer, a whole float or a string with a unit; the `expecting` text
/// is what a wrong type's error says.
pub(crate) struct SizeVisitor;

impl serde::de::Visitor<'_> for SizeVisitor {
    type Value = u64;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a size such as 16MiB")
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<u64, E> {
        Ok(v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<u64, E> {
        u64::try_from(v)
            .map_err(|_| E::custom(format!("{v} is negative; expected a size such as 16MiB")))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<u64, E> {
        if v >= 0.0 && v.fract() == 0.0 && v <= u64::MAX as f64 {
            Ok(v as u64)
        } else {
            Err(E::custom(format!("{v} is not a whole number of bytes")))
        }
    }
    fn visit_str<E: serde::de::Error>(self, t: &str) -> std::result::Result<u64, E> {
        parse_size(t).map_err(E::custom)
    }
}

/// A size for a message: "512 B", "1.5 KiB", "4.0 TiB" (binary units, one decimal).
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// `n` with thousands separators: 15998976 -> "15,998,976".
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// For a size written with a decimal unit (KB, MB, GB, TB), what it means and the binary
/// spelling the user probably wanted: "is 16,000,000 bytes (decimal); did you mean 16MiB?".
pub fn decimal_unit_note(text: &str) -> Option<String> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic())?;
    let (num, unit) = t.split_at(split);
    let binary = match unit.trim().to_ascii_lowercase().as_str() {
        "kb" => "KiB",
        "mb" => "MiB",
        "gb" => "GiB",
        "tb" => "TiB",
        _ => return None,
    };
    let bytes = parse_size(t).ok()?;
    Some(format!(
        "is {} bytes (decimal); did you mean {}{binary}?",
        grouped(bytes),
        num.trim()
    ))
}

/// Hint that `slice[i]` will be used soon: start loading its cache line without waiting for it
/// (nothing on other architectures).
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    prefetch_hint::<HINT_T0, T>(slice, i);
}

/// As [`prefetch`], for data used once soon: kept out of the outer caches where the processor
/// allows, so that it does not evict what stays hot there.
#[inline(always)]
pub fn prefetch_once<T>(slice: &[T], i: usize) {
    prefetch_hint::<HINT_NTA, T>(slice, i);
}

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{_MM_HINT_NTA as HINT_NTA, _MM_HINT_T0 as HINT_T0};
#[cfg(not(target_arch = "x86_64"))]
const HINT_T0: i32 = 0;
#[cfg(not(target_arch = "x86_64"))]
const HINT_NTA: i32 = 0;

#[inline(always)]
fn prefetch_hint<const HINT: i32, T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        // Out of range (e.g. a NONE index) prefetches the first element instead: no branch to
        // mispredict on data-dependent indexes.
        let i = if i < slice.len() { i } else { 0 };
        // SAFETY: a prefetch never faults and changes no memory; SSE is part of x86_64; the
        // pointer is within (or one past, for an empty slice) the slice.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<HINT>(slice.as_ptr().wrapping_add(i) as *const i8)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}

/// The page accesses (LPN, sector mask) of a byte range, for pages of `1 << shift` sectors.
/// Sectors partially covered count as written (traces in bytes may be unaligned).
#[derive(Clone, Copy, Debug)]
pub struct PageSpan {
    /// Next sector, and the first sector after the range.
    s: u64,
    end: u64,
    shift: u32,
}

impl PageSpan {
    #[inline(always)]
    pub fn new(offset_bytes: u64, len_bytes: u64, shift: u32) -> Self {
        let s = offset_bytes / SECTOR_BYTES;
        // An empty range touches no page, even at an unaligned offset.
        let end = if len_bytes == 0 {
            s
        } else {
            (offset_bytes + len_bytes).div_ceil(SECTOR_BYTES)
        };
        PageSpan { s, end, shift }
    }
    /// Sectors in the range not yet visited.
    #[inline(always)]
    pub fn sectors(&self) -> u64 {
        self.end - self.s
    }
    /// Pages in the range not yet visited.
    #[inline(always)]
    pub fn pages(&self) -> u64 {
        if self.s >= self.end {
            return 0;
        }
        ((self.end - 1) >> self.shift) - (self.s >> self.shift) + 1
    }
}

impl Iterator for PageSpan {
    type Item = (Lpn, SectorMask);
    #[inline(always)]
    fn next(&mut self) -> Option<(Lpn, SectorMask)> {
        if self.s >= self.end {
            return None;
        }
        let lpn = self.s >> self.shift;
        let stop = self.end.min((lpn + 1) << self.shift);
        let mask = full_mask(stop - self.s) << (self.s - (lpn << self.shift));
        self.s = stop;
        Some((lpn, mask))
    }
}

pub fn check_power_of_two(field: &str, v: u64) -> Result<()> {
    if v == 0 || !v.is_power_of_two() {
        return Err(SimError::config(
            field,
            format!("{v} must be a power of two"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("16MiB").unwrap(), 16 << 20);
        assert_eq!(parse_size("1.5 GiB").unwrap(), 3 << 29);
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(4 << 40), "4.0 TiB");
        assert_eq!(human_bytes(u64::MAX), "16.0 EiB");
        assert_eq!(parse_size("2KB").unwrap(), 2000);
        assert!(parse_size("12 parsecs")
            .unwrap_err()
            .contains("unknown size unit"));
        assert!(parse_size("MiB").is_err());
    }

    #[test]
    fn decimal_units_are_explained() {
        assert_eq!(grouped(15_998_976), "15,998,976");
        assert_eq!(grouped(999), "999");
        assert_eq!(
            decimal_unit_note("16MB").as_deref(),
            Some("is 16,000,000 bytes (decimal); did you mean 16MiB?")
        );
        assert_eq!(decimal_unit_note("16MiB"), None);
        assert_eq!(decimal_unit_note("4096"), None);
    }

    #[test]
    fn page_split() {
        // 8 sectors per page (4 KiB); bytes 3584..8704 = sectors 7..17
        let span = PageSpan::new(3584, 5120, 3);
        assert_eq!((span.pages(), span.sectors()), (3, 10));
        let v: Vec<_> = span.collect();
        assert_eq!(v, vec![(0, 0b1000_0000), (1, 0xff), (2, 0b1)]);
        assert_eq!(PageSpan::new(4100, 0, 3).pages(), 0);
        assert_eq!(PageSpan::new(4100, 0, 3).count(), 0);
    }
}

/// Division by a run-time constant, by shift when it is a power of two (the common geometry);
/// hardware division in hot loops costs tens of cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divisor {
    d: u64,
    shift: u32,
    pow2: bool,
}

impl Divisor {
    pub fn new(d: u64) -> Self {
        assert!(d > 0);
        Divisor {
            d,
            shift: d.trailing_zeros(),
            pow2: d.is_power_of_two(),
        }
    }
    #[inline(always)]
    pub fn get(self) -> u64 {
        self.d
    }
    #[inline(always)]
    pub fn quot(self, x: u64) -> u64 {
        if self.pow2 {
            x >> self.shift
        } else {
            x / self.d
        }
    }
    #[inline(always)]
    pub fn modulo(self, x: u64) -> u64 {
        if self.pow2 {
            x & (self.d - 1)
        } else {
            x % self.d
        }
    }
}

#[cfg(test)]
mod divisor_tests {
    use super::Divisor;

    #[test]
    fn matches_hardware_division() {
        for d in [1u64, 2, 3, 64, 96, 128, 384] {
            let v = Divisor::new(d);
            for x in [0u64, 1, 5, 127, 128, 1000, 123_456_789] {
                assert_eq!((v.quot(x), v.modulo(x)), (x / d, x % d));
            }
        }
    }
}

/// `vec![value; n]` that reports a failed allocation as an error naming `what` instead of
/// aborting the process (device sizes come from user input).
pub fn alloc_vec<T: Clone>(n: u64, value: T, what: &str) -> Result<Vec<T>> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>() as u64);
    let mut v = Vec::new();
    usize::try_from(n)
        .ok()
        .and_then(|n| v.try_reserve_exact(n).ok())
        .ok_or_else(|| {
            SimError::Invalid(format!(
                "cannot allocate {what}: {n} entries ({:.1} GiB); use a smaller device",
                bytes as f64 / (1u64 << 30) as f64
            ))
        })?;
    advise_huge_pages(&v);
    v.resize(n as usize, value);
    Ok(v)
}

/// [`alloc_vec`] when `on`, else an empty vector (tables kept only when a check asks for them).
pub fn alloc_vec_if<T: Clone>(on: bool, n: u64, value: T, what: &str) -> Result<Vec<T>> {
    if on {
        alloc_vec(n, value, what)
    } else {
        Ok(Vec::new())
    }
}

/// Ask the kernel to back the 2 MiB-aligned interior of `v`'s (untouched) allocation with huge
/// pages: the tables are accessed at random, and with 4 KiB pages nearly every access to a
/// multi-MiB table also misses the TLB (a page walk, dearer still in a virtual machine).
/// Best effort: where transparent huge pages are off, nothing changes.
fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let (lo, hi) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if hi > lo {
            // SAFETY: the range lies inside `v`'s allocation; MADV_HUGEPAGE changes no contents.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
}

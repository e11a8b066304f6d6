//! Synthetic workloads, deterministic by seed: uniform, Zipf(θ), sequential streams, fio-like
//! jobs, and the `desktop` profile. Each yields [`Request`]s with 100 µs inter-arrival times.
//! Stream hints (`dev`) are the sequential stream index, so multi-frontier FTLs can use them.

use crate::config::WorkloadConfig;
use crate::error::{Result, SimError};
use crate::request::{Op, Request};
use crate::rng::{Rng, Zipf};

const PAGE: u64 = 4096;
const DESKTOP_BLOCK_PAGES: u64 = 128; // 512 KiB regions, as the seed-000 block size

#[derive(Clone, Copy, Debug, PartialEq)]
enum Pattern {
    Random,
    Sequential,
    Desktop,
}

#[derive(Clone, Debug)]
pub struct Synth {
    pattern: Pattern,
    rng: Rng,
    requests: u64,
    emitted: u64,
    request_bytes: u64,
    footprint_bytes: u64,
    slots: u64,
    read_fraction: f64,
    zipf: Option<Zipf>,
    /// Multiplier of the affine permutation that scatters hot ranks over the address space.
    perm_a: u64,
    perm_b: u64,
    /// Per-stream next offset (sequential, desktop bursts).
    stream_pos: Vec<u64>,
    // desktop state
    burst_left: u32,
    burst_pos: u64,
    regions: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Synth {
    pub fn new(w: &WorkloadConfig, seed: u64) -> Result<Synth> {
        let mut rng = Rng::new(seed);
        let request_bytes = w.request_bytes.0;
        let footprint_bytes = w.footprint_bytes.0;
        let pattern = match (w.kind.as_str(), w.rw.as_str()) {
            ("uniform" | "zipf", _) => Pattern::Random,
            ("sequential", _) | ("fio", "write") => Pattern::Sequential,
            ("fio", _) => Pattern::Random,
            ("desktop", _) => Pattern::Desktop,
            (k, _) => {
                return Err(SimError::config(
                    "workload.kind",
                    format!("`{k}` is not a synthetic workload"),
                ))
            }
        };
        let theta = match w.kind.as_str() {
            "uniform" | "sequential" => 0.0,
            _ => w.zipf_theta,
        };
        let slots = match pattern {
            Pattern::Desktop => footprint_bytes / (DESKTOP_BLOCK_PAGES * PAGE),
            _ => footprint_bytes / request_bytes,
        };
        if slots == 0 {
            return Err(SimError::config(
                "workload.footprint_bytes",
                format!(
                    "{footprint_bytes} is too small for this workload (desktop needs ≥ 512 KiB)"
                ),
            ));
        }
        let zipf = (theta > 0.0).then(|| Zipf::new(slots, theta));
        let mut perm_a = 0x9E37_79B9_7F4A_7C15 % slots.max(2) | 1;
        while gcd(perm_a, slots) != 1 {
            perm_a += 2;
        }
        let perm_b = rng.below(slots);
        let read_fraction = if w.kind == "fio" && w.rw == "write" {
            0.0
        } else {
            w.read_fraction
        };
        let streams = w.streams.max(1) as u64;
        let stream_pos = match pattern {
            Pattern::Sequential => (0..streams)
                .map(|i| (footprint_bytes / streams * i) / request_bytes * request_bytes)
                .collect(),
            _ => vec![0],
        };
        Ok(Synth {
            pattern,
            rng,
            requests: w.requests,
            emitted: 0,
            request_bytes,
            footprint_bytes,
            slots,
            read_fraction,
            zipf,
            perm_a,
            perm_b,
            stream_pos,
            burst_left: 0,
            burst_pos: 0,
            regions: slots,
        })
    }

    pub fn len(&self) -> u64 {
        self.requests
    }

    pub fn is_empty(&self) -> bool {
        self.requests == 0
    }

    /// A slot index: uniform, or Zipf rank scattered by an affine permutation.
    #[inline]
    fn pick_slot(&mut self) -> u64 {
        match &self.zipf {
            None => self.rng.below(self.slots),
            Some(z) => {
                let rank = z.sample(&mut self.rng) - 1;
                ((rank as u128 * self.perm_a as u128 + self.perm_b as u128) % self.slots as u128)
                    as u64
            }
        }
    }

    fn next_desktop(&mut self, op: Op) -> (u64, u64, u32) {
        if op == Op::Read {
            let region = self.pick_slot();
            let pages = 1 + self.rng.below(8);
            let off = self.rng.below(DESKTOP_BLOCK_PAGES - pages + 1);
            return ((region * DESKTOP_BLOCK_PAGES + off) * PAGE, pages * PAGE, 0);
        }
        if self.burst_left > 0 {
            // Continue a sequential file write where the last request of the burst ended.
            self.burst_left -= 1;
            let len = (4 + self.rng.below(29)) * PAGE; // 16..128 KiB
            let off = if self.burst_pos + len > self.footprint_bytes {
                0
            } else {
                self.burst_pos
            };
            self.burst_pos = off + len;
            return (off, len, 1);
        }
        // A burst of mean 8 requests (7 sequential) starts with probability q = 0.3/4.9, so that
        // ~30% of write requests continue the previous one (seed 000 Table 4).
        if self.rng.f64() < 0.3 / 4.9 {
            self.burst_left = 1 + self.rng.below(13) as u32; // 1..13 more, mean 7
            let len = (4 + self.rng.below(29)) * PAGE;
            let region = self.rng.below(self.regions);
            let off = region * DESKTOP_BLOCK_PAGES * PAGE;
            let off = if off + len > self.footprint_bytes {
                0
            } else {
                off
            };
            self.burst_pos = off + len;
            return (off, len, 1);
        }
        // Small random update of a Zipf-hot region: mostly one page, sometimes a few sectors.
        let region = self.pick_slot();
        let r = self.rng.f64();
        let (start_sector, sectors) = if r < 0.1 {
            let s = 1 + self.rng.below(7);
            (self.rng.below(DESKTOP_BLOCK_PAGES * 8 - s + 1), s)
        } else {
            let pages = if r < 0.7 { 1 } else { 2 + self.rng.below(3) };
            (
                self.rng.below(DESKTOP_BLOCK_PAGES - pages + 1) * 8,
                pages * 8,
            )
        };
        (
            (region * DESKTOP_BLOCK_PAGES * PAGE) + start_sector * 512,
            sectors * 512,
            0,
        )
    }
}

impl Iterator for Synth {
    type Item = Result<Request>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.emitted >= self.requests {
            return None;
        }
        let time_us = self.emitted as f64 * 100.0;
        self.emitted += 1;
        let op = if self.read_fraction > 0.0 && self.rng.f64() < self.read_fraction {
            Op::Read
        } else {
            Op::Write
        };
        let (offset_bytes, len_bytes, dev) = match self.pattern {
            Pattern::Random => (self.pick_slot() * self.request_bytes, self.request_bytes, 0),
            Pattern::Sequential => {
                let s = self.rng.below(self.stream_pos.len() as u64) as usize;
                let mut off = self.stream_pos[s];
                if off + self.request_bytes > self.footprint_bytes {
                    off = 0;
                }
                self.stream_pos[s] = off + self.request_bytes;
                (off, self.request_bytes, s as u32)
            }
            Pattern::Desktop => self.next_desktop(op),
        };
        Some(Ok(Request {
            time_us,
            op,
            offset_bytes,
            len_bytes,
            dev,
        }))
    }
}

//! `hwb`: seed 003's hotness-aware write buffer (P. Li; ALGORITHMS.md §1.13).
//!
//! * Three regions: **hot** and **warm** hold pages (LRU lists, newest at the head), **cold**
//!   holds blocks (an LRU list of LBN nodes, each with that LBN's cold pages). Capacity and
//!   region sizes count pages; the sizes start equal (the remainder goes to cold) and sum to the
//!   capacity.
//! * When pages leave (`evict_when`): the seed applies its cases "if buffer is full", so by
//!   default (`buffer_full`) a region's size is a target that free space may exceed: while the
//!   buffer has a free page when a write arrives, pages move between regions as the cases say
//!   but nothing is demoted to make room or flushed. In a full buffer each case evicts one
//!   victim from the region a page enters when that region holds its size (cascading down as
//!   below); should the buffer then hold one page too many (the page entered a region below its
//!   size), the highest region above its size gives up its tail, until it fits. `region_full`
//!   evicts as soon as the region a page enters holds its size, however empty the buffer, so
//!   that each region holds at most its size after every page write.
//! * Temperature (Eq 1): T = α·F_self/F_avg + (1−α)·D_avg/D_predict, D_predict = 2λ·D_last + β
//!   (Eq 2), λ = D_last/D_last-one when D_last-one < D_last, else 0; β = an observed re-use
//!   distance minus its estimate. Every buffered page carries its metadata (Pt, D_last-one,
//!   D_last, D_avg, β, F_self); a flushed (or trimmed) page's metadata moves to the ghost buffer,
//!   a FIFO of `ghost_fraction` × capacity entries, where a later write finds it (ghost hit).
//! * Writes (seed §III.D, the five cases): (1) buffer and ghost miss → into its block in cold;
//!   (2) ghost hit → warm if T > T(warm tail), else cold; (3) cold hit → warm if T > T(warm
//!   tail), else its block moves to the cold head; (4) warm hit → hot if T > T(hot tail), else
//!   warm head; (5) hot hit → hot head. A page entering a full region (in a full buffer, by
//!   default) first evicts from it:
//!   hot tail → warm head if its T > T(warm tail), else into its cold block; warm tail → into its
//!   cold block (the block moves to the cold head); cold tail block → flushed whole.
//! * Region sizes: promotions (cold → warm, warm → hot) and demotions (hot → warm, hot → cold,
//!   warm → cold) are counted per pair of regions; when a count exceeds `resize_threshold` (A)
//!   the source region gives one page of size to the destination (no region below one page) and
//!   the count restarts.
//! * Cold eviction: passive (the tail block when cold is full) or active (also, after every page
//!   write, the tail block while ED = Pt + D_predict < CT, Eq 3).
//! * Flushes: only cold blocks, whole, in ascending offset, padded per the padding policy
//!   (default none). Hot and warm pages leave only by demotion into their cold block, so a page
//!   is flushed alone only when its block holds no other page. `flush_all` first demotes every
//!   warm, then every hot page (tail first) into its block, then flushes cold from the tail.
//! * Reads are served from the buffer but change nothing (the seed describes writes only).
//!
//! Where the seed is silent each choice is a parameter (its doc says which and why).

use super::index::{checked_key, LpnIndex};
use super::list::{Links, List, NIL};
use super::{
    choice, flush_gathered, unit_interval, BufferParams, FlushSink, HostPage, PageWrite,
    WriteBuffer,
};
use crate::error::{Result, SimError};
use crate::ftl::FtlView;
use crate::padding::Padding;
use crate::units::{Divisor, Lbn, Lpn, SectorMask};

crate::params! {
    /// HWB's parameters (`[buffer.hwb]`).
    pub struct Params {
        /// Cold-region eviction: passive (flush the cold tail block only when the cold region
        /// is full) | active (also, after every page write, flush the cold tail block while its
        /// ED (Eq 3, `ed_distance`) is below CT, the current time; a block's Pt, λ, D_last and
        /// β are those of its most recently written page). The seed does not say which one its
        /// evaluation used; passive is the base policy that active adds to.
        cold_eviction: String = "passive".into(),
        /// α at the start (the seed: 0.5 at boot), in [0, 1].
        initial_alpha: f64 = 0.5,
        /// Adaptation of α, which the seed leaves unspecified ("adjusted according to access
        /// pattern"): at every temperature comparison of a page just written (cases 2–4)
        /// against a region's tail, the term (F_self/F_avg or D_avg/D_predict) that alone ranks
        /// the written page above the tail gets a vote; at the end of every `period`, α moves by
        /// this step towards the term with more votes, within [0, 1]. 0 keeps α fixed.
        alpha_step: f64 = 0.05,
        /// The "last time period" of F_self and F_avg, in `clock` units (0 = the buffer's
        /// capacity in pages, about the time a page stays buffered without hits); α adapts at
        /// its end. F_self = the page's writes in the current and the previous period (a window
        /// of 1–2 periods, including the write being handled); F_avg = the mean F_self of the
        /// buffered pages (0 makes the frequency term 0).
        period: u64 = 0,
        /// Unit of time for Pt, CT, the re-use distances and `period`: requests (host write
        /// requests, as Eq 3 counts Pt and CT) | page_writes. The seed defines the re-use
        /// distance as distinct pages between two accesses but adds it to Pt and compares with a
        /// count of write requests (Eq 3), so here a distance is now − Pt (at least 1), not a
        /// count of distinct pages.
        clock: String = "requests".into(),
        /// β of a page before its first re-use. With 0 the first re-use d makes β = d, so
        /// D_predict = D_last until a trend shows; a D_predict below 1 (λ = 0, β ≤ 0) counts as
        /// 1, the shortest distance.
        initial_beta: f64 = 0.0,
        /// The estimate β is the error of ("the difference between actual observed value and
        /// estimate value"): prediction (β = d − the previous D_predict, itself including the
        /// previous β) | scaled_term (β = d − the previous 2λ·D_last).
        beta_error: String = "prediction".into(),
        /// The distance term of ED in Eq 3, printed "2^2 * D_last + β": predicted (2λ·D_last +
        /// β = D_predict, reading "2^2" as a garbled 2λ: ED is the predicted time of the next
        /// access) | four (4·D_last + β, as printed). Both count at least 1.
        ed_distance: String = "predicted".into(),
        /// Ghost-buffer entries per buffer page (the seed gives no size), in [0, 64]; 0 = no
        /// ghost, so every buffer miss is case 1.
        ghost_fraction: f64 = 1.0,
        /// Threshold A (the seed gives no value): moves are counted per pair of regions
        /// (promotions H: cold → warm, warm → hot; demotions L: hot → warm, hot → cold, warm →
        /// cold); when a count exceeds A the source region gives one page of its size to the
        /// destination (no region below one page) and the count restarts.
        resize_threshold: u64 = 32,
        /// false (the seed's rule): a page that would move into the warm or hot region (cases
        /// 2–4, the hot region's eviction) does so only if it is hotter than that region's tail
        /// whenever the region has one (seed 003 §III.D, case 3: "HWB computes its temperature
        /// and compares it to that of the page B at the tail of the warm list. If A's
        /// temperature is higher, ... A is inserted into the head of the warm list. Or else, the
        /// block containing the page is moved to the head of the cold list"); an empty region
        /// takes it. true: it moves without a comparison while the region holds fewer pages
        /// than its size (a reading of the cases, stated "if buffer is full", as comparisons
        /// only for a full region).
        promote_into_free: bool = false,
        /// When pages are demoted and flushed to make room: buffer_full (the seed's "if buffer
        /// is full": only when a write finds every page of the buffer taken, one victim per
        /// case; a region's size is a target that free space may exceed, and a full buffer
        /// short of room takes it from the highest region above its size) | region_full (as
        /// soon as the region a page enters holds its size, however empty the buffer).
        evict_when: String = "buffer_full".into(),
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        Settings::from_params(self, table, 1).map(|_| ())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColdEviction {
    Passive,
    Active,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    Requests,
    PageWrites,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BetaError {
    Prediction,
    ScaledTerm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdDistance {
    Predicted,
    Four,
}

/// The parameters resolved for a buffer of a given capacity.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub cold_eviction: ColdEviction,
    /// `evict_when = "buffer_full"` (else region_full).
    pub buffer_full: bool,
    pub alpha: f64,
    pub alpha_step: f64,
    pub period: u64,
    pub clock: Clock,
    pub initial_beta: f64,
    pub beta_error: BetaError,
    pub ed_distance: EdDistance,
    pub ghost_entries: u64,
    pub resize_threshold: u64,
    pub promote_into_free: bool,
}

impl Settings {
    pub fn from_params(p: &Params, table: &str, capacity: u64) -> Result<Self> {
        unit_interval(table, "initial_alpha", p.initial_alpha)?;
        unit_interval(table, "alpha_step", p.alpha_step)?;
        if !p.initial_beta.is_finite() {
            return Err(SimError::config(
                format!("{table}.initial_beta"),
                format!("{} is not a finite number", p.initial_beta),
            ));
        }
        if !(0.0..=64.0).contains(&p.ghost_fraction) {
            return Err(SimError::config(
                format!("{table}.ghost_fraction"),
                format!("{} is not in [0, 64]", p.ghost_fraction),
            ));
        }
        Ok(Settings {
            cold_eviction: choice(
                table,
                "cold_eviction",
                &p.cold_eviction,
                &[
                    ("passive", ColdEviction::Passive),
                    ("active", ColdEviction::Active),
                ],
            )?,
            buffer_full: choice(
                table,
                "evict_when",
                &p.evict_when,
                &[("buffer_full", true), ("region_full", false)],
            )?,
            alpha: p.initial_alpha,
            alpha_step: p.alpha_step,
            period: if p.period == 0 {
                capacity.max(1)
            } else {
                p.period
            },
            clock: choice(
                table,
                "clock",
                &p.clock,
                &[
                    ("requests", Clock::Requests),
                    ("page_writes", Clock::PageWrites),
                ],
            )?,
            initial_beta: p.initial_beta,
            beta_error: choice(
                table,
                "beta_error",
                &p.beta_error,
                &[
                    ("prediction", BetaError::Prediction),
                    ("scaled_term", BetaError::ScaledTerm),
                ],
            )?,
            ed_distance: choice(
                table,
                "ed_distance",
                &p.ed_distance,
                &[
                    ("predicted", EdDistance::Predicted),
                    ("four", EdDistance::Four),
                ],
            )?,
            ghost_entries: (p.ghost_fraction * capacity as f64).round() as u64,
            resize_threshold: p.resize_threshold,
            promote_into_free: p.promote_into_free,
        })
    }
}

/// Regions, and the ghost buffer as a fourth place a node can be.
const HOT: usize = 0;
const WARM: usize = 1;
const COLD: usize = 2;
const GHOST: u8 = 3;

/// Region pairs whose moves are counted (H: promotions, L: demotions): (from, to).
const MOVES: [(usize, usize); 5] = [
    (COLD, WARM),
    (WARM, HOT),
    (HOT, WARM),
    (HOT, COLD),
    (WARM, COLD),
];

/// A page's access metadata (the ghost buffer's record; buffered pages carry it too).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Meta {
    /// Clock at the last access (Pt).
    pub pt: u64,
    /// Re-use distances seen, and their sum (D_avg = d_sum / n).
    pub n: u32,
    pub d_sum: u64,
    /// The last but one and the last re-use distance (0 = none yet).
    pub d_last_one: u64,
    pub d_last: u64,
    pub beta: f64,
    /// Writes in period `ep` (f_cur) and in period `ep` − 1 (f_prev).
    pub ep: u64,
    pub f_cur: u32,
    pub f_prev: u32,
}

impl Meta {
    /// λ of Eq 2: D_last / D_last-one when the distance grew (the page is cooling), else 0.
    pub fn lambda(&self) -> f64 {
        if self.d_last_one > 0 && self.d_last_one < self.d_last {
            self.d_last as f64 / self.d_last_one as f64
        } else {
            0.0
        }
    }
    /// 2λ·D_last + β, as computed (may be below 1).
    pub fn raw_predict(&self) -> f64 {
        2.0 * self.lambda() * self.d_last as f64 + self.beta
    }
    /// D_predict of Eq 2 (at least 1).
    pub fn predict(&self) -> f64 {
        self.raw_predict().max(1.0)
    }
    /// D_avg; 0 before the first re-use.
    pub fn d_avg(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.d_sum as f64 / self.n as f64
        }
    }
    /// Writes in the current period `e` and the previous one.
    fn freq(&self, e: u64) -> (u32, u32) {
        if self.ep == e {
            (self.f_cur, self.f_prev)
        } else if self.ep + 1 == e {
            (0, self.f_cur)
        } else {
            (0, 0)
        }
    }
    /// F_self at period `e`.
    pub fn f_self(&self, e: u64) -> u32 {
        let (c, p) = self.freq(e);
        c + p
    }
}

#[derive(Clone, Copy)]
struct Node {
    lpn: Lpn,
    mask: SectorMask,
    version: u32,
    hint: u32,
    /// HOT, WARM, COLD or GHOST.
    region: u8,
    m: Meta,
}

/// A cold block: its LBN's cold pages, and the one written last (for the flush hint and ED).
#[derive(Clone, Copy)]
struct Block {
    lbn: Lbn,
    pages: List,
    rep: u32,
}

/// Hot, warm, cold (LBN, pages) and ghost LPNs, as tests see them.
#[cfg(test)]
type State = (Vec<Lpn>, Vec<Lpn>, Vec<(Lbn, Vec<Lpn>)>, Vec<Lpn>);

pub struct HwbBuffer {
    p: Settings,
    ppb: Divisor,
    ppb_n: u64,
    nodes: Vec<Node>,
    free_nodes: Vec<u32>,
    /// Node links: each node is in exactly one of hot, warm, ghost or a block's page list.
    links: Links,
    hot: List,
    warm: List,
    ghost: List,
    /// Buffered and ghost pages → their node.
    index: LpnIndex,
    blocks: Vec<Block>,
    free_blocks: Vec<u32>,
    /// LBN → its cold block (NIL: none).
    block_of: Vec<u32>,
    /// The cold list of blocks, newest at the head.
    blinks: Links,
    cold: List,
    size: [u64; 3],
    occ: [u64; 3],
    capacity: u64,
    /// The buffer was full when the write being handled arrived (`buffer_full`: room is made).
    full: bool,
    /// Moves per [`MOVES`] pair since that pair last resized.
    moves: [u64; 5],
    now: u64,
    epoch: u64,
    /// Σ of the buffered pages' writes in the current and in the previous period, and the
    /// number of buffered pages (pages between regions during a write included).
    s_cur: u64,
    s_prev: u64,
    n_buf: u64,
    alpha: f64,
    votes_f: u64,
    votes_r: u64,
    padding: Box<dyn Padding>,
    scratch: Vec<PageWrite>,
}

impl HwbBuffer {
    pub fn new(bp: BufferParams, q: &Params) -> Result<Self> {
        let p = Settings::from_params(q, "buffer.hwb", bp.capacity_pages)?;
        Ok(Self::with_settings(bp, p))
    }

    pub fn with_settings(bp: BufferParams, p: Settings) -> Self {
        let cap = bp.capacity_pages;
        let third = cap / 3;
        HwbBuffer {
            ppb: Divisor::new(bp.pages_per_block),
            ppb_n: bp.pages_per_block,
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            links: Links::default(),
            hot: List::default(),
            warm: List::default(),
            ghost: List::default(),
            index: LpnIndex::new(cap.saturating_add(p.ghost_entries)),
            blocks: Vec::new(),
            free_blocks: Vec::new(),
            block_of: Vec::new(),
            blinks: Links::default(),
            cold: List::default(),
            size: [third, third, cap - 2 * third],
            occ: [0; 3],
            capacity: cap,
            full: true,
            moves: [0; 5],
            now: 0,
            epoch: 0,
            s_cur: 0,
            s_prev: 0,
            n_buf: 0,
            alpha: p.alpha,
            votes_f: 0,
            votes_r: 0,
            p,
            padding: bp.padding,
            scratch: Vec::new(),
        }
    }

    /// Region sizes (hot, warm, cold) in pages.
    pub fn sizes(&self) -> [u64; 3] {
        self.size
    }
    /// Current α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// One clock tick: a new write request or page write. A period boundary rolls the
    /// frequency sums and adapts α.
    fn tick(&mut self) {
        self.now += 1;
        let e = self.now / self.p.period;
        while self.epoch < e {
            self.epoch += 1;
            self.s_prev = self.s_cur;
            self.s_cur = 0;
            let step = self.p.alpha_step;
            if self.votes_f > self.votes_r {
                self.alpha = (self.alpha + step).min(1.0);
            } else if self.votes_r > self.votes_f {
                self.alpha = (self.alpha - step).max(0.0);
            }
            self.votes_f = 0;
            self.votes_r = 0;
        }
    }

    fn fresh_meta(&self) -> Meta {
        Meta {
            pt: self.now,
            n: 0,
            d_sum: 0,
            d_last_one: 0,
            d_last: 0,
            beta: self.p.initial_beta,
            ep: self.epoch,
            f_cur: 1,
            f_prev: 0,
        }
    }

    /// A write of node `i` (a re-access): distances, β, Pt and F_self. `buffered` adds the write
    /// to the frequency sums.
    fn access(&mut self, i: u32, buffered: bool) {
        let (now, e, how) = (self.now, self.epoch, self.p.beta_error);
        let m = &mut self.nodes[i as usize].m;
        let d = now.saturating_sub(m.pt).max(1);
        let estimate = match how {
            BetaError::Prediction => m.raw_predict(),
            BetaError::ScaledTerm => 2.0 * m.lambda() * m.d_last as f64,
        };
        m.beta = d as f64 - estimate;
        m.d_last_one = m.d_last;
        m.d_last = d;
        m.n += 1;
        m.d_sum += d;
        m.pt = now;
        let (c, p) = m.freq(e);
        (m.ep, m.f_cur, m.f_prev) = (e, c + 1, p);
        if buffered {
            self.s_cur += 1;
        }
    }

    /// Node `i` becomes buffered (`join`) or stops being buffered: its writes join or leave the
    /// frequency sums.
    fn account(&mut self, i: u32, join: bool) {
        let (c, p) = self.nodes[i as usize].m.freq(self.epoch);
        if join {
            self.s_cur += c as u64;
            self.s_prev += p as u64;
            self.n_buf += 1;
        } else {
            self.s_cur -= c as u64;
            self.s_prev -= p as u64;
            self.n_buf -= 1;
        }
    }

    /// The two terms of Eq 1 for metadata `m`: F_self/F_avg and D_avg/D_predict (0 when F_avg
    /// = 0 or before the first re-use).
    pub fn terms_of(&self, m: &Meta) -> (f64, f64) {
        let dirty = self.n_buf;
        let sum = self.s_cur + self.s_prev;
        let f = if dirty > 0 && sum > 0 {
            m.f_self(self.epoch) as f64 * dirty as f64 / sum as f64
        } else {
            0.0
        };
        let r = if m.n == 0 {
            0.0
        } else {
            m.d_avg() / m.predict()
        };
        (f, r)
    }

    /// T of Eq 1.
    pub fn temperature(&self, m: &Meta) -> f64 {
        let (f, r) = self.terms_of(m);
        self.alpha * f + (1.0 - self.alpha) * r
    }

    fn list(&self, r: usize) -> List {
        if r == HOT {
            self.hot
        } else {
            self.warm
        }
    }

    /// Whether node `a` moves into region `r` (warm or hot): if `r` has no page, or if T(a) >
    /// T(r's tail) (the seed's cases), or, with `promote_into_free`, if `r` has a free slot.
    /// `written`: `a` is the page
    /// being written (its comparison votes on α).
    fn moves_up(&mut self, a: u32, r: usize, written: bool) -> bool {
        if self.size[r] == 0 {
            return false;
        }
        let tail = self.list(r).tail;
        if tail == NIL || (self.p.promote_into_free && self.occ[r] < self.size[r]) {
            return true;
        }
        let (fa, ra) = self.terms_of(&self.nodes[a as usize].m);
        let (fb, rb) = self.terms_of(&self.nodes[tail as usize].m);
        if written {
            match (fa > fb, ra > rb) {
                (true, false) => self.votes_f += 1,
                (false, true) => self.votes_r += 1,
                _ => {}
            }
        }
        let alpha = self.alpha;
        alpha * fa + (1.0 - alpha) * ra > alpha * fb + (1.0 - alpha) * rb
    }

    /// Count a move between regions; above the threshold the source gives a page of size.
    fn moved(&mut self, from: usize, to: usize) {
        let k = MOVES.iter().position(|&m| m == (from, to)).unwrap_or(0);
        self.moves[k] += 1;
        if self.moves[k] > self.p.resize_threshold {
            self.moves[k] = 0;
            if self.size[from] > 1 {
                self.size[from] -= 1;
                self.size[to] += 1;
            }
        }
    }

    fn push_page(&mut self, r: usize, i: u32) {
        let l = if r == HOT {
            &mut self.hot
        } else {
            &mut self.warm
        };
        self.links.push_front(l, i);
        self.nodes[i as usize].region = r as u8;
        self.occ[r] += 1;
    }

    fn pop_page(&mut self, r: usize, i: u32) {
        let l = if r == HOT {
            &mut self.hot
        } else {
            &mut self.warm
        };
        self.links.remove(l, i);
        self.occ[r] -= 1;
    }

    /// Put node `i` into its LBN's block in the cold region and move the block to the head.
    fn join_cold(&mut self, i: u32) {
        let lbn = self.ppb.quot(self.nodes[i as usize].lpn);
        let b = match self
            .block_of
            .get(lbn as usize)
            .copied()
            .filter(|&b| b != NIL)
        {
            Some(b) => {
                self.blinks.move_to_front(&mut self.cold, b);
                b
            }
            None => {
                let block = Block {
                    lbn,
                    pages: List::default(),
                    rep: NIL,
                };
                let b = crate::list::alloc(&mut self.blocks, &mut self.free_blocks, block);
                if self.block_of.len() <= lbn as usize {
                    self.block_of.resize(lbn as usize + 1, NIL);
                }
                self.block_of[lbn as usize] = b;
                self.blinks.push_front(&mut self.cold, b);
                b
            }
        };
        let blk = &mut self.blocks[b as usize];
        self.links.push_front(&mut blk.pages, i);
        let rep = blk.rep;
        if rep == NIL || self.nodes[i as usize].m.pt >= self.nodes[rep as usize].m.pt {
            self.blocks[b as usize].rep = i;
        }
        self.nodes[i as usize].region = COLD as u8;
        self.occ[COLD] += 1;
    }

    /// Take node `i` out of its cold block (the block goes when empty).
    fn leave_cold(&mut self, i: u32) {
        let lbn = self.ppb.quot(self.nodes[i as usize].lpn);
        let b = self.block_of[lbn as usize];
        let blk = &mut self.blocks[b as usize];
        self.links.remove(&mut blk.pages, i);
        self.occ[COLD] -= 1;
        if blk.pages.len == 0 {
            self.blinks.remove(&mut self.cold, b);
            self.block_of[lbn as usize] = NIL;
            self.free_blocks.push(b);
        } else if blk.rep == i {
            // The most recently written of the remaining pages (ties: nearest the head).
            let mut cur = blk.pages.head;
            let mut best = cur;
            while cur != NIL {
                if self.nodes[cur as usize].m.pt > self.nodes[best as usize].m.pt {
                    best = cur;
                }
                cur = self.links.next(cur);
            }
            self.blocks[b as usize].rep = best;
        }
    }

    /// Node `i` (in no list) keeps only its metadata, in the ghost buffer.
    fn join_ghost(&mut self, i: u32) {
        let n = &mut self.nodes[i as usize];
        n.region = GHOST;
        n.mask = 0;
        if self.p.ghost_entries == 0 {
            self.forget(i);
            return;
        }
        self.links.push_front(&mut self.ghost, i);
        if self.ghost.len as u64 > self.p.ghost_entries {
            let t = self.ghost.tail;
            self.links.remove(&mut self.ghost, t);
            self.forget(t);
            // The next entries to go (FIFO): start loading the index slot of the new tail (its
            // node was loaded one step ago) and the node of the one after it.
            let t1 = self.ghost.tail;
            if t1 != NIL {
                self.index.prefetch(self.nodes[t1 as usize].lpn);
                let t2 = self.links.prev(t1);
                if t2 != NIL {
                    crate::units::prefetch(&self.nodes, t2 as usize);
                }
            }
        }
    }

    fn forget(&mut self, i: u32) {
        // Checked by `checked_key` when the page was buffered.
        self.index.remove(self.nodes[i as usize].lpn as u32);
        self.free_nodes.push(i);
    }

    /// Make room for one page in region `r` (its size is at least 1). `buffer_full`: only in a
    /// buffer that was full when the write arrived, and one victim (the seed's cases each evict
    /// one: "B is evicted", "the block at the tail of the cold list is written back"), as a
    /// region above its size may stay so; [`Self::settle`] then keeps the capacity.
    fn make_room(&mut self, r: usize, sink: &mut dyn FlushSink) -> Result<()> {
        if self.p.buffer_full {
            if self.full && self.occ[r] >= self.size[r] && self.occ[r] > 0 {
                self.evict_one(r, sink)?;
            }
            return Ok(());
        }
        while self.occ[r] >= self.size[r] && self.occ[r] > 0 {
            self.evict_one(r, sink)?;
        }
        Ok(())
    }

    /// The eviction case of region `r` (seed §III.D, "how to flush a victim page").
    fn evict_one(&mut self, r: usize, sink: &mut dyn FlushSink) -> Result<()> {
        match r {
            HOT => {
                let b = self.hot.tail;
                self.pop_page(HOT, b);
                if self.moves_up(b, WARM, false) {
                    self.make_room(WARM, sink)?;
                    self.push_page(WARM, b);
                    self.moved(HOT, WARM);
                } else {
                    self.make_room(COLD, sink)?;
                    self.join_cold(b);
                    self.moved(HOT, COLD);
                }
            }
            WARM => {
                let b = self.warm.tail;
                self.pop_page(WARM, b);
                self.make_room(COLD, sink)?;
                self.join_cold(b);
                self.moved(WARM, COLD);
            }
            _ => self.flush_block(self.cold.tail, sink)?,
        }
        Ok(())
    }

    /// Flush cold block `b` whole in ascending offset; its pages' metadata go to the ghost.
    fn flush_block(&mut self, b: u32, sink: &mut dyn FlushSink) -> Result<()> {
        let blk = self.blocks[b as usize];
        self.blinks.remove(&mut self.cold, b);
        self.block_of[blk.lbn as usize] = NIL;
        self.free_blocks.push(b);
        let hint = self.nodes[blk.rep as usize].hint;
        self.scratch.clear();
        let mut cur = blk.pages.head;
        while cur != NIL {
            let next = self.links.next(cur);
            let n = self.nodes[cur as usize];
            self.scratch.push(PageWrite {
                offset: self.ppb.modulo(n.lpn) as u32,
                mask: n.mask,
                version: n.version,
            });
            self.account(cur, false);
            // The block's list is dropped whole: joining the ghost relinks the node.
            self.join_ghost(cur);
            cur = next;
        }
        self.occ[COLD] -= blk.pages.len as u64;
        let r = flush_gathered(
            &mut self.scratch,
            blk.lbn,
            hint,
            self.ppb_n,
            &mut *self.padding,
            sink,
        );
        self.prefetch_victims(sink);
        r
    }

    /// Start loading what the next cold victims' flushes touch, in stages a flush apart (the
    /// tail moves up one block per flush): the FTL's deep entries for the new tail block's
    /// pages (their L2P entries were loaded a flush ago), the L2P entries for the block above
    /// it (its nodes were loaded a flush ago), and the first node of the block above that.
    /// Changes nothing.
    #[inline]
    fn prefetch_victims(&self, sink: &dyn FlushSink) {
        let t1 = self.cold.tail;
        if t1 == NIL {
            return;
        }
        let pages = |b: u32, deep: bool| {
            let mut c = self.blocks[b as usize].pages.head;
            while c != NIL {
                sink.prefetch(self.nodes[c as usize].lpn, deep);
                c = self.links.next(c);
            }
        };
        sink.prefetch_unit(self.blocks[t1 as usize].lbn);
        pages(t1, true);
        let t2 = self.blinks.prev(t1);
        if t2 == NIL {
            return;
        }
        pages(t2, false);
        let t3 = self.blinks.prev(t2);
        if t3 != NIL {
            let head = self.blocks[t3 as usize].pages.head;
            crate::units::prefetch(&self.nodes, head as usize);
        }
    }

    /// ED of Eq 3 for cold block `b`, from its most recently written page.
    pub fn ed_of_block(&self, b: u32) -> f64 {
        let m = &self.nodes[self.blocks[b as usize].rep as usize].m;
        let dist = match self.p.ed_distance {
            EdDistance::Predicted => m.predict(),
            EdDistance::Four => (4.0 * m.d_last as f64 + m.beta).max(1.0),
        };
        m.pt as f64 + dist
    }

    /// `region_full`: bring every region within its size (after a resize), highest region
    /// first. `buffer_full`: bring the buffer within its capacity (a page entered a full buffer
    /// through a region below its size), taking from the highest region above its size (the
    /// sizes sum to the capacity, so there is one); pages only move down, so this ends.
    fn settle(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        loop {
            if self.p.buffer_full && self.pages() <= self.capacity {
                return Ok(());
            }
            let r = match (0..3).find(|&r| self.occ[r] > self.size[r]) {
                Some(r) => r,
                None => return Ok(()),
            };
            self.evict_one(r, sink)?;
        }
    }

    /// Active eviction: flush the cold tail block while ED < CT.
    fn active(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        while self.cold.tail != NIL && self.ed_of_block(self.cold.tail) < self.now as f64 {
            self.flush_block(self.cold.tail, sink)?;
        }
        Ok(())
    }

    fn new_node(&mut self, node: Node) -> u32 {
        match self.free_nodes.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Cases 1 and 2: page `new` (key `k`) is not buffered; `ghost` is its ghost node if any.
    fn insert(
        &mut self,
        k: u32,
        new: Node,
        ghost: Option<u32>,
        sink: &mut dyn FlushSink,
    ) -> Result<()> {
        let i = match ghost {
            Some(i) => {
                // Out of the ghost first, so that the flushes below cannot drop it.
                self.links.remove(&mut self.ghost, i);
                self.access(i, false);
                let n = &mut self.nodes[i as usize];
                (n.mask, n.version, n.hint) = (new.mask, new.version, new.hint);
                i
            }
            None => NIL,
        };
        if i != NIL && self.moves_up(i, WARM, true) {
            self.make_room(WARM, sink)?;
            self.push_page(WARM, i);
            self.account(i, true);
            return Ok(());
        }
        self.make_room(COLD, sink)?;
        let i = if i == NIL {
            let i = self.new_node(new);
            // The flushes may have moved index entries: look the slot up again.
            let (pos, _) = self.index.find(k);
            self.index.insert_at(pos, k, i);
            i
        } else {
            i
        };
        self.join_cold(i);
        self.account(i, true);
        Ok(())
    }

    /// Cases 3–5: a write hit on node `i`.
    fn hit(&mut self, i: u32, sink: &mut dyn FlushSink) -> Result<()> {
        self.access(i, true);
        match self.nodes[i as usize].region as usize {
            COLD => {
                if self.moves_up(i, WARM, true) {
                    self.leave_cold(i);
                    self.make_room(WARM, sink)?;
                    self.push_page(WARM, i);
                    self.moved(COLD, WARM);
                } else {
                    let b = self.block_of[self.ppb.quot(self.nodes[i as usize].lpn) as usize];
                    self.blocks[b as usize].rep = i;
                    self.blinks.move_to_front(&mut self.cold, b);
                }
            }
            WARM => {
                if self.moves_up(i, HOT, true) {
                    self.pop_page(WARM, i);
                    self.make_room(HOT, sink)?;
                    self.push_page(HOT, i);
                    self.moved(WARM, HOT);
                } else {
                    self.links.move_to_front(&mut self.warm, i);
                }
            }
            _ => self.links.move_to_front(&mut self.hot, i),
        }
        Ok(())
    }

    /// Every node's place, for tests: hot and warm LPNs (head first), cold blocks (head first)
    /// with their LPNs (head first), ghost LPNs (newest first).
    #[cfg(test)]
    fn state(&self) -> State {
        let walk = |l: &List| {
            let mut v = Vec::new();
            let mut c = l.head;
            while c != NIL {
                v.push(self.nodes[c as usize].lpn);
                c = self.links.next(c);
            }
            v
        };
        let mut cold = Vec::new();
        let mut b = self.cold.head;
        while b != NIL {
            let blk = &self.blocks[b as usize];
            cold.push((blk.lbn, walk(&blk.pages)));
            b = self.blinks.next(b);
        }
        (walk(&self.hot), walk(&self.warm), cold, walk(&self.ghost))
    }

    #[cfg(test)]
    fn meta(&self, lpn: Lpn) -> Meta {
        self.nodes[self.index.get(lpn as u32).unwrap() as usize].m
    }
}

impl WriteBuffer for HwbBuffer {
    /// The index slot where the lookup of `lpn` starts.
    #[inline]
    fn prefetch(&mut self, lpn: Lpn) {
        self.index.prefetch(lpn);
    }

    fn begin_request(&mut self) {
        if self.p.clock == Clock::Requests {
            self.tick();
        }
    }

    fn write(&mut self, page: HostPage, sink: &mut dyn FlushSink) -> Result<SectorMask> {
        let k = checked_key(page.lpn)?;
        if self.p.clock == Clock::PageWrites {
            self.tick();
        }
        self.full = self.pages() >= self.capacity;
        let (pos, found) = self.index.find(k);
        let node = found.then(|| self.index.value(pos));
        let before = match node {
            Some(i) if self.nodes[i as usize].region != GHOST => {
                let n = &mut self.nodes[i as usize];
                let before = n.mask;
                n.mask |= page.mask;
                n.version = page.version;
                n.hint = page.hint;
                self.hit(i, sink)?;
                before
            }
            ghost => {
                let new = Node {
                    lpn: page.lpn,
                    mask: page.mask,
                    version: page.version,
                    hint: page.hint,
                    region: GHOST,
                    m: self.fresh_meta(),
                };
                self.insert(k, new, ghost, sink)?;
                0
            }
        };
        self.settle(sink)?;
        if self.p.cold_eviction == ColdEviction::Active {
            self.active(sink)?;
        }
        Ok(before)
    }

    fn read(&mut self, lpn: Lpn, _: SectorMask, _: &mut dyn FlushSink) -> Result<SectorMask> {
        Ok(self.index.page(&self.nodes, lpn).map_or(0, |n| n.mask))
    }

    fn trim(&mut self, lpn: Lpn) {
        let Some(i) = self.index.lookup(lpn) else {
            return;
        };
        match self.nodes[i as usize].region as usize {
            HOT => self.pop_page(HOT, i),
            WARM => self.pop_page(WARM, i),
            COLD => self.leave_cold(i),
            _ => return,
        }
        self.account(i, false);
        self.join_ghost(i);
    }

    /// The next write-back is the cold list's tail block; with the cold region empty, the tail
    /// page of the lowest non-empty region above it moves down first (as `flush_all` moves them).
    fn drain_one(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        if self.cold.tail == NIL {
            let Some(r) = [WARM, HOT].into_iter().find(|&r| self.list(r).tail != NIL) else {
                return Ok(false);
            };
            let i = self.list(r).tail;
            self.pop_page(r, i);
            self.join_cold(i);
        }
        self.flush_block(self.cold.tail, sink)?;
        Ok(true)
    }

    fn flush_all(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        for r in [WARM, HOT] {
            while self.list(r).tail != NIL {
                let i = self.list(r).tail;
                self.pop_page(r, i);
                self.join_cold(i);
            }
        }
        while self.cold.tail != NIL {
            self.flush_block(self.cold.tail, sink)?;
        }
        Ok(())
    }

    fn pages(&self) -> u64 {
        self.occ.iter().sum()
    }

    fn gauges(&mut self, view: &dyn FtlView) -> Vec<(&'static str, f64)> {
        let mut g = crate::padding::gauges(&mut *self.padding, self.ppb_n, view);
        g.extend([
            ("buffer.hwb.alpha", self.alpha),
            ("buffer.hwb.hot_size", self.size[HOT] as f64),
            ("buffer.hwb.warm_size", self.size[WARM] as f64),
            ("buffer.hwb.cold_size", self.size[COLD] as f64),
        ]);
        g
    }
}

/// The registry entry of `hwb`.
pub static ENTRY: super::Entry = super::entry! {
    "hwb", Params, super::GROUP_KEYS, padding "none",
    "HWB (seed 003): hot and warm regions of pages, a cold region of LBN blocks, sizes starting equal. A page's temperature \
     α·F_self/F_avg + (1−α)·D_avg/D_predict (D_predict = 2λ·D_last + β; metadata kept with buffered pages and in a ghost \
     buffer) decides the five insertion cases: new pages and ghost hits go to cold (a ghost hit to warm if hotter than the \
     warm tail), cold hits to warm and warm hits to hot if hotter than that region's tail, hot hits to the hot head. Room is made \
     only when a write finds the buffer full (evict_when; region sizes are targets): a full \
     hot region demotes its tail to warm (if hotter than the warm tail) or to its cold block, a full warm region its tail to \
     its cold block; a full cold region flushes its tail block whole in ascending offset (active eviction: also while its ED = Pt + \
     predicted distance < now). Hot and warm pages leave only through the cold region. A region pair's promotions or demotions above \
     resize_threshold move a page of size. Reads are not cached. Default padding: none.",
    |_cfg, p, q| Ok(Box::new(HwbBuffer::new(p, &q)?))
};

#[cfg(test)]
mod tests {
    use super::super::groups::testutil::{flushed, FakeSink};
    use super::*;
    use crate::padding::NoPadding;

    /// Settings of the hand-worked cases: α fixed, long periods, and `promote_into_free = true`
    /// (the option, not the default: S15 walks cases 1–4 into free regions without comparisons);
    /// tests of the seed's rule (the default) set it false.
    fn settings() -> Settings {
        Settings {
            cold_eviction: ColdEviction::Passive,
            alpha: 0.5,
            alpha_step: 0.0,
            period: 1000,
            clock: Clock::Requests,
            initial_beta: 0.0,
            beta_error: BetaError::Prediction,
            ed_distance: EdDistance::Predicted,
            ghost_entries: 8,
            resize_threshold: 1000,
            promote_into_free: true,
            buffer_full: false,
        }
    }

    /// The default parameters follow the seed: a cold hit moves to warm only if hotter than
    /// the warm tail, though warm has free slots (case 3). A 30-page buffer (10 per region),
    /// requests of one page: 0, 0 (case 3 into the empty warm region), 4, 8, 4, 4.
    /// At request 5, 4 (written at 3 and 5: d = 2 = D_avg = D_predict, F 2) ties with the warm
    /// tail 0 (1 and 2: d = 1 = D_avg = D_predict, F 2), F_avg = 5/3 (8: F 1): both
    /// T = 0.5·1.2 + 0.5·1 = 1.1, not higher, so 4's block moves to the cold head. At request 6, 4 (d = 1,
    /// λ = 0, β = 1 − 2, D_predict 1, D_avg 1.5, F 3; F_avg 2) is hotter: T = 0.75 + 0.75 =
    /// 1.5 > T(0) = 0.5 + 0.5 = 1: into warm. With promote_into_free = true, 4 moves up at
    /// request 5 already, without a comparison.
    #[test]
    fn default_compares_with_the_warm_tail_despite_free_slots() {
        let d = Settings::from_params(&Params::default(), "buffer.hwb", 30).unwrap();
        assert!(!d.promote_into_free);
        let mut b = hwb(30, d);
        let mut s = FakeSink::default();
        for lpn in [0, 0, 4, 8] {
            req(&mut b, &mut s, &[lpn]);
        }
        assert_eq!(b.state(), st(&[], &[0], &[(2, &[8]), (1, &[4])], &[]));
        req(&mut b, &mut s, &[4]);
        close(t(&b, 4), 1.1);
        close(t(&b, 0), 1.1);
        assert_eq!(b.state(), st(&[], &[0], &[(1, &[4]), (2, &[8])], &[]));
        req(&mut b, &mut s, &[4]);
        close(t(&b, 4), 1.5);
        close(t(&b, 0), 1.0);
        assert_eq!(b.state(), st(&[], &[4, 0], &[(2, &[8])], &[]));
        assert!(s.flushed.is_empty());

        let mut b = hwb(
            30,
            Settings {
                promote_into_free: true,
                ..d
            },
        );
        for lpn in [0, 0, 4, 8, 4] {
            req(&mut b, &mut s, &[lpn]);
        }
        assert_eq!(b.state(), st(&[], &[4, 0], &[(2, &[8])], &[]));
    }

    /// A buffer of `cap` pages, 4 pages per block (LBN = LPN / 4).
    fn hwb(cap: u64, p: Settings) -> HwbBuffer {
        HwbBuffer::with_settings(
            BufferParams {
                capacity_pages: cap,
                pages_per_block: 4,
                padding: Box::new(NoPadding),
            },
            p,
        )
    }

    /// One write request of whole 1-sector pages.
    fn req(b: &mut HwbBuffer, s: &mut FakeSink, lpns: &[u64]) {
        b.begin_request();
        for &l in lpns {
            b.write(HostPage::new(l, 1, 1, 0), s).unwrap();
        }
    }

    /// hot, warm (head first), cold blocks (head first, their pages head first), ghost.
    fn st(h: &[Lpn], w: &[Lpn], c: &[(Lbn, &[Lpn])], g: &[Lpn]) -> State {
        (
            h.to_vec(),
            w.to_vec(),
            c.iter().map(|(b, p)| (*b, p.to_vec())).collect(),
            g.to_vec(),
        )
    }

    fn t(b: &HwbBuffer, lpn: Lpn) -> f64 {
        b.temperature(&b.meta(lpn))
    }

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-6, "{got} != {want}");
    }

    #[test]
    fn prediction_and_temperature() {
        // λ and D_predict from metadata alone.
        let m = |d_last_one, d_last, beta| Meta {
            pt: 0,
            n: 2,
            d_sum: 0,
            d_last_one,
            d_last,
            beta,
            ep: 0,
            f_cur: 1,
            f_prev: 0,
        };
        assert_eq!(m(2, 4, 2.0).lambda(), 2.0); // cooling: λ = 4/2
        assert_eq!(m(2, 4, 2.0).predict(), 18.0); // 2·2·4 + 2
        assert_eq!(m(4, 4, 3.0).lambda(), 0.0); // not cooling: λ = 0, D_predict = β
        assert_eq!(m(4, 4, 3.0).predict(), 3.0);
        assert_eq!(m(4, 1, -17.0).raw_predict(), -17.0);
        assert_eq!(m(4, 1, -17.0).predict(), 1.0); // below 1 counts as 1
        assert_eq!(m(0, 5, 0.5).lambda(), 0.0); // one distance only: no trend

        // Page X = LPN 0 written at requests 1, 3, 7, 8 (distances 2, 4, 1); Y = LPN 4 at 2.
        for how in [BetaError::Prediction, BetaError::ScaledTerm] {
            let mut b = hwb(
                30,
                Settings {
                    beta_error: how,
                    ..settings()
                },
            );
            let mut s = FakeSink::default();
            req(&mut b, &mut s, &[0]);
            req(&mut b, &mut s, &[4]);
            req(&mut b, &mut s, &[0]);
            // d = 2; the first estimate was 2·0·0 + β0 = 0 → β = 2, λ = 0, D_predict = β = 2.
            let x = b.meta(0);
            assert_eq!(
                (x.d_last_one, x.d_last, x.beta, x.predict()),
                (0, 2, 2.0, 2.0)
            );
            for _ in 4..7 {
                b.begin_request();
            }
            req(&mut b, &mut s, &[0]);
            let x = b.meta(0);
            // d = 4 > 2: λ = 2. Prediction: β = 4 − 2 (the last D_predict) = 2, D_predict =
            // 2·2·4 + 2 = 18. Scaled term: β = 4 − 2·0·2 = 4, D_predict = 20. D_avg = 3.
            // F_self(X) = 3, F_self(Y) = 1: F_avg = 2, so F_self/F_avg = 1.5 for X, 0.5 for Y.
            // T(X) = 0.5·1.5 + 0.5·3/18 = 0.833333 (scaled term: 0.75 + 0.5·3/20 = 0.825);
            // T(Y) = 0.5·0.5 + 0.5·0 (no re-use yet) = 0.25.
            let (beta, pred, tx) = match how {
                BetaError::Prediction => (2.0, 18.0, 0.75 + 0.5 * 3.0 / 18.0),
                BetaError::ScaledTerm => (4.0, 20.0, 0.825),
            };
            assert_eq!(
                (x.d_last_one, x.d_last, x.beta, x.predict()),
                (2, 4, beta, pred)
            );
            assert_eq!((x.d_avg(), x.f_self(0)), (3.0, 3));
            close(t(&b, 0), tx);
            close(t(&b, 4), 0.25);
            req(&mut b, &mut s, &[0]);
            // d = 1 < 4: λ = 0. Prediction: β = 1 − 18 = −17; scaled term: β = 1 − 2·2·4 =
            // −15. Either way D_predict = max(β, 1) = 1 and D_avg = 7/3; F_self = 4, F_avg =
            // 5/2: T = 0.5·1.6 + 0.5·7/3 = 1.966667.
            let x = b.meta(0);
            let beta = if how == BetaError::Prediction {
                -17.0
            } else {
                -15.0
            };
            assert_eq!((x.d_last, x.beta, x.predict()), (1, beta, 1.0));
            close(t(&b, 0), 0.8 + 7.0 / 6.0);
            assert_eq!(b.state(), st(&[0], &[], &[(1, &[4])], &[]), "{how:?}");
        }
    }

    #[test]
    fn frequency_over_two_periods() {
        // period = 4 requests: requests 1–3 are period 0, 4–7 period 1, 8–11 period 2.
        let mut b = hwb(
            30,
            Settings {
                period: 4,
                ..settings()
            },
        );
        let mut s = FakeSink::default();
        req(&mut b, &mut s, &[0]);
        req(&mut b, &mut s, &[0]);
        req(&mut b, &mut s, &[4]);
        assert_eq!((b.s_cur, b.s_prev), (3, 0));
        b.begin_request(); // request 4: period 1
        assert_eq!((b.s_cur, b.s_prev), (0, 3));
        req(&mut b, &mut s, &[0]);
        // X: 1 write now + 2 in period 0 = 3; Y: 1 (period 0). F_avg = 4/2 = 2.
        assert_eq!((b.meta(0).f_self(1), b.meta(4).f_self(1)), (3, 1));
        close(b.terms_of(&b.meta(0)).0, 1.5);
        close(b.terms_of(&b.meta(4)).0, 0.5);
        for _ in 6..=8 {
            b.begin_request(); // request 8: period 2
        }
        req(&mut b, &mut s, &[0]);
        // X: 1 now + 1 in period 1; Y's write is two periods old. F_avg = 2/2 = 1.
        assert_eq!((b.s_cur, b.s_prev), (1, 1));
        close(b.terms_of(&b.meta(0)).0, 2.0);
        close(b.terms_of(&b.meta(4)).0, 0.0);
    }

    /// Requests 1–15 on a 6-page buffer (hot 2, warm 2, cold 2), one page each; returns the
    /// buffer in state S15 (asserted on the way: cases 1–4 into free regions).
    fn s15(p: Settings) -> (HwbBuffer, FakeSink) {
        let mut b = hwb(6, p);
        let mut s = FakeSink::default();
        let steps: [(u64, State); 15] = [
            (0, st(&[], &[], &[(0, &[0])], &[])), // case 1: new block
            (4, st(&[], &[], &[(1, &[4]), (0, &[0])], &[])),
            // case 3: warm is empty, 0 moves up; its block goes.
            (0, st(&[], &[0], &[(1, &[4])], &[])),
            // case 1: joins block 1, which moves to the head.
            (5, st(&[], &[0], &[(1, &[5, 4])], &[])),
            // case 1, cold full: block 1 is flushed first.
            (8, st(&[], &[0], &[(2, &[8])], &[4, 5])),
            // case 2 (ghost hit), warm has a free slot: no comparison.
            (4, st(&[], &[4, 0], &[(2, &[8])], &[5])),
            (9, st(&[], &[4, 0], &[(2, &[9, 8])], &[5])),
            // case 4, hot empty.
            (0, st(&[0], &[4], &[(2, &[9, 8])], &[5])),
            (5, st(&[0], &[5, 4], &[(2, &[9, 8])], &[])),
            (12, st(&[0], &[5, 4], &[(3, &[12])], &[8, 9])),
            (13, st(&[0], &[5, 4], &[(3, &[13, 12])], &[8, 9])),
            // case 4, hot has a free slot.
            (4, st(&[4, 0], &[5], &[(3, &[13, 12])], &[8, 9])),
            (16, st(&[4, 0], &[5], &[(4, &[16])], &[12, 13, 8, 9])),
            (8, st(&[4, 0], &[8, 5], &[(4, &[16])], &[12, 13, 9])),
            (17, st(&[4, 0], &[8, 5], &[(4, &[17, 16])], &[12, 13, 9])),
        ];
        for (k, (lpn, want)) in steps.into_iter().enumerate() {
            req(&mut b, &mut s, &[lpn]);
            assert_eq!(b.state(), want, "request {}", k + 1);
        }
        assert_eq!(
            flushed(&s),
            vec![(1, vec![0, 1]), (2, vec![0, 1]), (3, vec![0, 1])]
        );
        s.flushed.clear();
        // Metadata at S15 (now = 15; all in period 0, so F_self counts every write):
        //   0: written 1, 3, 8: D 2, 5; β = 5 − 2 = 3; λ = 2.5; D_predict = 2·2.5·5 + 3 = 28;
        //      D_avg 3.5; F 3.   4: written 2, 6, 12: D 4, 6; β = 6 − 4 = 2; λ = 1.5;
        //      D_predict 20; D_avg 5; F 3.   5: written 4, 9: D 5, β 5, D_predict 5; F 2.
        //   8: written 5, 14: D 9, D_predict 9; F 2.   16, 17: written once; F 1.
        // F_avg = 12/6 = 2. T(0) = 0.5·1.5 + 0.5·3.5/28 = 0.8125; T(4) = 0.75 + 0.5·5/20 =
        // 0.875; T(5) = T(8) = 0.5·1 + 0.5·1 = 1; T(16) = T(17) = 0.5·0.5 = 0.25.
        for (lpn, want) in [
            (0, 0.8125),
            (4, 0.875),
            (5, 1.0),
            (8, 1.0),
            (16, 0.25),
            (17, 0.25),
        ] {
            close(t(&b, lpn), want);
        }
        assert_eq!(b.meta(0).predict(), 28.0);
        (b, s)
    }

    #[test]
    fn case1_flushes_the_cold_tail_before_inserting() {
        // Cold full with blocks 1 (head) and 0 (tail). A new page of block 0: the seed writes
        // the tail block back first, then inserts, so page 1 starts block 0 anew rather than
        // joining it (which would have moved block 0 to the head and flushed block 1).
        let mut b = hwb(6, settings());
        let mut s = FakeSink::default();
        for lpn in [0, 4, 1] {
            req(&mut b, &mut s, &[lpn]);
        }
        assert_eq!(b.state(), st(&[], &[], &[(0, &[1]), (1, &[4])], &[0]));
        assert_eq!(flushed(&s), vec![(0, vec![0])]);
        // Room in cold: a page joins its block, which moves to the head.
        let mut b = hwb(9, settings());
        for lpn in [0, 4, 1] {
            req(&mut b, &mut s, &[lpn]);
        }
        assert_eq!(b.state(), st(&[], &[], &[(0, &[1, 0]), (1, &[4])], &[]));
    }

    /// `evict_when = "buffer_full"` on a 6-page buffer (hot 2, warm 2, cold 2): regions pass
    /// their sizes while the buffer has room; once it is full each case evicts one victim.
    #[test]
    fn buffer_full_evicts_only_from_a_full_buffer() {
        let mut b = hwb(
            6,
            Settings {
                buffer_full: true,
                ..settings()
            },
        );
        let mut s = FakeSink::default();
        let steps: [(u64, State); 11] = [
            (0, st(&[], &[], &[(0, &[0])], &[])),
            (4, st(&[], &[], &[(1, &[4]), (0, &[0])], &[])),
            // Cold holds 3 pages, over its size 2: region_full would flush block 0 here.
            (8, st(&[], &[], &[(2, &[8]), (1, &[4]), (0, &[0])], &[])),
            // Case 3, warm empty: 0 moves up, its block goes.
            (0, st(&[], &[0], &[(2, &[8]), (1, &[4])], &[])),
            (12, st(&[], &[0], &[(3, &[12]), (2, &[8]), (1, &[4])], &[])),
            (
                16,
                st(
                    &[],
                    &[0],
                    &[(4, &[16]), (3, &[12]), (2, &[8]), (1, &[4])],
                    &[],
                ),
            ),
            // Six pages: full.
            (
                20,
                st(
                    &[],
                    &[0],
                    &[(5, &[20]), (4, &[16]), (3, &[12]), (2, &[8]), (1, &[4])],
                    &[],
                ),
            ),
            // Case 1 in a full buffer: one block, the cold tail, is written back (not every
            // block until cold is within its size).
            (
                24,
                st(
                    &[],
                    &[0],
                    &[(6, &[24]), (5, &[20]), (4, &[16]), (3, &[12]), (2, &[8])],
                    &[4],
                ),
            ),
            // Case 2, warm below its size: 4 enters warm without a victim there; the buffer
            // then holds 7 pages, and cold, the region above its size, flushes its tail.
            (
                4,
                st(
                    &[],
                    &[4, 0],
                    &[(6, &[24]), (5, &[20]), (4, &[16]), (3, &[12])],
                    &[8],
                ),
            ),
            // Case 4, hot empty: 0 moves up; nothing leaves.
            (
                0,
                st(
                    &[0],
                    &[4],
                    &[(6, &[24]), (5, &[20]), (4, &[16]), (3, &[12])],
                    &[8],
                ),
            ),
            // Case 3, warm below its size: 16 moves up, its block goes.
            (
                16,
                st(&[0], &[16, 4], &[(6, &[24]), (5, &[20]), (3, &[12])], &[8]),
            ),
        ];
        for (k, (lpn, want)) in steps.into_iter().enumerate() {
            req(&mut b, &mut s, &[lpn]);
            assert_eq!(b.state(), want, "request {}", k + 1);
            assert!(b.pages() <= 6);
        }
        assert_eq!(flushed(&s), vec![(1, vec![0]), (2, vec![0])]);
        // region_full: the third write already flushes block 0.
        let mut b = hwb(6, settings());
        let mut s = FakeSink::default();
        for lpn in [0, 4, 8] {
            req(&mut b, &mut s, &[lpn]);
        }
        assert_eq!(flushed(&s), vec![(0, vec![0])]);
    }

    #[test]
    fn case5_hot_hit() {
        let (mut b, mut s) = s15(settings());
        req(&mut b, &mut s, &[0]);
        assert_eq!(
            b.state(),
            st(&[0, 4], &[8, 5], &[(4, &[17, 16])], &[12, 13, 9])
        );
        // d = 8, β = 8 − 28 = −20, λ = 8/5: D_predict = 2·1.6·8 − 20 = 5.6; D_avg = 15/3 = 5;
        // F = 4, F_avg = 13/6: T = 0.5·24/13 + 0.5·5/5.6 = 1.369505.
        close(t(&b, 0), 0.5 * 24.0 / 13.0 + 0.5 * 5.0 / 5.6);
        assert!(s.flushed.is_empty());
    }

    #[test]
    fn case4_warm_hit_and_hot_eviction() {
        // Warm hit on 5: d = 7, β = 7 − 5 = 2, λ = 7/5, D_predict = 2·1.4·7 + 2 = 21.6, D_avg
        // 6; F 3, F_avg 13/6: T(5) = 0.5·18/13 + 0.5·6/21.6 = 0.831197 > T(hot tail 0) =
        // 0.5·18/13 + 0.5·3.5/28 = 0.754808: 5 goes to the hot head and 0 is evicted from hot.
        // Only the recency term ranked 5 above 0: a vote for it.
        let (mut b, mut s) = s15(settings());
        req(&mut b, &mut s, &[5]);
        close(t(&b, 5), 0.5 * 18.0 / 13.0 + 0.5 * 6.0 / 21.6);
        close(t(&b, 0), 0.5 * 18.0 / 13.0 + 0.5 * 0.125);
        // 5 left warm, so warm has a free slot: 0 goes there without a comparison.
        assert_eq!(
            b.state(),
            st(&[5, 4], &[0, 8], &[(4, &[17, 16])], &[12, 13, 9])
        );
        assert_eq!((b.votes_f, b.votes_r), (0, 1));
        assert!(s.flushed.is_empty());

        // promote_into_free = false: 0 is compared with the warm tail 8, T(8) = 0.5·12/13 +
        // 0.5·1 = 0.961538 > 0.754808: 0 goes into its cold block; cold is full, so its tail
        // block 4 is flushed first.
        let (mut b, mut s) = s15(settings());
        b.p.promote_into_free = false;
        req(&mut b, &mut s, &[5]);
        assert_eq!(
            b.state(),
            st(&[5, 4], &[8], &[(0, &[0])], &[16, 17, 12, 13, 9])
        );
        assert_eq!(flushed(&s), vec![(4, vec![0, 1])]);

        // Warm hit on 5 at request 30: d = 21, β = 21 − 5 = 16, λ = 21/5, D_predict = 2·4.2·21
        // + 16 = 192.4, D_avg 13: T(5) = 0.5·18/13 + 0.5·13/192.4 = 0.726092 < 0.754808: 5
        // only moves to the warm head.
        let (mut b, mut s) = s15(settings());
        for _ in 16..30 {
            b.begin_request();
        }
        req(&mut b, &mut s, &[5]);
        close(t(&b, 5), 0.5 * 18.0 / 13.0 + 0.5 * 13.0 / 192.4);
        assert_eq!(
            b.state(),
            st(&[4, 0], &[5, 8], &[(4, &[17, 16])], &[12, 13, 9])
        );
        assert_eq!((b.votes_f, b.votes_r), (0, 0));
    }

    #[test]
    fn cases_3_and_2_cold_and_ghost_hits() {
        let (mut b, mut s) = s15(settings());
        // 16: d = 3, β = 3, D_predict 3, D_avg 3; F 2, F_avg 13/6: T = 0.5·12/13 + 0.5 =
        // 0.961538 = T(warm tail 5) (F 2, D_avg/D_predict = 1): not higher, so case 3 keeps
        // it in its block, which moves to the cold head (already there).
        req(&mut b, &mut s, &[16]);
        close(t(&b, 16), 0.5 * 12.0 / 13.0 + 0.5);
        close(t(&b, 5), 0.5 * 12.0 / 13.0 + 0.5);
        assert_eq!(
            b.state(),
            st(&[4, 0], &[8, 5], &[(4, &[17, 16])], &[12, 13, 9])
        );
        // 16 again: d = 1, β = 1 − 3 = −2, λ = 0: D_predict 1, D_avg 2; F 3, F_avg 14/6:
        // T = 0.5·18/14 + 0.5·2 = 1.642857 > T(5) = 0.5·12/14 + 0.5 = 0.928571: 16 goes to
        // warm, and the warm tail 5 into its (new) block at the cold head (eviction case 2).
        req(&mut b, &mut s, &[16]);
        close(t(&b, 16), 0.5 * 18.0 / 14.0 + 1.0);
        close(t(&b, 5), 0.5 * 12.0 / 14.0 + 0.5);
        assert_eq!(
            b.state(),
            st(&[4, 0], &[16, 8], &[(1, &[5]), (4, &[17])], &[12, 13, 9])
        );
        // 17: d = 3, D_predict 3; F 2, F_avg 15/6: T = 0.5·0.8 + 0.5 = 0.9 = T(8): its block
        // moves to the cold head.
        req(&mut b, &mut s, &[17]);
        close(t(&b, 17), 0.9);
        close(t(&b, 8), 0.9);
        assert_eq!(
            b.state(),
            st(&[4, 0], &[16, 8], &[(4, &[17]), (1, &[5])], &[12, 13, 9])
        );
        assert!(s.flushed.is_empty());
        // Ghost hit on 9: d = 12, D_predict 12; F 2, F_avg 15/6 (9 not yet buffered): T = 0.9
        // = T(8): case 2 puts it into the cold region; cold is full: block 1 (5 alone) is
        // flushed first (F_avg is 15/6 again afterwards).
        req(&mut b, &mut s, &[9]);
        close(t(&b, 9), 0.9);
        assert_eq!(
            b.state(),
            st(&[4, 0], &[16, 8], &[(2, &[9]), (4, &[17])], &[5, 12, 13])
        );
        assert_eq!(flushed(&s), vec![(1, vec![1])]);
        // Case 1: cold full, block 4 (17 alone) is flushed.
        req(&mut b, &mut s, &[20]);
        assert_eq!(
            b.state(),
            st(
                &[4, 0],
                &[16, 8],
                &[(5, &[20]), (2, &[9])],
                &[17, 5, 12, 13]
            )
        );
        // Ghost hit on 17: d = 3 = D_last-one, β = 3 − 3 = 0, λ = 0: D_predict = 1, D_avg 3;
        // F 3, F_avg 14/6: T = 0.5·18/14 + 0.5·3 = 2.142857 > T(8) = 0.5·12/14 + 0.5 =
        // 0.928571: 17 goes to warm; 8 to cold, which flushes its tail (block 2, holding 9)
        // first, so 8 starts block 2 again.
        b.begin_request();
        close(t(&b, 8), 0.5 * 12.0 / 14.0 + 0.5);
        b.write(HostPage::new(17, 1, 1, 0), &mut s).unwrap();
        let m = b.meta(17);
        assert_eq!(
            (m.d_last_one, m.d_last, m.beta, m.predict()),
            (3, 3, 0.0, 1.0)
        );
        assert_eq!((m.d_avg(), m.f_self(0)), (3.0, 3));
        assert_eq!(
            b.state(),
            st(
                &[4, 0],
                &[17, 16],
                &[(2, &[8]), (5, &[20])],
                &[9, 5, 12, 13]
            )
        );
        assert_eq!(flushed(&s), vec![(1, vec![1]), (4, vec![1]), (2, vec![1])]);
    }

    #[test]
    fn hot_eviction_compares_with_the_warm_tail() {
        // α = 1 (T = F_self/F_avg), every promotion compared with the tail.
        let p = Settings {
            alpha: 1.0,
            promote_into_free: false,
            ..settings()
        };
        let mut b = hwb(6, p);
        let mut s = FakeSink::default();
        // 0 three times: cold → warm → hot (empty regions take it). 4 twice: warm. 4 again:
        // F 3 = F(0), not higher; 4 again: F 4 > 3, hot (a free slot, nothing evicted).
        for lpn in [0, 0, 0, 4, 4, 4, 4] {
            req(&mut b, &mut s, &[lpn]);
        }
        assert_eq!(b.state(), st(&[4, 0], &[], &[], &[]));
        // 8 twice: warm. 12 twice: F 2 = F(8), stays cold; 12 again: F 3 > 2, warm.
        for lpn in [8, 8, 12, 12, 12] {
            req(&mut b, &mut s, &[lpn]);
        }
        assert_eq!(b.state(), st(&[4, 0], &[12, 8], &[], &[]));
        let mut b2 = hwb(6, p);
        let mut s2 = FakeSink::default();
        for lpn in [0, 0, 0, 4, 4, 4, 4, 8, 8, 12, 12, 12] {
            req(&mut b2, &mut s2, &[lpn]);
        }
        // 12 again: F 4, F_avg 13/4: T(12) = 1.230769 > T(0) = 0.923077: 12 goes hot and the
        // hot tail 0 is compared with the warm tail 8, T = 2/3.25 = 0.615385: 0 is hotter and
        // goes to the warm head.
        req(&mut b, &mut s, &[12]);
        close(t(&b, 12), 4.0 / 3.25);
        close(t(&b, 0), 3.0 / 3.25);
        close(t(&b, 8), 2.0 / 3.25);
        assert_eq!(b.state(), st(&[12, 4], &[0, 8], &[], &[]));
        // Instead 8 first (F 3 = F(0): stays warm), then 12 (F 4, F_avg 14/4): the hot tail 0
        // (3/3.5) is not hotter than the warm tail 8 (3/3.5) and goes into its cold block.
        req(&mut b2, &mut s2, &[8]);
        assert_eq!(b2.state(), st(&[4, 0], &[8, 12], &[], &[]));
        req(&mut b2, &mut s2, &[12]);
        close(t(&b2, 0), 3.0 / 3.5);
        close(t(&b2, 8), 3.0 / 3.5);
        assert_eq!(b2.state(), st(&[12, 4], &[8], &[(0, &[0])], &[]));
        assert!(s.flushed.is_empty() && s2.flushed.is_empty());
    }

    #[test]
    fn regions_resize_at_threshold() {
        // A = 1: a pair's second move resizes.
        let p = Settings {
            alpha: 1.0,
            promote_into_free: false,
            resize_threshold: 1,
            ..settings()
        };
        let mut b = hwb(6, p);
        let mut s = FakeSink::default();
        let mut sizes = vec![];
        for lpn in [0, 0, 0, 4, 4, 4, 4] {
            req(&mut b, &mut s, &[lpn]);
            sizes.push(b.sizes());
        }
        // Request 2: cold → warm (1); 3: warm → hot (1); 5: cold → warm (2 > 1): cold gives
        // warm a page; 6: no move (tie); 7: warm → hot (2 > 1): warm gives hot a page.
        assert_eq!(
            sizes,
            vec![
                [2, 2, 2],
                [2, 2, 2],
                [2, 2, 2],
                [2, 2, 2],
                [2, 3, 1],
                [2, 3, 1],
                [3, 2, 1]
            ]
        );
        // Cold is at one page: a further cold → warm excess resizes nothing.
        for lpn in [8, 8, 12, 12, 12] {
            req(&mut b, &mut s, &[lpn]);
        }
        assert_eq!(b.sizes(), [3, 2, 1]);
        assert_eq!(b.state(), st(&[4, 0], &[12, 8], &[], &[]));

        // From S15 with A = 1 (cold → warm has 1 move there): 16 twice, the second promoted;
        // the warm tail 5 fills cold's free slot, then cold → warm's second move shrinks cold
        // to 1 page while it holds 2: its tail block (4, holding 17) is flushed at once.
        let (mut b, mut s) = s15(settings());
        b.p.resize_threshold = 1;
        req(&mut b, &mut s, &[16]);
        req(&mut b, &mut s, &[16]);
        assert_eq!(b.sizes(), [2, 3, 1]);
        assert_eq!(
            b.state(),
            st(&[4, 0], &[16, 8], &[(1, &[5])], &[17, 12, 13, 9])
        );
        assert_eq!(flushed(&s), vec![(4, vec![1])]);
    }

    #[test]
    fn alpha_moves_towards_the_better_term() {
        // Period 20: S15 is all in period 0. The warm hit on 5 (request 16) votes for the
        // recency term; at request 20 α steps from 0.5 to 0.45.
        let p = Settings {
            period: 20,
            alpha_step: 0.05,
            ..settings()
        };
        let (mut b, mut s) = s15(p);
        req(&mut b, &mut s, &[5]);
        assert_eq!((b.votes_f, b.votes_r), (0, 1));
        for _ in 17..20 {
            b.begin_request();
        }
        assert_eq!(b.alpha(), 0.5);
        b.begin_request();
        close(b.alpha(), 0.45);
        assert_eq!((b.votes_f, b.votes_r, b.s_cur, b.s_prev), (0, 0, 0, 13));
    }

    #[test]
    fn active_eviction_fires_when_ed_is_below_ct() {
        // 6 pages, every promotion compared. 0 ends hot, 4 warm; 8 is written at 6 and 7
        // (d = 1, β = 1, D_predict = 1; T ties with the warm tail 4, so it stays cold). Block
        // 2's ED = Pt + D_predict = 7 + 1 = 8; "four": 7 + 4·1 + 1 = 12.
        for (ed, kind, fires) in [
            (EdDistance::Predicted, ColdEviction::Active, Some(9)),
            (EdDistance::Four, ColdEviction::Active, Some(13)),
            (EdDistance::Predicted, ColdEviction::Passive, None),
        ] {
            let p = Settings {
                cold_eviction: kind,
                ed_distance: ed,
                promote_into_free: false,
                ..settings()
            };
            let mut b = hwb(6, p);
            let mut s = FakeSink::default();
            for lpn in [0, 0, 0, 4, 4, 8, 8] {
                req(&mut b, &mut s, &[lpn]);
            }
            assert_eq!(b.state(), st(&[0], &[4], &[(2, &[8])], &[]));
            let cold = b.cold.head;
            close(
                b.ed_of_block(cold),
                if ed == EdDistance::Four { 12.0 } else { 8.0 },
            );
            // Hot hits on 0 at requests 8, 9, …: the check after each write flushes block 2
            // once CT > ED.
            let mut at = None;
            for r in 8..=14 {
                req(&mut b, &mut s, &[0]);
                if at.is_none() && !s.flushed.is_empty() {
                    at = Some(r);
                }
            }
            assert_eq!(at, fires, "{ed:?} {kind:?}");
            if fires.is_some() {
                assert_eq!(flushed(&s), vec![(2, vec![0])]);
            }
        }
        // A page never re-used: D_predict = max(β0, 1). β0 = 5: ED = 1 + 5 = 6 < CT from 7.
        let mut b = hwb(
            30,
            Settings {
                cold_eviction: ColdEviction::Active,
                initial_beta: 5.0,
                ..settings()
            },
        );
        let mut s = FakeSink::default();
        req(&mut b, &mut s, &[0]);
        for r in 2..=7 {
            req(&mut b, &mut s, &[4 * r]); // a block of its own, ED = r + 5
            assert_eq!(
                s.lbns(),
                if r < 7 { vec![] } else { vec![0] },
                "request {r}"
            );
        }
    }

    #[test]
    fn clock_in_page_writes() {
        // One request of 3 pages, then 0 again: d = 3 page writes (1 request in `requests`).
        for (clock, d) in [(Clock::PageWrites, 3), (Clock::Requests, 1)] {
            let mut b = hwb(
                30,
                Settings {
                    clock,
                    ..settings()
                },
            );
            let mut s = FakeSink::default();
            req(&mut b, &mut s, &[0, 1, 2]);
            req(&mut b, &mut s, &[0]);
            assert_eq!(b.meta(0).d_last, d, "{clock:?}");
        }
    }

    #[test]
    fn reads_trims_and_flush_all() {
        let (mut b, mut s) = s15(settings());
        // Reads: buffered sectors, never ghost entries, nothing moves.
        assert_eq!(b.read(0, 1, &mut s).unwrap(), 1);
        assert_eq!(b.read(12, 1, &mut s).unwrap(), 0);
        assert_eq!(b.read(99, 1, &mut s).unwrap(), 0);
        // A partial write hit ORs the sectors. It is a warm hit (case 4) in request 15: d = 6,
        // β = 1, λ = 1.2, D_predict 15.4, D_avg 5.5, F 3: T = 0.5·18/13 + 0.5·5.5/15.4 = 0.870879
        // > T(0) = 0.754808: 5 goes hot, 0 to warm's free slot.
        assert_eq!(b.write(HostPage::new(5, 2, 7, 0), &mut s).unwrap(), 1);
        assert_eq!(b.read(5, 3, &mut s).unwrap(), 3);
        close(t(&b, 5), 0.5 * 18.0 / 13.0 + 0.5 * 5.5 / 15.4);
        assert_eq!(b.state().0, vec![5, 4]);
        // Trim: the page leaves its region; its metadata stays in the ghost.
        b.trim(17);
        b.trim(0);
        b.trim(12); // a ghost entry: nothing to drop
        assert_eq!(b.pages(), 4);
        assert!(b.state().3.starts_with(&[0, 17]));
        // flush_all: warm (8), then hot (tail first: 4, 5) join their blocks at the cold head;
        // then cold is flushed from the tail: blocks 4, 2, 1.
        let (h, w, c, _) = b.state();
        assert_eq!((h, w, c), (vec![5, 4], vec![8], vec![(4, vec![16])]));
        s.flushed.clear();
        b.flush_all(&mut s).unwrap();
        assert_eq!(
            flushed(&s),
            vec![(4, vec![0]), (2, vec![0]), (1, vec![0, 1])]
        );
        assert_eq!(b.pages(), 0);
        assert_eq!((b.occ, b.n_buf, b.s_cur + b.s_prev), ([0; 3], 0, 0));
    }

    /// Every structural invariant: regions within their sizes (summing to the capacity), each
    /// buffered page in exactly one place matching `model` (LPN → mask, version), blocks and
    /// their representatives, the ghost's bound, the index, and the frequency sums.
    fn check(b: &HwbBuffer, cap: u64, model: &std::collections::BTreeMap<Lpn, (SectorMask, u32)>) {
        assert_eq!(b.size.iter().sum::<u64>(), cap);
        assert!(b.pages() <= cap);
        for r in 0..3 {
            assert!(
                b.p.buffer_full || b.occ[r] <= b.size[r],
                "region {r}: {:?} > {:?}",
                b.occ,
                b.size
            );
        }
        let mut seen = std::collections::BTreeMap::new();
        let (mut cur, mut prev) = (0u64, 0u64);
        let mut visit = |i: u32, region: usize| {
            let n = &b.nodes[i as usize];
            assert_eq!(n.region as usize, region);
            assert!(
                seen.insert(n.lpn, (n.mask, n.version)).is_none(),
                "{} twice",
                n.lpn
            );
            let (c, p) = n.m.freq(b.epoch);
            (cur, prev) = (cur + c as u64, prev + p as u64);
            assert_eq!(b.index.get(n.lpn as u32), Some(i));
        };
        let mut count = [0u64; 3];
        for (r, l) in [(HOT, b.hot), (WARM, b.warm)] {
            let mut c = l.head;
            while c != NIL {
                visit(c, r);
                count[r] += 1;
                c = b.links.next(c);
            }
            assert_eq!(l.len as u64, count[r]);
        }
        let mut blk = b.cold.head;
        while blk != NIL {
            let k = &b.blocks[blk as usize];
            assert_eq!(b.block_of[k.lbn as usize], blk);
            assert!(k.pages.len > 0);
            let (mut c, mut best) = (k.pages.head, 0);
            while c != NIL {
                visit(c, COLD);
                assert_eq!(b.nodes[c as usize].lpn / 4, k.lbn);
                best = best.max(b.nodes[c as usize].m.pt);
                count[COLD] += 1;
                c = b.links.next(c);
            }
            assert_eq!(b.nodes[k.rep as usize].m.pt, best, "block {}", k.lbn);
            assert_eq!(b.ppb.quot(b.nodes[k.rep as usize].lpn), k.lbn);
            blk = b.blinks.next(blk);
        }
        assert_eq!(count, b.occ);
        assert_eq!(
            b.block_of.iter().filter(|&&x| x != NIL).count() as u32,
            b.cold.len
        );
        assert_eq!(&seen, model);
        assert_eq!((cur, prev, seen.len() as u64), (b.s_cur, b.s_prev, b.n_buf));
        let mut g = b.ghost.head;
        while g != NIL {
            let n = &b.nodes[g as usize];
            assert_eq!((n.region, n.mask), (GHOST, 0));
            assert!(!model.contains_key(&n.lpn));
            assert_eq!(b.index.get(n.lpn as u32), Some(g));
            g = b.links.next(g);
        }
        assert!(b.ghost.len as u64 <= b.p.ghost_entries);
        assert_eq!(b.index.len() as u64, b.pages() + b.ghost.len as u64);
    }

    /// Flush units as (LBN, [(offset, mask, version)]).
    type Log = Vec<(Lbn, Vec<(u32, SectorMask, u32)>)>;

    /// A sink checking each flush unit against the model: ascending offsets, each page's latest
    /// sectors and version; flushed pages leave the model.
    struct ModelSink<'a> {
        view: crate::buffer::groups::testutil::FakeView,
        model: &'a mut std::collections::BTreeMap<Lpn, (SectorMask, u32)>,
        log: Log,
    }
    impl FlushSink for ModelSink<'_> {
        fn flush(&mut self, u: &crate::buffer::FlushUnit) -> Result<()> {
            assert!(u.pages.windows(2).all(|w| w[0].offset < w[1].offset));
            assert!(!u.padded);
            for p in u.pages {
                let lpn = u.lbn * 4 + p.offset as u64;
                assert_eq!(
                    self.model.remove(&lpn),
                    Some((p.mask, p.version)),
                    "LPN {lpn}"
                );
            }
            self.log.push((
                u.lbn,
                u.pages
                    .iter()
                    .map(|p| (p.offset, p.mask, p.version))
                    .collect(),
            ));
            Ok(())
        }
        fn view(&self) -> &dyn FtlView {
            &self.view
        }
    }

    /// Random writes (1–3 pages a request, partial sectors), reads, trims and flushes over 64
    /// LPNs, for small capacities and every switch; the invariants after each step.
    fn random_run(seed: u64, cap: u64, p: Settings) -> Log {
        let mut rng = crate::rng::Rng::new(seed);
        let mut b = hwb(cap, p);
        let mut model = std::collections::BTreeMap::new();
        let mut log = Vec::new();
        let mut version = 0;
        for step in 0..3000 {
            let hot = rng.below(4) == 0;
            let lpn = if hot { rng.below(6) } else { rng.below(64) };
            let mut sink = ModelSink {
                view: Default::default(),
                model: &mut model,
                log: Vec::new(),
            };
            match rng.below(20) {
                0 => {
                    b.trim(lpn);
                    sink.model.remove(&lpn);
                }
                1 => {
                    let want = sink.model.get(&lpn).map_or(0, |e| e.0);
                    assert_eq!(b.read(lpn, 0xff, &mut sink).unwrap(), want);
                }
                2 if step % 7 == 0 => {
                    b.flush_all(&mut sink).unwrap();
                    assert!(sink.model.is_empty() && b.pages() == 0);
                }
                _ => {
                    b.begin_request();
                    for l in lpn..lpn + 1 + rng.below(3) {
                        let mask = 1 + rng.below(255);
                        version += 1;
                        let e = sink.model.entry(l).or_insert((0, 0));
                        let had = e.0;
                        *e = (had | mask, version);
                        assert_eq!(
                            b.write(HostPage::new(l, mask, version, 0), &mut sink)
                                .unwrap(),
                            had
                        );
                    }
                }
            }
            log.append(&mut sink.log);
            check(&b, cap, &model);
        }
        let mut sink = ModelSink {
            view: Default::default(),
            model: &mut model,
            log: Vec::new(),
        };
        b.flush_all(&mut sink).unwrap();
        log.append(&mut sink.log);
        assert!(model.is_empty());
        assert_eq!((b.pages(), b.n_buf, b.s_cur + b.s_prev), (0, 0, 0));
        check(&b, cap, &model);
        log
    }

    #[test]
    fn invariants_under_a_random_stream() {
        let mut runs = 0;
        for cap in [1, 2, 3, 7, 16, 40] {
            for k in 0..16u64 {
                let p = Settings {
                    buffer_full: k >= 8,
                    cold_eviction: if k & 1 == 0 {
                        ColdEviction::Passive
                    } else {
                        ColdEviction::Active
                    },
                    promote_into_free: k & 2 == 0,
                    clock: if k & 4 == 0 {
                        Clock::Requests
                    } else {
                        Clock::PageWrites
                    },
                    beta_error: if k % 8 < 4 {
                        BetaError::Prediction
                    } else {
                        BetaError::ScaledTerm
                    },
                    ed_distance: if k % 3 == 0 {
                        EdDistance::Four
                    } else {
                        EdDistance::Predicted
                    },
                    alpha_step: 0.05 * (k % 3) as f64,
                    period: 1 + k * 5,
                    resize_threshold: k % 4,
                    ghost_entries: [0, 1, cap, 3 * cap][k as usize % 4],
                    initial_beta: k as f64 - 3.0,
                    ..settings()
                };
                let seed = cap * 100 + k;
                let a = random_run(seed, cap, p);
                assert!(!a.is_empty());
                // Deterministic: the same flushes in the same order.
                assert_eq!(a, random_run(seed, cap, p), "cap {cap} k {k}");
                runs += 1;
            }
        }
        assert_eq!(runs, 96);
    }

    #[test]
    fn tiny_buffers() {
        // 1 and 2 pages: no hot or warm region; everything goes through cold.
        for cap in [1, 2] {
            let mut b = hwb(cap, settings());
            assert_eq!(b.sizes(), [0, 0, cap]);
            let mut s = FakeSink::default();
            for lpn in [0, 0, 5, 0, 9, 9] {
                req(&mut b, &mut s, &[lpn]);
                assert!(b.pages() <= cap);
            }
            b.flush_all(&mut s).unwrap();
            assert_eq!(b.pages(), 0);
        }
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let check = |p: Params| {
            crate::params::Params::check(&p, "buffer.hwb")
                .unwrap_err()
                .to_string()
        };
        let d = Params::default;
        let e = check(Params {
            cold_eviction: "eager".into(),
            ..d()
        });
        assert!(
            e.contains("buffer.hwb.cold_eviction") && e.contains("passive, active"),
            "{e}"
        );
        for (p, field) in [
            (
                Params {
                    initial_alpha: 1.5,
                    ..d()
                },
                "initial_alpha",
            ),
            (
                Params {
                    alpha_step: -0.1,
                    ..d()
                },
                "alpha_step",
            ),
            (
                Params {
                    clock: "ns".into(),
                    ..d()
                },
                "clock",
            ),
            (
                Params {
                    beta_error: "x".into(),
                    ..d()
                },
                "beta_error",
            ),
            (
                Params {
                    ed_distance: "2".into(),
                    ..d()
                },
                "ed_distance",
            ),
            (
                Params {
                    ghost_fraction: 100.0,
                    ..d()
                },
                "ghost_fraction",
            ),
            (
                Params {
                    initial_beta: f64::NAN,
                    ..d()
                },
                "initial_beta",
            ),
            (
                Params {
                    evict_when: "region".into(),
                    ..d()
                },
                "evict_when",
            ),
        ] {
            let e = check(p);
            assert!(e.contains(&format!("buffer.hwb.{field}")), "{e}");
        }
        assert!(crate::params::Params::check(&d(), "buffer.hwb").is_ok());
    }
}

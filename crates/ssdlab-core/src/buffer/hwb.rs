//! `hwb`: seed 003's hotness-aware write buffer (P. Li; ALGORITHMS.md §1.13).
//!
//! * Three regions: **hot** and **warm** hold pages (LRU lists, newest at the head), **cold**
//!   holds blocks (an LRU list of LBN nodes, each with that LBN's cold pages). Capacity and
//!   region sizes count pages; the sizes start equal (the remainder goes to cold) and sum to the
//!   capacity. After every page write each region holds at most its size.
//! * Temperature (Eq 1): T = α·F_self/F_avg + (1−α)·D_avg/D_predict, D_predict = 2λ·D_last + β
//!   (Eq 2), λ = D_last/D_last-one when D_last-one < D_last, else 0; β = an observed re-use
//!   distance minus its estimate. Every buffered page carries its metadata (Pt, D_last-one,
//!   D_last, D_avg, β, F_self); a flushed (or trimmed) page's metadata moves to the ghost buffer,
//!   a FIFO of `ghost_fraction` × capacity entries, where a later write finds it (ghost hit).
//! * Writes (seed §III.D, the five cases): (1) buffer and ghost miss → into its block in cold;
//!   (2) ghost hit → warm if T > T(warm tail), else cold; (3) cold hit → warm if T > T(warm
//!   tail), else its block moves to the cold head; (4) warm hit → hot if T > T(hot tail), else
//!   warm head; (5) hot hit → hot head. A page entering a full region first evicts from it:
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

use super::index::{checked_key, key, LpnIndex};
use super::list::{Links, List, NIL};
use super::{sort_pages, BufferParams, FlushSink, FlushUnit, PageWrite, WriteBuffer};
use crate::error::{Result, SimError};
use crate::ftl::FtlView;
use crate::padding::Padding;
use crate::units::{Divisor, Lbn, Lpn, SectorMask};

crate::params! {
    /// HWB's parameters (`[buffer.hwb]`).
    pub struct Params {
        /// Cold-region eviction (Eq 3): passive (flush the cold tail block only when the cold
        /// region is full) | active (also flush it, after any page write, while ED = Pt +
        /// D_predict < CT, now). The seed does not say which one its evaluation used; passive
        /// is the base policy that active adds to.
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
        /// capacity in pages, about the time a page stays buffered without hits). F_self = the
        /// page's writes in the current and the previous period (a window of 1–2 periods,
        /// including the write being handled); F_avg = the mean F_self of the buffered pages.
        period: u64 = 0,
        /// Unit of time for Pt, CT, the re-use distances and `period`: requests (host write
        /// requests, as Eq 3 counts Pt and CT) | page_writes. The seed defines the re-use
        /// distance as distinct pages between two accesses but compares Pt + distance with a
        /// count of write requests (Eq 3); a distance is now − Pt (at least 1).
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
        /// Threshold A (the seed gives no value): a region pair's promotion or demotion count
        /// above it moves one page of size from the source region to the destination.
        resize_threshold: u64 = 32,
        /// A page that would move into the warm or hot region (cases 2–4, the hot region's
        /// eviction) does so without comparing temperatures when that region has a free slot
        /// (the seed states its comparisons for a full buffer); false: compare with the region's
        /// tail whenever it has one.
        promote_into_free: bool = true,
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

/// `value` of field `table.field` among `options`, or an error listing them.
fn choice<T: Copy>(table: &str, field: &str, value: &str, options: &[(&str, T)]) -> Result<T> {
    options
        .iter()
        .find(|(n, _)| *n == value)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
            SimError::config(
                format!("{table}.{field}"),
                format!("unknown value `{value}`; valid: {}", names.join(", ")),
            )
        })
}

fn unit_interval(table: &str, field: &str, v: f64) -> Result<()> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(SimError::config(
            format!("{table}.{field}"),
            format!("{v} is not in [0, 1]"),
        ))
    }
}

/// The parameters resolved for a buffer of a given capacity.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub cold_eviction: ColdEviction,
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
    /// Moves per [`MOVES`] pair since that pair last resized.
    moves: [u64; 5],
    now: u64,
    epoch: u64,
    /// Σ of the buffered pages' writes in the current and in the previous period.
    s_cur: u64,
    s_prev: u64,
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
            moves: [0; 5],
            now: 0,
            epoch: 0,
            s_cur: 0,
            s_prev: 0,
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

    /// Node `i` becomes buffered (+1) or stops being buffered (−1): its writes join or leave
    /// the frequency sums.
    fn account(&mut self, i: u32, join: bool) {
        let (c, p) = self.nodes[i as usize].m.freq(self.epoch);
        if join {
            self.s_cur += c as u64;
            self.s_prev += p as u64;
        } else {
            self.s_cur -= c as u64;
            self.s_prev -= p as u64;
        }
    }

    /// The two terms of Eq 1 for node `i`: F_self/F_avg and D_avg/D_predict (0 when F_avg = 0
    /// or before the first re-use).
    pub fn terms_of(&self, m: &Meta) -> (f64, f64) {
        let dirty = self.pages();
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

    /// Whether node `a` moves into region `r` (warm or hot): if `r` has a free slot (with
    /// `promote_into_free`) or no page, or if T(a) > T(r's tail). `written`: `a` is the page
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
    fn to_cold(&mut self, i: u32) {
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
                let b = match self.free_blocks.pop() {
                    Some(b) => {
                        self.blocks[b as usize] = block;
                        b
                    }
                    None => {
                        self.blocks.push(block);
                        (self.blocks.len() - 1) as u32
                    }
                };
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
    fn from_cold(&mut self, i: u32) {
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
    fn to_ghost(&mut self, i: u32) {
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
        }
    }

    fn forget(&mut self, i: u32) {
        // Checked by `checked_key` when the page was buffered.
        self.index.remove(self.nodes[i as usize].lpn as u32);
        self.free_nodes.push(i);
    }

    /// Make room for one page in region `r` (its size is at least 1).
    fn make_room(&mut self, r: usize, sink: &mut dyn FlushSink) -> Result<()> {
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
                    self.to_cold(b);
                    self.moved(HOT, COLD);
                }
            }
            WARM => {
                let b = self.warm.tail;
                self.pop_page(WARM, b);
                self.make_room(COLD, sink)?;
                self.to_cold(b);
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
            self.to_ghost(cur);
            cur = next;
        }
        self.occ[COLD] -= blk.pages.len as u64;
        sort_pages(&mut self.scratch);
        let n = self.scratch.len() as u64;
        let padded = self.padding.pad(blk.lbn, n, self.ppb_n, sink.view());
        let scratch = std::mem::take(&mut self.scratch);
        let r = sink.flush(&FlushUnit {
            lbn: blk.lbn,
            pages: &scratch,
            padded,
            hint,
        });
        self.scratch = scratch;
        r
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

    /// Bring every region within its size (after a resize), highest region first.
    fn settle(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        loop {
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

    fn new_node(&mut self, lpn: Lpn, mask: SectorMask, version: u32, hint: u32) -> u32 {
        let node = Node {
            lpn,
            mask,
            version,
            hint,
            region: GHOST,
            m: self.fresh_meta(),
        };
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

    /// Cases 1 and 2: a page not buffered, `ghost` its ghost node if any.
    fn insert(
        &mut self,
        k: u32,
        lpn: Lpn,
        mask: SectorMask,
        version: u32,
        hint: u32,
        ghost: Option<u32>,
        sink: &mut dyn FlushSink,
    ) -> Result<()> {
        let i = match ghost {
            Some(i) => {
                // Out of the ghost first, so that the flushes below cannot drop it.
                self.links.remove(&mut self.ghost, i);
                self.access(i, false);
                let n = &mut self.nodes[i as usize];
                (n.mask, n.version, n.hint) = (mask, version, hint);
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
            let i = self.new_node(lpn, mask, version, hint);
            // The flushes may have moved index entries: look the slot up again.
            let (pos, _) = self.index.find(k);
            self.index.insert_at(pos, k, i);
            i
        } else {
            i
        };
        self.to_cold(i);
        self.account(i, true);
        Ok(())
    }

    /// Cases 3–5: a write hit on node `i`.
    fn hit(&mut self, i: u32, sink: &mut dyn FlushSink) -> Result<()> {
        self.access(i, true);
        match self.nodes[i as usize].region as usize {
            COLD => {
                if self.moves_up(i, WARM, true) {
                    self.from_cold(i);
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
    fn state(&self) -> (Vec<Lpn>, Vec<Lpn>, Vec<(Lbn, Vec<Lpn>)>, Vec<Lpn>) {
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

    fn write(
        &mut self,
        lpn: Lpn,
        mask: SectorMask,
        version: u32,
        hint: u32,
        sink: &mut dyn FlushSink,
    ) -> Result<SectorMask> {
        let k = checked_key(lpn)?;
        if self.p.clock == Clock::PageWrites {
            self.tick();
        }
        let (pos, found) = self.index.find(k);
        let node = found.then(|| self.index.value(pos));
        let before = match node {
            Some(i) if self.nodes[i as usize].region != GHOST => {
                let n = &mut self.nodes[i as usize];
                let before = n.mask;
                n.mask |= mask;
                n.version = version;
                n.hint = hint;
                self.hit(i, sink)?;
                before
            }
            ghost => {
                self.insert(k, lpn, mask, version, hint, ghost, sink)?;
                0
            }
        };
        self.settle(sink)?;
        if self.p.cold_eviction == ColdEviction::Active {
            self.active(sink)?;
        }
        Ok(before)
    }

    fn read(
        &mut self,
        lpn: Lpn,
        _mask: SectorMask,
        _sink: &mut dyn FlushSink,
    ) -> Result<SectorMask> {
        let Some(k) = key(lpn) else { return Ok(0) };
        Ok(self.index.get(k).map_or(0, |i| self.nodes[i as usize].mask))
    }

    fn trim(&mut self, lpn: Lpn) {
        let Some(i) = key(lpn).and_then(|k| self.index.get(k)) else {
            return;
        };
        match self.nodes[i as usize].region as usize {
            HOT => self.pop_page(HOT, i),
            WARM => self.pop_page(WARM, i),
            COLD => self.from_cold(i),
            _ => return,
        }
        self.account(i, false);
        self.to_ghost(i);
    }

    fn flush_all(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        for r in [WARM, HOT] {
            while self.list(r).tail != NIL {
                let i = self.list(r).tail;
                self.pop_page(r, i);
                self.to_cold(i);
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

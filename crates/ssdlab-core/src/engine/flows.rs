//! Several flows (tenants) sharing the device (`[[flows]]`, timed mode).
//!
//! Each flow has its own workload, its own range of the device's logical pages and its own
//! submission queue. A closed-loop flow keeps `queue_depth` requests outstanding; an open-loop
//! one (`queue_depth = 0`) submits at its arrival times, at most `max_inflight` outstanding. The
//! controller fetches commands from the submission queues by NVMe arbitration
//! (`host.arbitration`) whenever it holds fewer than `host.device_queue_depth` (0: at once), and
//! the host-interface scheduler (`run.scheduler`) takes what was fetched. A request's latency
//! runs from its submission, so time in the submission queue counts.
//!
//! Arbitration (NVMe 1.4 §4.13): `round-robin` takes one command from each non-empty queue in
//! turn; `weighted-round-robin` serves `urgent` flows first (round robin among them), then gives
//! each other flow a turn of up to `weight` commands. The NVMe classes high, medium and low are
//! weighted classes: here each flow's own `weight` sets its share, so they differ only by name.

use super::address::AddressMap;
use super::plan::FlowPlan;
use super::replay::{Loop, Submissions, Submitted};
use super::sim::Sim;
use super::source::{no_requests, open_source, At, Source};
use super::timed::{FlowStats, Interface};
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::request::{Op, Request};
use crate::timed::{Arrivals, Clock};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// One flow on the clock.
struct Flow {
    view: Config,
    src: Source,
    /// Closed loop: this many outstanding (0 = open loop); open loop: at most `cap` (0 = none).
    depth: usize,
    cap: usize,
    urgent: bool,
    weight: u32,
    /// The FDP placement identifier its writes carry (`flows[i].placement_id`), if set.
    pid: Option<u16>,
    /// Its namespace's placement handle list (RUH of each placement handle; empty: the
    /// identity), the device's handles per reclaim group, and its key for errors.
    handles: Vec<u32>,
    ruhs: u32,
    arrivals: Arrivals,
    /// The next request to submit, with where it is and (open loop) its arrival on the clock.
    next: Option<(Request, At, f64)>,
    passes_left: u32,
    /// Submitted and not completed (queued, fetched or in service).
    outstanding: usize,
    /// Its submission queue: requests submitted, not yet fetched (request, where, when, measured).
    sq: VecDeque<(Request, At, f64, bool)>,
    /// Requests read from its workload (to report an empty one).
    read: u64,
    /// When it last submitted (a further pass's arrivals start there).
    last_submit_us: f64,
    /// Its key prefix (`flows[i].workload`) and, once its first pass has ended, the warnings
    /// about how its trace read (`Source::read_warnings`).
    key: String,
    read_notes: Option<Vec<String>>,
}

impl Flow {
    /// Placement identifier `pid` (group × handles + placement handle) as the device's: the
    /// placement handle through its namespace's list.
    #[cold]
    fn ruh_of(&self, pid: u16) -> Result<u16> {
        let (group, ph) = (pid as u32 / self.ruhs, pid as u32 % self.ruhs);
        let ruh = self.handles.get(ph as usize).ok_or_else(|| {
            SimError::config(
                format!("{}.placement_handles", self.key.trim_end_matches(".workload")),
                format!(
                    "a write names placement handle {ph} (identifier {pid}), but its namespace's list has {}",
                    self.handles.len()
                ),
            )
        })?;
        Ok((group * self.ruhs + ruh) as u16)
    }

    /// Read the next request of the workload (reopened for further passes).
    fn advance(&mut self) -> Result<()> {
        loop {
            if let Some(r) = self.src.next() {
                let mut req = r?;
                if let Some(pid) = self.pid {
                    req.placement_id = pid;
                }
                if !self.handles.is_empty() && req.op == Op::Write {
                    req.placement_id = self.ruh_of(req.placement_id)?;
                }
                let at = self.src.at();
                let a = if self.depth == 0 {
                    self.arrivals.at(req.time_us)
                } else {
                    0.0
                };
                self.read += 1;
                self.next = Some((req, at, a));
                return Ok(());
            }
            if self.read == 0 {
                let (lines, format) = (self.src.lines(), self.src.format_name());
                return Err(no_requests(&self.view, lines, format));
            }
            self.next = None;
            if self.read_notes.is_none() {
                self.read_notes = Some(self.src.read_warnings(&self.view, &self.key));
            }
            if self.passes_left <= 1 {
                return Ok(());
            }
            self.passes_left -= 1;
            self.arrivals.new_pass(self.last_submit_us);
            self.src = open_source(&self.view)?;
        }
    }

    /// When its next request may be submitted, it being `now` (None: not now, or none left):
    /// closed loop at once while a slot is free; open loop at its arrival while under the cap;
    /// neither at or after `stop_us` (`run.runtime_us`).
    fn ready_at(&self, now: f64, stop_us: f64) -> Option<f64> {
        let (_, _, a) = self.next.as_ref()?;
        if self.depth > 0 {
            return (self.outstanding < self.depth && now < stop_us).then_some(f64::NEG_INFINITY);
        }
        (*a < stop_us && (self.cap == 0 || self.outstanding < self.cap)).then_some(*a)
    }
}

/// The host's submitting threads (`host.cpu_us`, `host.wake_us`): each flow is one thread on
/// a core, and a core handles its threads' completions one at a time, each for `cpu_us`; a
/// thread that was idle when its request completed starts `wake_us` later. The last `submit_us`
/// of the `cpu_us` submit the thread's next request: the completed one's latency ends before.
struct Host {
    cpu_us: f64,
    submit_us: f64,
    wake_us: f64,
    /// Each flow's core, and when each core is next free.
    core: Vec<usize>,
    free_us: Vec<f64>,
    /// Completions handled and not yet acted on: (when, flow), earliest first.
    seen: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Host {
    /// The threads of `cfg`'s flows: a flow's `cpu`, else a core of its own.
    fn new(cfg: &Config) -> Option<Host> {
        if !cfg.host_model() {
            return None;
        }
        let mut cores: Vec<Option<u32>> = Vec::new();
        let core = (cfg.flows.iter())
            .map(
                |f| match f.cpu.and_then(|c| cores.iter().position(|&k| k == Some(c))) {
                    Some(k) => k,
                    None => {
                        cores.push(f.cpu);
                        cores.len() - 1
                    }
                },
            )
            .collect();
        Some(Host {
            cpu_us: cfg.host.cpu_us,
            submit_us: cfg.host.submit_us,
            wake_us: cfg.host.wake_us,
            core,
            free_us: vec![0.0; cores.len()],
            seen: BinaryHeap::new(),
        })
    }

    /// Flow `f`'s request completed at `done_us`: when its thread has handled it (its latency
    /// ends then; the thread acts on it, submitting again, `submit_us` later), and whether the
    /// thread was asleep (idle) and woke for it, a context switch as fio counts them (`ctx`).
    fn handle(&mut self, f: usize, done_us: f64) -> (f64, bool) {
        let c = self.core[f];
        let woke = self.free_us[c] <= done_us;
        let start = if woke {
            done_us + self.wake_us
        } else {
            self.free_us[c]
        };
        self.free_us[c] = start + self.cpu_us;
        self.seen
            .push(Reverse((self.free_us[c].to_bits(), f as u32)));
        (self.free_us[c] - self.submit_us, woke)
    }

    /// When the next handled completion is acted on.
    fn next(&self) -> Option<f64> {
        self.seen.peek().map(|Reverse((t, _))| f64::from_bits(*t))
    }

    /// Act on the next handled completion: its flow.
    fn pop(&mut self) -> Option<usize> {
        self.seen.pop().map(|Reverse((_, f))| f as usize)
    }
}

/// NVMe arbitration between the submission queues (module docs).
struct Arbiter {
    weighted: bool,
    /// The flow whose turn it is, and what is left of its turn (weighted).
    turn: usize,
    credit: u32,
    urgent_turn: usize,
}

impl Arbiter {
    /// The flow whose queue's head is fetched next (None: every queue is empty).
    fn pick(&mut self, flows: &[Flow]) -> Option<usize> {
        let n = flows.len();
        let ready = |i: usize, urgent: bool| !flows[i].sq.is_empty() && flows[i].urgent == urgent;
        if self.weighted {
            if let Some(i) = (0..n)
                .map(|k| (self.urgent_turn + k) % n)
                .find(|&i| ready(i, true))
            {
                self.urgent_turn = i + 1;
                return Some(i);
            }
        }
        let any = |i: usize| !flows[i].sq.is_empty() && (!self.weighted || !flows[i].urgent);
        let k = (0..n).find(|&k| any((self.turn + k) % n))?;
        let i = (self.turn + k) % n;
        if !self.weighted {
            self.turn = i + 1;
            return Some(i);
        }
        if k > 0 || self.credit == 0 {
            self.credit = flows[i].weight;
        }
        self.credit -= 1;
        self.turn = if self.credit == 0 { i + 1 } else { i };
        Some(i)
    }
}

/// Several flows' submissions to the replay loop (timed mode only).
pub(super) struct Flows<'a> {
    pub(super) plan: &'a FlowPlan,
    pub(super) resolved: &'a Config,
}

impl Submissions for Flows<'_> {
    fn run(self, sim: &mut Sim, lp: &mut Loop, clock: Option<Clock>) -> Result<Submitted> {
        let Some(mut clock) = clock else {
            return Err(SimError::config(
                "flows",
                "several flows need run.mode = \"timed\"",
            ));
        };
        let (cfg, plan) = (self.resolved, self.plan);
        let flows = replay(sim, cfg, &mut clock, plan, lp)?;
        Ok(Submitted {
            clock: Some(clock),
            skipped: 0,
            flows,
        })
    }
}

/// `flows[i].fast_forward_requests`: each flow's first requests applied untimed before the
/// timed replay, writes straight to the FTL (as the preconditioning writes), reads skipped; its
/// generator carries on from there, and the metrics count from the state they leave. The state
/// a long run's first part leaves (fio's ramp: a sequential overwrite empties GC's victims) at
/// the preconditioning's speed.
fn fast_forward(sim: &mut Sim, cfg: &Config, flows: &mut [Flow], lp: &mut Loop) -> Result<()> {
    if cfg.flows.iter().all(|f| f.fast_forward_requests == 0) {
        return Ok(());
    }
    sim.be.nand.set_logging(false);
    for (i, (flow, f)) in flows.iter_mut().zip(&cfg.flows).enumerate() {
        sim.use_flow_map(i);
        for _ in 0..f.fast_forward_requests {
            let Some((req, at, _)) = flow.next.take() else {
                break;
            };
            if req.op == Op::Write {
                sim.fast_forward_write(&req, at)?;
            }
            flow.advance()?;
        }
    }
    sim.be.nand.set_logging(true);
    lp.base = sim.snapshot();
    Ok(())
}

/// Replay every flow (`only`: that flow alone, the others idle) on `clock`: each flow's measured
/// requests (its notes go to the run's warnings).
fn replay(
    sim: &mut Sim,
    cfg: &Config,
    clock: &mut Clock,
    plan: &FlowPlan,
    lp: &mut Loop,
) -> Result<Vec<FlowStats>> {
    if !plan.stripes.is_empty() {
        clock.partition(cfg, &plan.stripes);
    }
    let only = plan.only;
    let ppb = sim.geo.pages_per_block;
    let mut flows = Vec::with_capacity(cfg.flows.len());
    for (i, f) in cfg.flows.iter().enumerate() {
        let view = cfg.flow_view(i);
        let map = AddressMap::onto(
            &view.workload.address_map,
            plan.bases[i] * ppb,
            plan.ranges[i] * ppb,
            format!("flows[{i}]"),
        );
        sim.flow_maps.push(map);
        let mut flow = Flow {
            src: open_source(&view)?,
            depth: f.queue_depth as usize,
            cap: f.max_inflight as usize,
            urgent: f.priority == "urgent",
            weight: f.weight,
            pid: f.placement_id,
            handles: f.placement_handles.clone(),
            ruhs: cfg.fdp.handles,
            arrivals: Arrivals::new(cfg.run.time_scale),
            next: None,
            passes_left: if only.is_none_or(|o| o == i) {
                cfg.run.repeat
            } else {
                0
            },
            outstanding: 0,
            sq: VecDeque::new(),
            read: 0,
            last_submit_us: 0.0,
            view,
            key: format!("flows[{i}].workload"),
            read_notes: None,
        };
        if flow.passes_left > 0 {
            flow.advance()?;
        }
        flows.push(flow);
    }
    fast_forward(sim, cfg, &mut flows, lp)?;
    sim.use_flow_map(0);
    let mut q = Interface::of(&cfg.run.scheduler, flows.len());
    let mut arb = Arbiter {
        weighted: cfg.host.arbitration == "weighted-round-robin",
        turn: 0,
        credit: 0,
        urgent_turn: 0,
    };
    let limit = cfg.host.device_queue_depth as usize;
    let mut host = Host::new(cfg);
    q.host = host.is_some();
    let r = &cfg.run;
    let stop_us = if r.runtime_us > 0.0 {
        r.warmup_us + r.runtime_us
    } else {
        f64::INFINITY
    };
    let closed: Vec<bool> = flows.iter().map(|f| f.depth > 0).collect();
    let open: Vec<usize> = (0..flows.len()).filter(|&i| !closed[i]).collect();
    // Closed-loop flows with a free slot: they submit at once.
    let mut due: Vec<usize> = (0..flows.len()).filter(|&i| closed[i]).collect();
    loop {
        for i in due.drain(..) {
            while flows[i].ready_at(q.now, stop_us).is_some() {
                admit(sim, clock, &mut q, &mut flows, i, &mut arb, limit, lp)?;
            }
        }
        // The next event: a completion, a thread acting on one it has handled (the host
        // model), or an open-loop arrival (after the completions due by then; flows in order
        // on ties).
        let arrival = open
            .iter()
            .filter_map(|&i| flows[i].ready_at(q.now, stop_us).map(|a| (a, i)))
            .min_by(|x, y| x.0.total_cmp(&y.0));
        let seen = host.as_ref().and_then(Host::next);
        let before = |t: f64| arrival.is_none_or(|(a, _)| t <= a);
        match (q.next_completion(), seen, arrival) {
            (Some(c), s, _) if before(c) && s.is_none_or(|s| c <= s) => {
                let f = q.next_event()? as usize;
                match host.as_mut() {
                    Some(h) => {
                        let (seen_us, woke) = h.handle(f, q.now);
                        q.seen(clock, seen_us, woke)?;
                    }
                    None => {
                        flows[f].outstanding -= 1;
                        if closed[f] {
                            due.push(f);
                        }
                    }
                }
                // The scheduler takes what the completion allows; the controller fetches
                // into the room it left, before the host submits again.
                sim.pump(clock, &mut q)?;
                fetch(sim, clock, &mut q, &mut flows, &mut arb, limit)?;
            }
            (_, Some(s), _) if before(s) => {
                if let Some(f) = host.as_mut().and_then(Host::pop) {
                    q.now = q.now.max(s);
                    flows[f].outstanding -= 1;
                    if closed[f] {
                        due.push(f);
                    }
                }
            }
            (_, _, Some((a, i))) => {
                q.now = q.now.max(a);
                admit(sim, clock, &mut q, &mut flows, i, &mut arb, limit, lp)?;
            }
            _ => break,
        }
    }
    lp.warnings.extend(
        flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.arrivals.reordered > 0)
            .map(|(i, f)| {
                format!(
                    "flows[{i}]: {} requests arrived before the one listed before them; they were submitted at that one's time",
                    f.arrivals.reordered
                )
            }),
    );
    for (i, f) in flows.iter_mut().enumerate() {
        if let Some(n) = f.read_notes.take().filter(|n| !n.is_empty()) {
            lp.warnings.push(format!("flows[{i}]: {}", n.join("; ")));
        }
    }
    Ok(std::mem::take(&mut q.stats))
}

/// Flow `i` submits its next request now; the controller fetches what it may (without a limit,
/// that request: it is the only one queued).
#[allow(clippy::too_many_arguments)]
fn admit(
    sim: &mut Sim,
    clock: &mut Clock,
    q: &mut Interface,
    flows: &mut [Flow],
    i: usize,
    arb: &mut Arbiter,
    limit: usize,
    lp: &mut Loop,
) -> Result<()> {
    lp.warm_by(sim, q.now);
    let Some((req, at, now, measured)) = submit(clock, q, flows, i, lp)? else {
        return Ok(());
    };
    if limit == 0 {
        q.enqueue(req, at, now, measured, i as u32);
        sim.pump(clock, q)?;
    } else {
        flows[i].sq.push_back((req, at, now, measured));
        fetch(sim, clock, q, flows, arb, limit)?;
    }
    lp.submitted(sim, Some(clock))
}

/// The controller fetches commands by arbitration while it holds fewer than `limit` (0: no
/// limit); the scheduler takes what it may of them.
fn fetch(
    sim: &mut Sim,
    clock: &mut Clock,
    q: &mut Interface,
    flows: &mut [Flow],
    arb: &mut Arbiter,
    limit: usize,
) -> Result<()> {
    // Without a limit every command was fetched when it was submitted.
    while limit > 0 && q.in_device() < limit {
        let Some(i) = arb.pick(flows) else {
            return Ok(());
        };
        let Some((req, at, submitted_us, measured)) = flows[i].sq.pop_front() else {
            return Err(SimError::Integrity(format!(
                "the arbitration picked flows[{i}]'s empty submission queue"
            )));
        };
        q.enqueue(req, at, submitted_us, measured, i as u32);
        sim.pump(clock, q)?;
    }
    Ok(())
}

/// Flow `i` submits its next request now: the request, where it is, when, and whether it is
/// measured (None: it has none left).
fn submit(
    clock: &mut Clock,
    q: &mut Interface,
    flows: &mut [Flow],
    i: usize,
    lp: &Loop,
) -> Result<Option<(Request, At, f64, bool)>> {
    let f = &mut flows[i];
    let Some((req, at, _)) = f.next.take() else {
        return Ok(None);
    };
    let measured = lp.measured();
    f.outstanding += 1;
    f.last_submit_us = q.now;
    f.advance()?;
    let outstanding: usize = flows.iter().map(|f| f.outstanding).sum();
    clock.submitted(q.now, outstanding);
    Ok(Some((req, at, q.now, measured)))
}

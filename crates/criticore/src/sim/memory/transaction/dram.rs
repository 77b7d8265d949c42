//! DRAM banks with row buffers behind one controller queue.
//!
//! Transaction level: when the controller picks a request, it reserves the
//! commands the request needs on its bank (PRE if another row is open, ACT if
//! no row is open, then the column access) and a burst on the shared data
//! bus, under the named timing set's constraints (tRCD, tRP, tRAS, tRC, tRRD,
//! CL/CWL, the burst, read/write turnarounds, refresh). The next request is
//! picked as soon as the previous one's column command is placed, so one
//! bank's PRE/ACT overlaps another's data transfer (bank-level parallelism).
//! Open-page policy. FR-FCFS picks the oldest row hit among the requests
//! that have arrived, else the oldest whose bank is ready for its first
//! command, else the oldest; FCFS the oldest. This is the scheduling rule of
//! Ramulator 2, DRAMSim3 and gem5 (docs/references.md, Runtime §5).
//!
//! Times are picoseconds.

use std::collections::VecDeque;

const NEVER: u64 = u64::MAX;

/// A DDR timing set, in picoseconds (cycle counts × tCK).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub name: &'static str,
    pub t_ck: u64,
    pub cl: u64,
    pub cwl: u64,
    pub t_rcd: u64,
    pub t_rp: u64,
    pub t_ras: u64,
    pub t_rc: u64,
    pub t_rrd: u64,
    pub t_faw: u64,
    /// Data burst: BL8 on a DDR bus = 4 cycles.
    pub t_burst: u64,
    pub t_wr: u64,
    pub t_wtr: u64,
    pub t_rtp: u64,
    pub t_refi: u64,
    pub t_rfc: u64,
    /// Controller overhead per row activation beyond JEDEC's tRC (0 for the
    /// JEDEC sets; fitted for a board's controller, docs/calibration.md).
    pub t_ctrl: u64,
}

impl Timing {
    fn from_cycles(name: &'static str, t_ck: u64, c: [u64; 12], t_refi_ns: u64, t_rfc_ns: u64) -> Timing {
        let [cl, cwl, rcd, rp, ras, rc, rrd, faw, burst, wr, wtr, rtp] = c;
        Timing {
            name,
            t_ck,
            cl: cl * t_ck,
            cwl: cwl * t_ck,
            t_rcd: rcd * t_ck,
            t_rp: rp * t_ck,
            t_ras: ras * t_ck,
            t_rc: rc * t_ck,
            t_rrd: rrd * t_ck,
            t_faw: faw * t_ck,
            t_burst: burst * t_ck,
            t_wr: wr * t_ck,
            t_wtr: wtr * t_ck,
            t_rtp: rtp * t_ck,
            t_refi: t_refi_ns * 1000,
            t_rfc: t_rfc_ns * 1000,
            t_ctrl: 0,
        }
    }

    /// JEDEC DDR3 speed bins (JESD79-3F), 2 Gb x8 devices:
    /// ddr3-1066 (7-7-7, tCK 1.875 ns) is the i.MX6 SABRE Lite's memory speed;
    /// ddr3-1600 (11-11-11, tCK 1.25 ns) is the peers' common preset (benches/dram_peers.py).
    pub fn named(name: &str) -> Option<Timing> {
        //                       [CL, CWL, tRCD, tRP, tRAS, tRC, tRRD, tFAW, burst, tWR, tWTR, tRTP]
        Some(match name {
            "ddr3-1066" => Timing::from_cycles("ddr3-1066", 1875, [7, 6, 7, 7, 20, 27, 4, 20, 4, 8, 4, 4], 7800, 160),
            "ddr3-1600" => Timing::from_cycles("ddr3-1600", 1250, [11, 8, 11, 11, 28, 39, 5, 24, 4, 12, 6, 6], 7800, 160),
            "ddr4-2400" => Timing::from_cycles("ddr4-2400", 833, [16, 12, 16, 16, 39, 55, 4, 26, 4, 18, 9, 9], 7800, 350),
            _ => return None,
        })
    }

    pub const NAMES: [&'static str; 3] = ["ddr3-1066", "ddr3-1600", "ddr4-2400"];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    FrFcfs,
    Fcfs,
}

impl Scheduler {
    pub const NAMES: [(&'static str, Scheduler); 2] = [("frfcfs", Scheduler::FrFcfs), ("fcfs", Scheduler::Fcfs)];
}

/// How a request found its bank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOutcome {
    Hit,
    /// No row open (after refresh, or at start).
    Miss,
    /// Another row open: precharge first.
    Conflict,
}

#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub id: u64,
    pub bank: u32,
    pub row: u64,
    pub write: bool,
    pub arrival: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct Served {
    pub id: u64,
    pub write: bool,
    /// End of the data burst.
    pub done: u64,
    pub outcome: RowOutcome,
    pub arrival: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Bank {
    open_row: Option<u64>,
    /// Earliest ACT (tRC after the last ACT, tRP after the last PRE).
    act_ready: u64,
    /// Earliest PRE (tRAS after ACT, write recovery / tRTP after a column).
    pre_ready: u64,
    /// Earliest column command (tRCD after ACT).
    col_ready: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DramStats {
    pub reads: u64,
    pub writes: u64,
    pub hits: u64,
    pub misses: u64,
    pub conflicts: u64,
    /// Sum of read latencies (arrival at the controller to end of data), ps.
    pub read_latency_ps: u128,
}

impl DramStats {
    pub fn row_hit_rate(&self) -> f64 {
        let n = self.hits + self.misses + self.conflicts;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }

    pub fn mean_read_latency_ns(&self) -> f64 {
        if self.reads == 0 {
            0.0
        } else {
            self.read_latency_ps as f64 / self.reads as f64 / 1000.0
        }
    }
}

#[derive(Debug, Clone)]
pub struct Controller {
    pub timing: Timing,
    scheduler: Scheduler,
    banks: Vec<Bank>,
    /// Waiting requests in arrival order (arrivals are pushed in time order).
    queue: VecDeque<Request>,
    /// Per bank: waiting requests to its open row; and their total.
    hits: Vec<u32>,
    total_hits: u32,
    /// Last four ACT times (tFAW) and the last one (tRRD).
    acts: [u64; 4],
    act_k: usize,
    data_free: u64,
    last_write: bool,
    /// One command slot after the last request's first command: the next pick.
    next_pick: u64,
    next_refresh: u64,
    pub stats: DramStats,
}

impl Controller {
    pub fn new(timing: Timing, banks: u32, scheduler: Scheduler) -> Controller {
        Controller {
            timing,
            scheduler,
            banks: vec![Bank::default(); banks as usize],
            queue: VecDeque::new(),
            hits: vec![0; banks as usize],
            total_hits: 0,
            acts: [NEVER; 4],
            act_k: 0,
            data_free: 0,
            last_write: false,
            next_pick: 0,
            next_refresh: if timing.t_refi > 0 { timing.t_refi } else { u64::MAX },
            stats: DramStats::default(),
        }
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Queue a request; arrivals must not go back in time.
    pub fn push(&mut self, r: Request) {
        debug_assert!(self.queue.back().is_none_or(|b| b.arrival <= r.arrival));
        if self.banks[r.bank as usize].open_row == Some(r.row) {
            self.hits[r.bank as usize] += 1;
            self.total_hits += 1;
        }
        self.queue.push_back(r);
    }

    /// When the controller next picks a request (u64::MAX if the queue is empty).
    pub fn next_pick_at(&self) -> u64 {
        self.queue.front().map_or(u64::MAX, |first| self.next_pick.max(first.arrival))
    }

    /// Pick and schedule one request at `now` (≥ next_pick_at()).
    pub fn serve_one(&mut self, now: u64) -> Option<Served> {
        let now = now.max(self.next_pick);
        if self.next_refresh <= now {
            self.refresh_until(now);
        }
        let idx = self.pick(now)?;
        let r = self.queue.remove(idx).unwrap();
        let b = r.bank as usize;
        let was_open = self.banks[b].open_row;
        if was_open == Some(r.row) {
            self.hits[b] -= 1;
            self.total_hits -= 1;
        }
        let served = self.schedule(r, now);
        if self.banks[b].open_row != was_open {
            self.recount(b);
        }
        Some(served)
    }

    /// Waiting requests to bank `b`'s open row, after its row changed.
    fn recount(&mut self, b: usize) {
        if self.queue.is_empty() {
            self.total_hits -= self.hits[b];
            self.hits[b] = 0;
            return;
        }
        let open = self.banks[b].open_row;
        let n = self.queue.iter().filter(|q| q.bank as usize == b && Some(q.row) == open).count() as u32;
        self.total_hits = self.total_hits - self.hits[b] + n;
        self.hits[b] = n;
    }

    fn refresh_until(&mut self, now: u64) {
        // All-bank refresh: rows close, banks busy for tRFC.
        while self.next_refresh <= now {
            let start = self.next_refresh.max(self.banks.iter().map(|b| b.pre_ready).max().unwrap_or(0));
            for b in &mut self.banks {
                b.open_row = None;
                b.act_ready = b.act_ready.max(start + self.timing.t_rp + self.timing.t_rfc);
            }
            self.hits.iter_mut().for_each(|h| *h = 0);
            self.total_hits = 0;
            self.next_refresh += self.timing.t_refi;
        }
    }

    fn pick(&self, now: u64) -> Option<usize> {
        // One waiting request: nothing to choose.
        if self.queue.len() == 1 || self.queue.get(1).is_some_and(|r| r.arrival > now) {
            return self.queue.front().filter(|r| r.arrival <= now).map(|_| 0);
        }
        if self.scheduler == Scheduler::FrFcfs {
            // First ready: the oldest arrived row hit, else the oldest arrived
            // request whose bank can take its first command now (PRE or ACT),
            // else the oldest (Ramulator 2's "ready first, oldest second").
            // Arrivals are a prefix of the queue.
            let arrived = || self.queue.iter().take_while(|r| r.arrival <= now);
            if self.total_hits > 0 {
                if let Some(i) = arrived().position(|r| self.banks[r.bank as usize].open_row == Some(r.row)) {
                    return Some(i);
                }
            }
            if let Some(i) = arrived().position(|r| {
                let b = &self.banks[r.bank as usize];
                if b.open_row.is_some() { b.pre_ready <= now } else { b.act_ready <= now }
            }) {
                return Some(i);
            }
        }
        self.queue.front().filter(|r| r.arrival <= now).map(|_| 0)
    }

    fn schedule(&mut self, r: Request, now: u64) -> Served {
        let t = self.timing;
        let bank = &mut self.banks[r.bank as usize];
        let outcome = match bank.open_row {
            Some(row) if row == r.row => RowOutcome::Hit,
            Some(_) => RowOutcome::Conflict,
            None => RowOutcome::Miss,
        };
        let mut col = now.max(bank.col_ready);
        let mut first_cmd = None;
        if outcome != RowOutcome::Hit {
            let mut act = now.max(bank.act_ready);
            if outcome == RowOutcome::Conflict {
                let pre = now.max(bank.pre_ready);
                act = act.max(pre + t.t_rp);
                first_cmd = Some(pre);
            }
            // NEVER + anything saturates: no constraint before the first ACTs.
            let after = |a: u64, d: u64| if a == NEVER { 0 } else { a + d };
            act = act.max(after(self.acts[(self.act_k + 3) % 4], t.t_rrd)).max(after(self.acts[self.act_k], t.t_faw));
            self.acts[self.act_k] = act;
            self.act_k = (self.act_k + 1) % 4;
            bank.open_row = Some(r.row);
            bank.act_ready = act + t.t_rc + t.t_ctrl;
            bank.pre_ready = act + t.t_ras;
            bank.col_ready = act + t.t_rcd;
            col = col.max(bank.col_ready);
            first_cmd = first_cmd.or(Some(act));
        }
        let latency = if r.write { t.cwl } else { t.cl };
        // Data-bus turnaround: a read after a write waits tWTR after the write data.
        let bus_free = if self.last_write && !r.write { self.data_free + t.t_wtr } else { self.data_free };
        col = col.max(bus_free.saturating_sub(latency));
        let data_start = col + latency;
        let done = data_start + t.t_burst;
        bank.pre_ready = bank.pre_ready.max(if r.write { done + t.t_wr } else { col + t.t_rtp });
        self.data_free = done;
        self.last_write = r.write;
        // The next pick follows this request's first command on the command
        // bus, so other banks' PRE/ACT overlap this one's (bank parallelism).
        self.next_pick = first_cmd.unwrap_or(col) + t.t_ck;
        match outcome {
            RowOutcome::Hit => self.stats.hits += 1,
            RowOutcome::Miss => self.stats.misses += 1,
            RowOutcome::Conflict => self.stats.conflicts += 1,
        }
        if r.write {
            self.stats.writes += 1;
        } else {
            self.stats.reads += 1;
            self.stats.read_latency_ps += (done - r.arrival) as u128;
        }
        Served { id: r.id, write: r.write, done, outcome, arrival: r.arrival }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_refresh(name: &str) -> Timing {
        Timing { t_refi: 0, ..Timing::named(name).unwrap() }
    }

    fn req(id: u64, bank: u32, row: u64, arrival: u64) -> Request {
        Request { id, bank, row, write: false, arrival }
    }

    #[test]
    fn hit_miss_and_conflict_latencies_are_the_jedec_sums() {
        // DDR3-1600 11-11-11, tCK 1.25 ns: miss = tRCD + CL + burst = (11 + 11 + 4) × 1.25 = 32.5 ns;
        // hit = CL + burst = 18.75 ns; conflict adds tRP, but no earlier than tRAS after the ACT.
        let mut c = Controller::new(no_refresh("ddr3-1600"), 8, Scheduler::FrFcfs);
        c.push(req(0, 0, 5, 0));
        let s = c.serve_one(0).unwrap();
        assert_eq!((s.outcome, s.done), (RowOutcome::Miss, 32_500));
        c.push(req(1, 0, 5, 100_000));
        let s = c.serve_one(100_000).unwrap();
        assert_eq!((s.outcome, s.done - 100_000), (RowOutcome::Hit, 18_750));
        c.push(req(2, 0, 9, 200_000));
        let s = c.serve_one(200_000).unwrap();
        assert_eq!((s.outcome, s.done - 200_000), (RowOutcome::Conflict, 46_250));
        // A conflict right after an ACT waits for tRAS (35 ns) then tRP, and tRC from the ACT.
        let mut c = Controller::new(no_refresh("ddr3-1600"), 8, Scheduler::FrFcfs);
        c.push(req(0, 0, 1, 0));
        c.serve_one(0);
        c.push(req(1, 0, 2, 0));
        let s = c.serve_one(0).unwrap();
        // ACT at max(tRAS + tRP, tRC) = max(35 + 13.75, 48.75) = 48.75 ns; data at +tRCD + CL + burst.
        assert_eq!(s.done, 48_750 + 32_500);
        assert_eq!(c.stats.mean_read_latency_ns(), (32.5 + 81.25) / 2.0);
    }

    #[test]
    fn frfcfs_serves_a_younger_row_hit_first_fcfs_does_not() {
        for (sched, first) in [(Scheduler::FrFcfs, 2), (Scheduler::Fcfs, 1)] {
            let mut c = Controller::new(no_refresh("ddr3-1600"), 8, sched);
            c.push(req(0, 0, 7, 0));
            c.serve_one(0);
            c.push(req(1, 0, 8, 10)); // conflict, older
            c.push(req(2, 0, 7, 20)); // hit, younger
            assert_eq!(c.serve_one(1000).unwrap().id, first);
        }
    }

    #[test]
    fn different_banks_overlap_and_the_data_bus_serializes_bursts() {
        // Eight misses to eight banks at once: ACTs spaced by tRRD (and tFAW for the fifth),
        // bursts back to back at best; far faster than eight misses in series.
        let t = no_refresh("ddr3-1600");
        let mut c = Controller::new(t, 8, Scheduler::FrFcfs);
        for b in 0..8 {
            c.push(req(b as u64, b, 1, 0));
        }
        let mut last = 0;
        let mut prev_done = 0;
        while c.queued() > 0 {
            let at = c.next_pick_at();
            let s = c.serve_one(at).unwrap();
            assert!(s.done >= prev_done + t.t_burst);
            prev_done = s.done;
            last = s.done;
        }
        let serial = 8 * (t.t_rcd + t.cl + t.t_burst);
        assert!(last < serial / 2, "{last} vs serial {serial}");
        // tFAW: the fifth ACT is at least tFAW after the first (30 ns), so its data ends after that plus tRCD + CL + burst.
        assert!(last >= t.t_faw + t.t_rcd + t.cl + t.t_burst);
    }

    #[test]
    fn refresh_closes_rows() {
        let t = Timing::named("ddr3-1600").unwrap();
        let mut c = Controller::new(t, 8, Scheduler::FrFcfs);
        c.push(req(0, 3, 4, 0));
        c.serve_one(0);
        c.push(req(1, 3, 4, t.t_refi + 1));
        let s = c.serve_one(t.t_refi + 1).unwrap();
        assert_eq!(s.outcome, RowOutcome::Miss);
        assert!(s.done >= t.t_refi + t.t_rp + t.t_rfc + t.t_rcd + t.cl + t.t_burst);
    }
}

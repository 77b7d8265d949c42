//! Fluid memory model in the simulator: the flows of the model's equations
//! (`interference::fluid`, docs/memory-model.md) for whoever runs now.
//!
//! Rates and request rates are solved together by damped fixed-point iteration.
//! The flows depend only on who runs where, in which phase, what the regulator
//! stalls, the DMA transfers under way and the bus priorities: each such
//! combination is solved once per simulation and remembered.
//!
//! Per LLC partition it also counts the lines brought in (misses, kernel lines,
//! reloads), integrated between events, so that a resumed job reloads only what
//! the others could have evicted (docs/memory-model.md item 6).

use super::{Flows, MemoryContext, MemoryModel};
use crate::interference::fluid::{miss_ratio, FluidRules, PhaseMem, TaskMem};
use crate::model::{Arbiter, TaskSystem};
use crate::sim::job::{Job, JobId, Jobs, NONE_U64};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// One stream of memory traffic: which banks, how many requests per ns.
#[derive(Debug, Clone, Copy)]
struct Stream {
    banks: usize,
    rate: f64,
}

/// What the fixed point needs of the job on one active core.
#[derive(Debug, Clone, Copy, Default)]
struct CoreMem {
    task: usize,
    refs: f64,
    extra: f64,
    read_fraction: f64,
    compute: f64,
    miss: f64,
    banks: usize,
    /// Share of the core left by interrupt handlers (CPU 0).
    irq: f64,
}

/// Steps of the fixed point the Anderson acceleration combines.
const WINDOW: usize = 4;

/// Numbers (key and flows) the memo keeps at most, 4 MB; then it starts over.
const MEMO_WORDS: usize = 1 << 19;

/// FxHash-style hasher for the memo's keys (short slices of u64; no need for DoS resistance).
#[derive(Default)]
struct KeyHasher(u64);

impl KeyHasher {
    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub struct Fluid {
    rules: FluidRules,
    next_event: u64,
    /// Flows already solved, by key (see `build_key`): the flows are a function of it.
    memo: HashMap<Box<[u64]>, Box<[f64]>, BuildHasherDefault<KeyHasher>>,
    /// Each task's LLC partition, an index into `filled`.
    part_of: Vec<usize>,
    /// Lines brought into each partition since time 0, as of `filled_at`.
    filled: Vec<f64>,
    /// Per task, `filled` of its partition when its last job left a core
    /// (time 0: a task's lines are taken as cached then, as its PET is).
    task_mark: Vec<f64>,
    filled_at: u64,
    /// Lines the jobs resumed at `filled_at` reload, counted into `filled`
    /// once the instant's preemptions have been marked.
    reloading: Vec<f64>,
    any_reloading: bool,
    // Scratch, reused from call to call.
    key: Vec<u64>,
    /// Rate, requests per ns and stall of every core (3 × m), then the lines
    /// per ns each partition receives (its jobs' misses, kernel lines).
    solved: Vec<f64>,
    dma: Vec<Stream>,
    irq_share: f64,
    core: Vec<CoreMem>,
    active: Vec<usize>,
    k_mm: Vec<f64>,
    k_me: Vec<f64>,
    k_em: Vec<f64>,
    /// Fixed-priority bus: core d goes ahead of core c (`ahead[c * m + d]`).
    ahead: Vec<bool>,
    dma_main: Vec<f64>,
    dma_extra: Vec<f64>,
    main_r: Vec<f64>,
    extra_r: Vec<f64>,
    load: Vec<f64>,
    /// Fixed point: the rates x, the last G(x) and G(x) − x, and the differences
    /// of the last WINDOW steps (`d_f[j * m + c]`).
    x: Vec<f64>,
    g_prev: Vec<f64>,
    f_prev: Vec<f64>,
    d_f: Vec<f64>,
    d_g: Vec<f64>,
}

/// Least-squares weights γ of the Anderson step over the first `columns`
/// stored differences (normal equations, Gaussian elimination with partial
/// pivoting); None if they are (nearly) dependent.
fn anderson_weights(active: &[usize], d_f: &[f64], f: &[f64], m: usize, columns: usize) -> Option<[f64; WINDOW]> {
    let mut gamma = [0.0; WINDOW];
    if columns == 0 {
        return Some(gamma);
    }
    let mut a = [[0.0; WINDOW + 1]; WINDOW];
    for i in 0..columns {
        for j in 0..=i {
            let v: f64 = active.iter().map(|&c| d_f[i * m + c] * d_f[j * m + c]).sum();
            (a[i][j], a[j][i]) = (v, v);
        }
        a[i][columns] = active.iter().map(|&c| d_f[i * m + c] * f[c]).sum();
    }
    let scale = (0..columns).map(|i| a[i][i]).fold(0.0, f64::max);
    if !scale.is_finite() || scale <= 0.0 {
        return None;
    }
    for k in 0..columns {
        let p = (k..columns).max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs())).unwrap();
        if a[p][k].abs() <= 1e-12 * scale {
            return None;
        }
        a.swap(k, p);
        for i in k + 1..columns {
            let factor = a[i][k] / a[k][k];
            let pivot_row = a[k];
            for (x, p) in a[i].iter_mut().zip(pivot_row).skip(k).take(columns + 1 - k) {
                *x -= factor * p;
            }
        }
    }
    for k in (0..columns).rev() {
        let mut v = a[k][columns];
        for j in k + 1..columns {
            v -= a[k][j] * gamma[j];
        }
        gamma[k] = v / a[k][k];
    }
    gamma.iter().all(|g| g.is_finite()).then_some(gamma)
}

impl Fluid {
    pub fn new(system: &TaskSystem) -> Self {
        let rules = FluidRules::new(system);
        let m = system.platform.cores;
        let mut parts = Vec::new();
        let part_of: Vec<usize> = rules
            .tasks
            .iter()
            .map(|t| {
                parts.iter().position(|&p| p == t.part).unwrap_or_else(|| {
                    parts.push(t.part);
                    parts.len() - 1
                })
            })
            .collect();
        let n = parts.len();
        Fluid {
            rules,
            next_event: NONE_U64,
            memo: HashMap::default(),
            task_mark: vec![0.0; part_of.len()],
            part_of,
            filled: vec![0.0; n],
            filled_at: 0,
            reloading: vec![0.0; n],
            any_reloading: false,
            key: Vec::new(),
            solved: vec![0.0; 3 * m + n],
            dma: Vec::new(),
            irq_share: 0.0,
            core: vec![CoreMem::default(); m],
            active: Vec::with_capacity(m),
            k_mm: vec![0.0; m * m],
            k_me: vec![0.0; m * m],
            k_em: vec![0.0; m * m],
            ahead: vec![false; m * m],
            dma_main: vec![0.0; m],
            dma_extra: vec![0.0; m],
            main_r: vec![0.0; m],
            extra_r: vec![0.0; m],
            load: vec![0.0; m],
            x: vec![0.0; m],
            g_prev: vec![0.0; m],
            f_prev: vec![0.0; m],
            d_f: vec![0.0; WINDOW * m],
            d_g: vec![0.0; WINDOW * m],
        }
    }

    /// Bring the partitions' line counts up to `now` at the current fill
    /// rates (the last flows' partition rates, `solved[3m..]`).
    fn count_lines_to(&mut self, now: u64) {
        if now > self.filled_at {
            let dt = (now - self.filled_at) as f64;
            let m = self.core.len();
            for (f, r) in self.filled.iter_mut().zip(&self.solved[3 * m..]) {
                *f += r * dt;
            }
            self.filled_at = now;
        }
    }

    fn phase<'a>(tm: &'a TaskMem, job: &Job) -> &'a PhaseMem {
        let done = job.exec_ns - job.remaining_ns;
        tm.phases.iter().find(|p| p.end_work_ns > done).unwrap_or_else(|| tm.phases.last().expect("phases are non-empty"))
    }
}

impl Fluid {
    /// The inputs the flows depend on, as `self.key`: per core idle, stalled,
    /// running a task without memory demand, or running (task, phase); the DMA
    /// transfers under way; the bus priorities if the regulator imposes them.
    /// Also fills `self.dma`, `self.irq_share` and the DMA part of `next_event`.
    fn build_key(&mut self, now: u64, running: &[Option<JobId>], jobs: &Jobs, ctx: &MemoryContext) {
        self.key.clear();
        self.dma.clear();
        self.next_event = NONE_U64;
        self.irq_share = 0.0;
        let mut word = 0u64;
        for (i, d) in self.rules.devices.iter().enumerate() {
            let offset = now % d.period_ns;
            self.irq_share += d.irq_share;
            if offset < d.active_ns {
                self.dma.push(Stream { banks: d.banks, rate: d.requests_per_ns });
                self.next_event = self.next_event.min(now - offset + d.active_ns);
                word |= 1 << (i % 64);
            } else {
                self.next_event = self.next_event.min(now - offset + d.period_ns);
            }
            if i % 64 == 63 {
                self.key.push(word);
                word = 0;
            }
        }
        self.key.push(word);
        for (c, &on) in running.iter().enumerate() {
            let code = match on {
                None => 0,
                Some(_) if !ctx.allowed[c] => 1,
                Some(id) => {
                    let job = jobs.get(id);
                    let tm = &self.rules.tasks[job.task as usize];
                    if tm.phases.is_empty() {
                        2
                    } else {
                        ((job.task as u64 + 1) << 32) | Self::phase_index(tm, job) as u64
                    }
                }
            };
            self.key.push(code);
        }
        match ctx.bus_priority {
            Some(p) => {
                self.key.push(1);
                self.key.extend(p.iter().map(|&x| x as u64));
            }
            None => self.key.push(0),
        }
    }

    fn phase_index(tm: &TaskMem, job: &Job) -> usize {
        let done = job.exec_ns - job.remaining_ns;
        tm.phases.iter().position(|p| p.end_work_ns > done).unwrap_or(tm.phases.len() - 1)
    }

    /// Solve the flows for the inputs in `self.key` (and `self.dma`) into
    /// `self.solved`: rate, requests per ns and stall of every core, lines per
    /// ns into every partition.
    fn solve(&mut self, m: usize, bus_priority: Option<&[u32]>) {
        let s = self.rules.service_ns;
        let dma_offset = self.rules.devices.len() / 64 + 1;
        let dma_load: f64 = self.dma.iter().map(|x| x.rate * s).sum();
        let irq_factor = |c: usize| if c == 0 { (1.0 - self.irq_share).max(0.0) } else { 1.0 };
        let (rate_out, rest) = self.solved.split_at_mut(m);
        let (requests_out, rest) = rest.split_at_mut(m);
        let (stall_out, fill_out) = rest.split_at_mut(m);
        fill_out.fill(0.0);
        // 1. Who issues memory traffic, and its isolated behaviour.
        self.active.clear();
        for c in 0..m {
            requests_out[c] = 0.0;
            match self.key[dma_offset + c] {
                0 => (rate_out[c], stall_out[c]) = (1.0, 0.0),
                1 => (rate_out[c], stall_out[c]) = (0.0, 1.0),
                2 => (rate_out[c], stall_out[c]) = (irq_factor(c), 1.0 - irq_factor(c)),
                code => {
                    let task = (code >> 32) as usize - 1;
                    let tm = &self.rules.tasks[task];
                    let ph = &tm.phases[(code & 0xffff_ffff) as usize];
                    self.core[c] = CoreMem {
                        task,
                        refs: ph.refs_per_ns,
                        extra: tm.extra_refs_per_ns,
                        read_fraction: ph.read_fraction,
                        compute: ph.compute,
                        miss: 0.0,
                        banks: tm.banks,
                        irq: irq_factor(c),
                    };
                    self.active.push(c);
                }
            }
        }
        // 2. LLC sharing within each partition, in proportion to working sets.
        //    Without OS isolation the kernel lines of system calls press on every
        //    partition (the OS may use any colour); with it they stay in the OS partition.
        let os_everywhere: f64 = if self.rules.os_isolation { 0.0 } else { self.active.iter().map(|&d| self.rules.tasks[self.core[d].task].os_footprint).sum() };
        for &c in &self.active {
            let tm = &self.rules.tasks[self.core[c].task];
            let mut pressure: f64 =
                self.active.iter().map(|&d| &self.rules.tasks[self.core[d].task]).filter(|other| other.part == tm.part).map(|other| other.wss).sum();
            pressure += if self.rules.os_isolation { 0.0 } else { os_everywhere };
            let share = if pressure <= tm.capacity { tm.wss } else { tm.capacity * tm.wss / pressure };
            self.core[c].miss = miss_ratio(tm.pattern, share, tm.wss);
        }
        // 3. Bus and bank contention: damped fixed point on request rates.
        //    Everything but the request rates is computed once, before the iteration:
        //    k[(c, d)] = R·|B_c ∩ B_d| / (|B_c|·|B_d|) for c's main/extra stream vs d's,
        //    and which cores are ahead of c on a fixed-priority bus.
        let nb = self.rules.bank_sets.len();
        let coeff = |a: usize, b: usize| self.rules.coeff[a * nb + b];
        let lc = self.rules.level_c_banks;
        let k_ee = coeff(lc, lc);
        let fixed = bus_priority.is_some() || self.rules.arbiter == Arbiter::FixedPriority;
        let priority = |c: usize| -> u32 {
            match bus_priority {
                Some(p) => p[c],
                None => (m - c) as u32, // fixed priority by core: core 0 highest
            }
        };
        for &c in &self.active {
            let bc = self.core[c].banks;
            for &d in &self.active {
                if d == c {
                    continue;
                }
                let bd = self.core[d].banks;
                self.k_mm[c * m + d] = coeff(bc, bd);
                self.k_me[c * m + d] = coeff(bc, lc);
                self.k_em[c * m + d] = coeff(lc, bd);
                self.ahead[c * m + d] = fixed && priority(d) >= priority(c);
            }
            self.dma_main[c] = self.dma.iter().map(|x| x.rate * coeff(bc, x.banks)).sum();
            self.dma_extra[c] = self.dma.iter().map(|x| x.rate * coeff(lc, x.banks)).sum();
            self.main_r[c] = self.core[c].refs * self.core[c].miss;
            self.extra_r[c] = self.core[c].extra;
        }
        // Inactive cores issue nothing (their terms in the sums below would be 0).
        //
        // The unknowns are the rates x; a core's request rates are x·a·m and x·(extra).
        // The model's iteration is the damped map G(x) = (x + F(x))/2 from x = 1, stopped
        // when G changes every core's requests by less than 1e-9 (relative). It is run
        // here with Anderson acceleration (the next x mixes the last WINDOW steps of G so
        // as to cancel their residuals), and the same stopping rule; the result is F(x)
        // at the last x, as before.
        let n_dma = self.dma.len();
        let tdma_wait = 0.5 * m as f64 * s;
        for &c in &self.active {
            self.x[c] = 1.0;
        }
        let (mut columns, mut slot) = (0usize, 0usize);
        for iteration in 0..60 {
            let mut total_load = 0.0;
            let mut requesting = 0;
            for &c in &self.active {
                let cm = &self.core[c];
                self.main_r[c] = self.x[c] * (cm.refs * cm.miss);
                self.extra_r[c] = self.x[c] * cm.extra;
                let l = (self.main_r[c] + self.extra_r[c]) * s;
                self.load[c] = l;
                total_load += l;
                requesting += (l > 0.0) as usize;
            }
            let n = requesting + n_dma;
            let mut max_change: f64 = 0.0;
            for &c in &self.active {
                let wait = if fixed {
                    // DMA, higher and equal priorities go first (equals share round robin);
                    // a lower one blocks for at most the line in service.
                    let (mut ahead, mut lower) = (0.0, 0.0);
                    for &d in &self.active {
                        if d == c {
                            continue;
                        }
                        if self.ahead[c * m + d] {
                            ahead += self.load[d];
                        } else {
                            lower += self.load[d];
                        }
                    }
                    let rho = (dma_load + ahead).min(0.999);
                    s * rho / (1.0 - rho) + 0.5 * s * f64::min(lower, 1.0)
                } else if self.rules.arbiter == Arbiter::Tdma {
                    tdma_wait
                } else {
                    let rho = (dma_load + total_load - self.load[c]).min(0.999);
                    (s * rho / (1.0 - rho)).min(n.saturating_sub(1) as f64 * s)
                };
                let (mut p_main, mut p_extra) = (self.dma_main[c], self.dma_extra[c]);
                for &d in &self.active {
                    if d != c {
                        p_main += self.k_mm[c * m + d] * self.main_r[d] + self.k_me[c * m + d] * self.extra_r[d];
                        p_extra += self.k_em[c * m + d] * self.main_r[d] + k_ee * self.extra_r[d];
                    }
                }
                let cm = &self.core[c];
                let rf = cm.read_fraction;
                let per_miss = rf * (self.rules.read_latency_ns + wait) + (1.0 - rf) * (s + wait) + p_main.min(1.0) * self.rules.row_conflict_ns;
                let per_extra = self.rules.read_latency_ns + wait + p_extra.min(1.0) * self.rules.row_conflict_ns;
                let rc = cm.irq / (cm.compute + cm.refs * cm.miss * per_miss + cm.extra * per_extra).max(1e-12);
                rate_out[c] = rc;
                let (new_main, new_extra) = (rc * cm.refs * cm.miss, rc * cm.extra);
                let before = self.main_r[c] + self.extra_r[c];
                let next = 0.5 * (self.main_r[c] + new_main) + 0.5 * (self.extra_r[c] + new_extra);
                max_change = max_change.max((next - before).abs() / before.max(1e-9));
            }
            if max_change < 1e-9 {
                break;
            }
            // Anderson step: g = G(x), f = g − x; with the differences ΔF, ΔG of the
            // last steps, γ = argmin |f − ΔF·γ| and x ← g − ΔG·γ.
            for &c in &self.active {
                let g = 0.5 * (self.x[c] + rate_out[c]);
                let f = g - self.x[c];
                if iteration > 0 {
                    self.d_f[slot * m + c] = f - self.f_prev[c];
                    self.d_g[slot * m + c] = g - self.g_prev[c];
                }
                (self.f_prev[c], self.g_prev[c]) = (f, g);
            }
            if iteration > 0 {
                slot = (slot + 1) % WINDOW;
                columns = (columns + 1).min(WINDOW);
            }
            let gamma = anderson_weights(&self.active, &self.d_f, &self.f_prev, m, columns);
            let mut ok = gamma.is_some();
            if let Some(gamma) = gamma {
                for &c in &self.active {
                    let mut x = self.g_prev[c];
                    for (j, w) in gamma.iter().enumerate().take(columns) {
                        x -= w * self.d_g[j * m + c];
                    }
                    ok &= x.is_finite() && x > 0.0;
                    self.x[c] = x;
                }
            }
            if !ok {
                // Ill-conditioned or out of range: a plain damped step, history forgotten.
                for &c in &self.active {
                    self.x[c] = self.g_prev[c];
                }
                (columns, slot) = (0, 0);
            }
        }
        // 4. Results.
        let mut kernel = 0.0;
        for &c in &self.active {
            let cm = &self.core[c];
            let rc = rate_out[c];
            requests_out[c] = rc * (cm.refs * cm.miss + cm.extra);
            stall_out[c] = (1.0 - rc * cm.compute).clamp(0.0, 1.0);
            // Lines brought in: the misses into the job's partition; without OS
            // isolation its kernel lines, which may land in any (item 7).
            fill_out[self.part_of[cm.task]] += rc * cm.refs * cm.miss;
            kernel += if self.rules.os_isolation { 0.0 } else { rc * self.rules.tasks[cm.task].kernel_lines_per_ns };
        }
        if kernel > 0.0 {
            fill_out.iter_mut().for_each(|f| *f += kernel);
        }
    }
}

impl MemoryModel for Fluid {
    fn flows(&mut self, now: u64, running: &[Option<JobId>], jobs: &Jobs, ctx: &MemoryContext, flows: &mut Flows) {
        let m = running.len();
        self.count_lines_to(now);
        // The flows are a function of the key alone (who runs where in which
        // phase, the stalls, DMA, the bus priorities): solve each key once.
        self.build_key(now, running, jobs, ctx);
        match self.memo.get(self.key.as_slice()) {
            Some(v) => self.solved.copy_from_slice(v),
            None => {
                self.solve(m, ctx.bus_priority);
                if self.memo.len() * (self.key.len() + self.solved.len()) >= MEMO_WORDS {
                    self.memo.clear();
                }
                self.memo.insert(self.key.clone().into_boxed_slice(), self.solved.clone().into_boxed_slice());
            }
        }
        flows.rate.copy_from_slice(&self.solved[..m]);
        flows.requests_per_ns.copy_from_slice(&self.solved[m..2 * m]);
        flows.stall.copy_from_slice(&self.solved[2 * m..3 * m]);
        // The reloads of the jobs resumed now, after this instant's preemptions were marked.
        if std::mem::take(&mut self.any_reloading) {
            for (f, r) in self.filled.iter_mut().zip(self.reloading.iter_mut()) {
                *f += std::mem::take(r);
            }
        }
        // The next phase boundary.
        for (c, &on) in running.iter().enumerate() {
            let Some(id) = on else { continue };
            let rc = flows.rate[c];
            let job = jobs.get(id);
            let tm = &self.rules.tasks[job.task as usize];
            if !ctx.allowed[c] || tm.phases.is_empty() {
                continue;
            }
            let ph = Self::phase(tm, job);
            if ph.end_work_ns != u64::MAX && ph.end_work_ns < job.exec_ns {
                self.next_event = self.next_event.min(job.reaches(now, ph.end_work_ns, rc));
            }
        }
    }

    fn next_event(&self) -> u64 {
        self.next_event
    }

    fn preempted(&mut self, now: u64, job: &mut Job) {
        self.count_lines_to(now);
        job.cache_mark = self.filled[self.part_of[job.task as usize]];
        self.task_mark[job.task as usize] = job.cache_mark;
    }

    fn released(&mut self, job: &mut Job) -> bool {
        // Marked when it first runs: its task's lines as of its last job's end.
        job.cache_mark = f64::NAN;
        !self.rules.tasks[job.task as usize].phases.is_empty()
    }

    fn completed(&mut self, now: u64, job: &Job) {
        self.count_lines_to(now);
        self.task_mark[job.task as usize] = self.filled[self.part_of[job.task as usize]];
    }

    /// Cache-related preemption delay, at a resumption and at a job's start:
    /// the lines brought into its partition since the job (at a start, its
    /// task's last job) left could have evicted its useful lines, at most
    /// its cached lines and the references left in its PET's work
    /// (`FluidRules::reload_lines`), and all of a job's reloads together at
    /// most its references (every reloaded line is a miss of one of them),
    /// reloaded at the isolated miss cost.
    fn resume_penalty_ns(&mut self, now: u64, job: &mut Job) -> u64 {
        let t = job.task as usize;
        let tm = &self.rules.tasks[t];
        if tm.phases.is_empty() {
            return 0;
        }
        let miss_ns = self.rules.isolated_miss_ns(Self::phase(tm, job).read_fraction);
        self.count_lines_to(now);
        let p = self.part_of[t];
        let mark = if job.cache_mark.is_nan() { self.task_mark[t] } else { job.cache_mark };
        // References left in its PET's work: reload work is no reference of
        // its own, and the job has done at least `done` less all reload added.
        let done = job.exec_ns - job.remaining_ns;
        let pet = job.exec_ns - job.reload_ns;
        let left = self.rules.refs_between(t, done.saturating_sub(job.reload_ns), pet).min((self.rules.refs_between(t, 0, pet) - job.reloaded_lines).max(0.0));
        let lines = self.rules.reload_lines(t, self.filled[p] - mark, left);
        job.reloaded_lines += lines;
        self.reloading[p] += lines;
        self.any_reloading = true;
        (lines * miss_ns).round() as u64
    }
}

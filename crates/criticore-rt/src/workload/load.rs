//! The load generator's hot loop: the microbenchmark of blin-bandwidth-monitor
//! §3.1 (Fig. 4). Per iteration it writes `write_nb` whole cache lines, reads
//! `read_nb` lines (write_nb + read_nb = 10), then spins `delay_nb` iterations
//! of a two-add delay loop, walking a buffer far larger than the LLC and
//! starting again at its start when too little room is left (Fig. 4's outer
//! loop).
//!
//! Beyond the paper:
//! - **Pacing** to a target bandwidth at cache-line granularity: iteration i
//!   may start once `i × 10 lines` fit in the elapsed time at the target rate,
//!   so the traffic is smooth down to one iteration (no 1 MiB or 7.8 ms
//!   bursts as in stress-ng memrate or membw). After a stall (throttled,
//!   preempted) it catches up at most one report interval's worth of debt: a
//!   regulated load must not burst to make up for time it was stopped.
//! - **Per-interval report**: lines read and written in every interval (1 ms
//!   by default), so the achieved bandwidth is known per regulation period.
//! - **Counter page**: its counts are published to the shared-memory page of
//!   `os/counter_page.rs` every `publish_lines` lines, the software counter the
//!   regulator reads on machines without a PMU.
//! - **Fresh pages**: optionally each 256 KiB chunk of the buffer is dropped
//!   (`MADV_DONTNEED`) once the loop has walked past it, so every page faults
//!   again on the next pass: page faults are a real kernel-counted memory
//!   event (`sw:page-faults`) for the perf path. Chunk by chunk, not the whole
//!   buffer at the wrap, so the cost is spread evenly (a 64 MiB drop stalls
//!   the loop for milliseconds).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use crate::os::counter_page::{now_ns, CounterPage};

/// Fresh pages: the buffer is dropped in chunks of this many bytes.
const DROP_CHUNK_BYTES: usize = 256 << 10;

/// Lines per iteration in the paper (write_nb + read_nb = 10, §3.1).
pub const LINES_PER_ITERATION: u32 = 10;

/// This machine's last-level cache: (bytes, line bytes) from sysfs, if known.
pub fn machine_llc() -> Option<(usize, usize)> {
    let base = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let mut best: Option<(u32, usize, usize)> = None;
    for entry in std::fs::read_dir(base).ok()?.flatten() {
        let read = |f: &str| std::fs::read_to_string(entry.path().join(f)).ok().map(|s| s.trim().to_string());
        let (Some(level), Some(size)) = (read("level").and_then(|l| l.parse::<u32>().ok()), read("size")) else { continue };
        let bytes = match size.strip_suffix('K') {
            Some(k) => k.parse::<usize>().ok().map(|k| k << 10),
            None => size.strip_suffix('M').and_then(|m| m.parse::<usize>().ok()).map(|m| m << 20),
        };
        let line = read("coherency_line_size").and_then(|l| l.parse().ok()).unwrap_or(64);
        if let Some(bytes) = bytes {
            if best.is_none_or(|b| level > b.0) {
                best = Some((level, bytes, line));
            }
        }
    }
    best.map(|b| (b.1, b.2))
}

/// Default buffer: four times the LLC and at least 64 MiB, so every line misses.
pub fn default_buffer_bytes() -> usize {
    machine_llc().map(|(llc, _)| 4 * llc).unwrap_or(0).max(64 << 20)
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoadSpec {
    pub write_nb: u32,
    pub read_nb: u32,
    /// Iterations of the delay loop after each iteration (Fig. 4's delay_nb).
    pub delay_nb: u64,
    pub buffer_bytes: usize,
    pub line_bytes: usize,
    /// Paced mode: target bytes per second (reads + writes).
    pub pace_bytes_per_s: Option<f64>,
    /// Length of one report interval.
    pub interval_ns: u64,
    /// Run for this long; None = until `stop` is set.
    pub duration_ns: Option<u64>,
    /// Drop the buffer's pages at every wrap so each page faults again.
    pub fresh_pages: bool,
    /// Publish to the counter page after this many lines.
    pub publish_lines: u64,
    /// Visit the lines in a random order (each once per pass, like the µB
    /// task of mc2-hardware-management §4.1) instead of in address order.
    pub random: bool,
}

impl LoadSpec {
    /// The paper's microbenchmark with `read_nb` of 10 lines read, `delay_nb` delay iterations.
    pub fn new(read_nb: u32, delay_nb: u64) -> Self {
        LoadSpec {
            write_nb: LINES_PER_ITERATION.saturating_sub(read_nb),
            read_nb,
            delay_nb,
            buffer_bytes: default_buffer_bytes(),
            line_bytes: machine_llc().map(|l| l.1).unwrap_or(64),
            pace_bytes_per_s: None,
            interval_ns: 1_000_000,
            duration_ns: None,
            fresh_pages: false,
            publish_lines: 64,
            random: false,
        }
    }

    /// Reasons the spec cannot run, as (field, reason).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.write_nb + self.read_nb != LINES_PER_ITERATION {
            return Err(("reads", format!("reads + writes must be {LINES_PER_ITERATION} lines per iteration (blin-bandwidth-monitor §3.1), got {} + {}", self.read_nb, self.write_nb)));
        }
        if self.line_bytes < 8 || !self.line_bytes.is_power_of_two() {
            return Err(("line", format!("a cache line is a power of two of at least 8 bytes, got {}", self.line_bytes)));
        }
        if self.buffer_bytes < LINES_PER_ITERATION as usize * self.line_bytes {
            return Err(("buffer", format!("the buffer must hold at least one iteration ({} bytes)", LINES_PER_ITERATION as usize * self.line_bytes)));
        }
        if let Some(p) = self.pace_bytes_per_s {
            if !(p.is_finite() && p > 0.0) {
                return Err(("bandwidth", format!("a target bandwidth must be positive, got {p}")));
            }
        }
        if self.interval_ns == 0 {
            return Err(("interval", "the report interval must be positive".into()));
        }
        if self.random && self.fresh_pages {
            return Err(("pattern", "fresh pages are dropped in address order, so they need the stream pattern".into()));
        }
        if self.buffer_bytes / self.line_bytes > u32::MAX as usize {
            return Err(("buffer", format!("at most {} lines", u32::MAX)));
        }
        Ok(())
    }
}

/// The highest `--cpu` the front ends take (`MAX_CPU` of python/criticore/cli_common.py).
pub const MAX_CPU: usize = 8191;

/// The options of `criticore load`'s generator mode, as its two front ends
/// take them: Python's `criticore load` and the native worker
/// (`criticore-worker load ...`, which `criticore regulate` runs in its place).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadOptions {
    /// Lines read of every 10 (`--reads`).
    pub reads: u32,
    pub delay: u64,
    pub bandwidth_bytes_per_s: Option<f64>,
    pub duration_ns: Option<u64>,
    pub buffer_bytes: Option<usize>,
    pub line_bytes: Option<usize>,
    pub interval_ns: Option<u64>,
    pub fresh_pages: bool,
    /// `--pattern random` (else stream).
    pub random: bool,
    pub cpu: Option<usize>,
}

impl LoadOptions {
    /// The generator's spec, or the option at fault and why.
    pub fn spec(&self) -> Result<LoadSpec, (String, String)> {
        if self.reads > LINES_PER_ITERATION {
            return Err(("--reads".into(), format!("at most {LINES_PER_ITERATION} of the 10 lines per iteration can be reads, got {}", self.reads)));
        }
        let mut spec = LoadSpec::new(self.reads, self.delay);
        spec.pace_bytes_per_s = self.bandwidth_bytes_per_s;
        spec.duration_ns = self.duration_ns;
        if let Some(b) = self.buffer_bytes {
            spec.buffer_bytes = b;
        }
        if let Some(l) = self.line_bytes {
            spec.line_bytes = l;
        }
        if let Some(i) = self.interval_ns {
            spec.interval_ns = i;
        }
        spec.fresh_pages = self.fresh_pages;
        spec.random = self.random;
        spec.check().map_err(|(field, reason)| (format!("--{field}"), reason))?;
        Ok(spec)
    }

    /// What both front ends do before the loop: the spec, this thread pinned
    /// to `cpu`, and the counter page attached for a held common start (set-up
    /// comes first). Errors as (option, reason).
    pub fn prepare(&self) -> Result<(LoadSpec, Option<CounterPage>), (String, String)> {
        let spec = self.spec()?;
        if let Some(cpu) = self.cpu {
            crate::os::launch::pin_current_thread(&[cpu]).map_err(|e| ("--cpu".to_string(), e.to_string()))?;
        }
        let page = CounterPage::from_env_waiting().transpose().map_err(|e| (crate::os::counter_page::ENV.to_string(), format!("cannot attach the counter page: {e}")))?;
        Ok((spec, page))
    }

    /// `--pattern`'s value.
    pub fn pattern(&mut self, value: &str) -> Result<(), String> {
        self.random = match value {
            "stream" => false,
            "random" => true,
            other => return Err(format!("unknown access pattern \"{other}\" (expected random or stream)")),
        };
        Ok(())
    }

    /// The words after `criticore load`, if they are only options the native
    /// worker runs: `--reads/-r`, `--delay`, `--bandwidth/-b`, `--duration/-d`,
    /// `--cpu/-c`, `--buffer`, `--fresh-pages`, `--pattern` (`--opt value` or
    /// `--opt=value`), with values the Python command takes too (a positive
    /// duration, a CPU up to [`MAX_CPU`]). Anything else is the Python
    /// command's to run (and to report).
    pub fn from_args(args: &[String]) -> Result<LoadOptions, String> {
        use criticore::model::units::{parse_bandwidth_bytes_per_s, parse_duration_ns, parse_size_bytes};
        let mut o = LoadOptions::default();
        let mut words = args.iter();
        while let Some(word) = words.next() {
            let (name, inline) = match word.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
                _ => (word.as_str(), None),
            };
            if name == "--fresh-pages" && inline.is_none() {
                o.fresh_pages = true;
                continue;
            }
            let mut value = || inline.clone().or_else(|| words.next().cloned()).ok_or_else(|| format!("{name}: needs a value"));
            match name {
                "--reads" | "-r" => o.reads = value()?.parse().map_err(|e| format!("--reads: {e}"))?,
                "--delay" => o.delay = value()?.parse().map_err(|e| format!("--delay: {e}"))?,
                "--bandwidth" | "-b" => o.bandwidth_bytes_per_s = Some(parse_bandwidth_bytes_per_s(&value()?).map_err(|e| format!("--bandwidth: {e}"))? as f64),
                "--duration" | "-d" => match parse_duration_ns(&value()?).map_err(|e| format!("--duration: {e}"))? {
                    0 => return Err("--duration: must be positive".into()),
                    d => o.duration_ns = Some(d),
                },
                "--cpu" | "-c" => match value()?.parse().map_err(|e| format!("--cpu: {e}"))? {
                    c if c > MAX_CPU => return Err(format!("--cpu: must be 0 to {MAX_CPU}, got {c}")),
                    c => o.cpu = Some(c),
                },
                "--buffer" => o.buffer_bytes = Some(parse_size_bytes(&value()?).map_err(|e| format!("--buffer: {e}"))? as usize),
                "--pattern" => o.pattern(&value()?).map_err(|e| format!("--pattern: {e}"))?,
                other => return Err(format!("{other}: not run natively")),
            }
        }
        o.spec().map_err(|(field, reason)| format!("{field}: {reason}"))?;
        Ok(o)
    }
}

/// Lines moved in one report interval, which started `start_ns` after the run began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub start_ns: u64,
    pub reads: u64,
    pub writes: u64,
}

#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    pub intervals: Vec<Interval>,
    pub reads: u64,
    pub writes: u64,
    pub elapsed_ns: u64,
    /// Ended by `stop`, not by the duration.
    pub stopped: bool,
    /// Buffer passes completed (Fig. 4's outer loop).
    pub passes: u64,
    /// Paced: lines of debt forgiven after stalls longer than an interval.
    pub forgiven_lines: u64,
}

impl LoadReport {
    /// Bytes per second over the whole run.
    pub fn bandwidth(&self, line_bytes: usize) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        (self.reads + self.writes) as f64 * line_bytes as f64 * 1e9 / self.elapsed_ns as f64
    }
}

/// An anonymous mapping, unmapped on drop.
struct Buffer {
    ptr: *mut u64,
    bytes: usize,
}

impl Buffer {
    fn new(bytes: usize, fresh_pages: bool) -> io::Result<Buffer> {
        let ptr = unsafe {
            libc::mmap(std::ptr::null_mut(), bytes, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let buffer = Buffer { ptr: ptr as *mut u64, bytes };
        if fresh_pages {
            // One fault per 4 KiB page, not per 2 MiB huge page.
            unsafe { libc::madvise(ptr, bytes, libc::MADV_NOHUGEPAGE) };
        } else {
            // Touch every page now so the run measures memory, not page faults.
            let words = bytes / 8;
            let mut i = 0;
            while i < words {
                unsafe { buffer.ptr.add(i).write_volatile(0) };
                i += 512;
            }
        }
        Ok(buffer)
    }

    /// Drop the pages of bytes [from, to) (page-aligned `from`).
    fn drop_pages(&self, from: usize, to: usize) {
        let to = to.min(self.bytes);
        if to > from {
            unsafe { libc::madvise((self.ptr as *mut u8).add(from) as *mut libc::c_void, to - from, libc::MADV_DONTNEED) };
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.bytes) };
    }
}

/// Run the load until the duration ends or `stop` is set; `on_interval` gets
/// every finished report interval as it ends (for a live view).
pub fn run(spec: &LoadSpec, page: Option<&CounterPage>, stop: &AtomicBool, mut on_interval: impl FnMut(&Interval)) -> io::Result<LoadReport> {
    if let Err((field, reason)) = spec.check() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{field}: {reason}")));
    }
    let mut walker = Walker::new(spec.buffer_bytes, spec.line_bytes, spec.fresh_pages, spec.random)?;
    let per_iteration = LINES_PER_ITERATION as usize;
    // ns per line at the target rate (paced mode).
    let pace_ns_per_line = spec.pace_bytes_per_s.map(|b| spec.line_bytes as f64 * 1e9 / b);

    let mut report = LoadReport::default();
    // A held common start (counter_page.rs): begin with the others, set up.
    if let Some(p) = page {
        p.wait_start(stop);
    }
    let start = now_ns();
    let end = spec.duration_ns.map(|d| start + d).unwrap_or(u64::MAX);
    let mut interval = Interval { start_ns: 0, reads: 0, writes: 0 };
    let mut next_boundary = start + spec.interval_ns;
    // Paced: the time origin of the schedule (moved forward to forgive debt).
    let mut pace_origin = start as f64;
    let mut paced_lines: u64 = 0;
    // Unpaced: look at the clock every `check_every` iterations (~1 µs apart),
    // so a clock read (~25 ns) does not cost peak bandwidth.
    let mut check_every: u64 = 1;
    let mut since_check: u64 = 0;
    let (mut pending_r, mut pending_w) = (0u64, 0u64);

    loop {
        walker.iteration(spec.write_nb, spec.read_nb, spec.delay_nb);

        interval.reads += spec.read_nb as u64;
        interval.writes += spec.write_nb as u64;
        pending_r += spec.read_nb as u64;
        pending_w += spec.write_nb as u64;
        if pending_r + pending_w >= spec.publish_lines {
            if let Some(p) = page {
                p.count(pending_r, pending_w);
            }
            pending_r = 0;
            pending_w = 0;
        }

        let now = if let Some(ns_per_line) = pace_ns_per_line {
            paced_lines += per_iteration as u64;
            let due = pace_origin + paced_lines as f64 * ns_per_line;
            let mut now = now_ns();
            if let Some(lines) = debt_to_forgive(now, due, spec.interval_ns, ns_per_line) {
                report.forgiven_lines += lines;
                pace_origin = now as f64 - paced_lines as f64 * ns_per_line;
            }
            while (now as f64) < due && now < end && !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
                now = now_ns();
            }
            now
        } else {
            since_check += 1;
            if since_check < check_every {
                continue;
            }
            since_check = 0;
            let now = now_ns();
            if now - start < 1_000_000 {
                // Calibrate: iterations per µs from the first ms.
                let done = (report.reads + report.writes + interval.reads + interval.writes) / per_iteration as u64;
                let elapsed_us = ((now - start) / 1_000).max(1);
                check_every = (done / elapsed_us).max(1);
            }
            now
        };

        while now >= next_boundary {
            report.reads += interval.reads;
            report.writes += interval.writes;
            on_interval(&interval);
            report.intervals.push(interval);
            interval = Interval { start_ns: next_boundary - start, reads: 0, writes: 0 };
            next_boundary += spec.interval_ns;
        }
        if now >= end || stop.load(Ordering::Relaxed) {
            if let Some(ns_per_line) = pace_ns_per_line {
                // A stall that ends the run is forgiven like one within it.
                let due = pace_origin + paced_lines as f64 * ns_per_line;
                report.forgiven_lines += debt_to_forgive(now, due, spec.interval_ns, ns_per_line).unwrap_or(0);
            }
            report.stopped = now < end;
            report.elapsed_ns = now - start;
            break;
        }
    }
    // The partial last interval counts in the totals, not in the per-interval report.
    report.reads += interval.reads;
    report.writes += interval.writes;
    if let Some(p) = page {
        p.count(pending_r, pending_w);
    }
    report.passes = walker.passes;
    Ok(report)
}

/// Fig. 4's loops over one buffer: where the walk is, and the page drops of
/// the fresh-page mode. The load and the periodic mode both walk with it.
pub struct Walker {
    buffer: Buffer,
    words_per_line: usize,
    lines: usize,
    line_bytes: usize,
    pos: usize,
    sink: u64,
    fresh_pages: bool,
    /// Fresh pages: the next chunk boundary (in lines) and the chunk start (bytes).
    drop_at: usize,
    chunk_start: usize,
    /// Passes over the whole buffer completed (Fig. 4's outer loop).
    pub passes: u64,
    /// Random pattern: the line visited at each position of a pass.
    order: Option<Box<[u32]>>,
}

/// A random permutation of `0..n` (Fisher-Yates, or Sattolo's algorithm when
/// `one_cycle`: following i -> order[i] then visits every index once).
pub(crate) fn permutation(n: usize, seed: u64, one_cycle: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut x = seed | 1;
    for i in (1..n).rev() {
        // xorshift64*: a cheap, fixed sequence (no dependency for a benchmark's shuffle).
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let j = if one_cycle { r % i as u64 } else { r % (i as u64 + 1) } as usize;
        order.swap(i, j);
    }
    order
}

impl Walker {
    /// `random`: visit the lines in a fixed random order (the same every
    /// pass, so a pass still touches each line once); not with `fresh_pages`.
    pub fn new(buffer_bytes: usize, line_bytes: usize, fresh_pages: bool, random: bool) -> io::Result<Walker> {
        let chunk_lines = (DROP_CHUNK_BYTES / line_bytes).max(1);
        let lines = buffer_bytes / line_bytes;
        let order = random.then(|| permutation(lines, 0x9E37_79B9_7F4A_7C15, false).into_iter().map(|l| l as u32).collect());
        Ok(Walker {
            buffer: Buffer::new(buffer_bytes, fresh_pages)?,
            words_per_line: line_bytes / 8,
            lines: buffer_bytes / line_bytes,
            line_bytes,
            pos: 0,
            sink: 0,
            fresh_pages,
            drop_at: chunk_lines,
            chunk_start: 0,
            passes: 0,
            order,
        })
    }

    /// One iteration: write `write_nb` whole lines, read `read_nb`, then
    /// `delay_nb` rounds of the two-add delay loop (Fig. 4).
    #[inline(always)]
    pub fn iteration(&mut self, write_nb: u32, read_nb: u32, delay_nb: u64) {
        let sink = self.lines(write_nb, read_nb);
        let (a, b) = crate::workload::spin::rounds(delay_nb, sink, sink);
        self.sink = std::hint::black_box(a ^ b ^ sink);
    }

    /// One iteration whose delay is `delay_ns` of running time
    /// (`spin::spin_ns`), not a round count: a periodic job's.
    #[inline(always)]
    pub fn iteration_for(&mut self, write_nb: u32, read_nb: u32, delay_ns: u64) {
        let sink = self.lines(write_nb, read_nb);
        self.sink = std::hint::black_box(crate::workload::spin::spin_ns(delay_ns, sink) ^ sink);
    }

    /// Fig. 4's write_loop and read_loop: `write_nb` then `read_nb` whole
    /// lines; the value read (the delay's seed).
    #[inline(always)]
    fn lines(&mut self, write_nb: u32, read_nb: u32) -> u64 {
        let n = (write_nb + read_nb) as usize;
        if self.pos + n > self.lines {
            if self.fresh_pages {
                self.buffer.drop_pages(self.chunk_start, self.buffer.bytes);
                self.chunk_start = 0;
                self.drop_at = (DROP_CHUNK_BYTES / self.line_bytes).max(1);
            }
            self.pos = 0;
            self.passes += 1;
        } else if self.fresh_pages && self.pos >= self.drop_at {
            let end = self.drop_at * self.line_bytes;
            self.buffer.drop_pages(self.chunk_start, end);
            self.chunk_start = end;
            self.drop_at += (DROP_CHUNK_BYTES / self.line_bytes).max(1);
        }
        let words = self.words_per_line;
        let mut sink = self.sink;
        let order = self.order.as_deref();
        // The line at position `pos` of a pass: in address order, or the random order's.
        let at = |pos: usize| match order {
            None => pos,
            Some(o) => unsafe { *o.get_unchecked(pos) as usize },
        };
        // Fig. 4 write_loop: write_nb whole lines.
        for _ in 0..write_nb {
            let line = unsafe { self.buffer.ptr.add(at(self.pos) * words) };
            for w in 0..words {
                unsafe { line.add(w).write_volatile(sink) };
            }
            self.pos += 1;
        }
        // Fig. 4 read_loop: read_nb whole lines.
        for _ in 0..read_nb {
            let line = unsafe { self.buffer.ptr.add(at(self.pos) * words) };
            for w in 0..words {
                sink ^= unsafe { line.add(w).read_volatile() };
            }
            self.pos += 1;
        }
        sink
    }
}

/// Set by SIGINT/SIGTERM while a [`StopOnSignals`] guard lives.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// The signal that set [`STOP`] (0: none since the guard was installed).
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop_signal(sig: libc::c_int) {
    STOP_SIGNAL.store(sig, Ordering::Relaxed);
    STOP.store(true, Ordering::Relaxed);
}

/// Whether the last guarded run was stopped by SIGINT (a user's Ctrl-C, which
/// the command reports with exit status 130; SIGTERM is how a runtime ends it).
pub fn stopped_by_ctrl_c() -> bool {
    STOP_SIGNAL.load(Ordering::Relaxed) == libc::SIGINT
}

/// While alive, SIGINT and SIGTERM set [`STOP`] instead of their previous
/// action (Python's handler cannot run while the hot loop holds the thread),
/// so a signalled load still ends cleanly and reports; restored on drop.
pub struct StopOnSignals {
    old: [(libc::c_int, libc::sigaction); 2],
}

impl StopOnSignals {
    pub fn install() -> StopOnSignals {
        STOP.store(false, Ordering::Relaxed);
        STOP_SIGNAL.store(0, Ordering::Relaxed);
        let mut old: [(libc::c_int, libc::sigaction); 2] = unsafe { std::mem::zeroed() };
        for (slot, sig) in old.iter_mut().zip([libc::SIGINT, libc::SIGTERM]) {
            // SAFETY: plain sigaction with an async-signal-safe handler (one atomic store).
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_stop_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut act.sa_mask);
                libc::sigaction(sig, &act, &mut slot.1);
            }
            slot.0 = sig;
        }
        StopOnSignals { old }
    }
}

impl Drop for StopOnSignals {
    fn drop(&mut self) {
        for (sig, act) in &self.old {
            unsafe { libc::sigaction(*sig, act, std::ptr::null_mut()) };
        }
    }
}

/// Paced: behind the schedule by more than an interval (stopped or
/// preempted), the lines owed are forgiven rather than caught up in a burst.
fn debt_to_forgive(now: u64, due: f64, interval_ns: u64, ns_per_line: f64) -> Option<u64> {
    ((now as f64) > due + interval_ns as f64).then(|| ((now as f64 - due) / ns_per_line) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(read_nb: u32) -> LoadSpec {
        LoadSpec { buffer_bytes: 1 << 20, duration_ns: Some(30_000_000), ..LoadSpec::new(read_nb, 0) }
    }

    #[test]
    fn counts_split_reads_and_writes_by_the_ratio() {
        let stop = AtomicBool::new(false);
        let r = run(&small(3), None, &stop, |_| {}).unwrap();
        // Every iteration moves 3 read lines and 7 written lines.
        assert!(r.reads > 0);
        assert_eq!(r.reads * 7, r.writes * 3);
        let sum: u64 = r.intervals.iter().map(|i| i.reads + i.writes).sum();
        assert!(sum <= r.reads + r.writes);
        assert!(!r.stopped);
    }

    #[test]
    fn intervals_are_contiguous() {
        let stop = AtomicBool::new(false);
        let r = run(&small(5), None, &stop, |_| {}).unwrap();
        for (k, i) in r.intervals.iter().enumerate() {
            assert_eq!(i.start_ns, k as u64 * 1_000_000);
        }
        assert!(r.intervals.len() >= 29, "30 ms at 1 ms per interval, got {}", r.intervals.len());
    }

    #[test]
    fn publishes_every_line_to_the_counter_page() {
        let path = std::env::temp_dir().join(format!("criticore-load-test-{}", std::process::id()));
        let page = CounterPage::create(&path).unwrap();
        let stop = AtomicBool::new(false);
        let r = run(&small(4), Some(&page), &stop, |_| {}).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(page.counts(), (r.reads, r.writes));
    }

    #[test]
    fn debt_is_forgiven_only_beyond_one_interval() {
        // 1 µs per line, 1 ms interval: 5 ms behind owes 5,000 lines; 0.9 ms behind is caught up.
        assert_eq!(debt_to_forgive(10_000_000, 5e6, 1_000_000, 1_000.0), Some(5_000));
        assert_eq!(debt_to_forgive(5_900_000, 5e6, 1_000_000, 1_000.0), None);
    }

    #[test]
    fn paced_total_matches_the_target() {
        // 64 MB/s for 50 ms = 3.2 MB = 50,000 lines of 64 B: never ahead by more
        // than one iteration (10 lines); behind by at most one interval (1,000
        // lines, not yet forgiven) plus the debt forgiven after stalls.
        let spec = LoadSpec { pace_bytes_per_s: Some(64e6), duration_ns: Some(50_000_000), ..small(5) };
        let stop = AtomicBool::new(false);
        let r = run(&spec, None, &stop, |_| {}).unwrap();
        let lines = (r.reads + r.writes) as f64;
        let expected = 64e6 * r.elapsed_ns as f64 / 1e9 / 64.0;
        assert!(lines <= expected + 10.0, "{lines} lines, at most {expected} + 10 expected");
        let floor = expected - r.forgiven_lines as f64 - 1_000.0 - 10.0;
        assert!(lines >= floor, "{lines} lines, at least {floor} expected ({} forgiven)", r.forgiven_lines);
    }

    #[test]
    fn stop_flag_ends_the_run() {
        let spec = LoadSpec { duration_ns: None, ..small(10) };
        let stop = AtomicBool::new(true);
        let r = run(&spec, None, &stop, |_| {}).unwrap();
        assert!(r.stopped);
    }

    #[test]
    fn permutations_visit_every_line_once() {
        let n = 1_000;
        let p = permutation(n, 7, false);
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>());
        assert_ne!(p, sorted, "a shuffle, not address order");
        assert_eq!(p, permutation(n, 7, false), "the same order every time");
        // Sattolo's variant: i -> order[i] is one cycle through all n.
        let c = permutation(n, 7, true);
        let (mut at, mut steps) = (c[0], 1);
        while at != 0 {
            at = c[at];
            steps += 1;
        }
        assert_eq!(steps, n);
    }

    #[test]
    fn a_random_walk_is_a_permutation_of_the_buffers_lines_per_pass() {
        let lines = 4_096;
        let mut w = Walker::new(lines * 64, 64, false, true).unwrap();
        let order: Vec<u32> = w.order.as_deref().unwrap().to_vec();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..lines as u32).collect::<Vec<_>>());
        // One pass is lines / 10 iterations of 10 lines (the last partial one wraps).
        for _ in 0..lines / 10 {
            w.iteration(3, 7, 0);
        }
        assert_eq!(w.passes, 0);
        w.iteration(3, 7, 0);
        assert_eq!(w.passes, 1);
        // Fresh pages are dropped in address order: not with a random walk.
        let spec = LoadSpec { random: true, fresh_pages: true, ..small(0) };
        assert_eq!(spec.check().unwrap_err().0, "pattern");
    }

    #[test]
    fn bad_ratio_is_refused() {
        let spec = LoadSpec { write_nb: 5, read_nb: 6, ..small(0) };
        assert_eq!(spec.check().unwrap_err().0, "reads");
        let stop = AtomicBool::new(false);
        assert!(run(&spec, None, &stop, |_| {}).is_err());
    }

    #[test]
    fn fresh_pages_fault_once_per_page_per_pass() {
        // 1 MiB = 256 pages of 4 KiB: each pass faults each page once.
        let spec = LoadSpec { fresh_pages: true, ..small(0) };
        let before = minor_faults();
        let stop = AtomicBool::new(false);
        let r = run(&spec, None, &stop, |_| {}).unwrap();
        let faults = minor_faults() - before;
        let pages = (r.passes + 1) * 256;
        assert!(faults >= r.passes * 256, "{faults} faults over {} passes", r.passes);
        assert!(faults <= pages + 64, "{faults} faults, at most {pages} expected");
    }

    fn minor_faults() -> u64 {
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
        u.ru_minflt as u64
    }
}

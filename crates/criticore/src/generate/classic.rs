//! Random CPU-only task systems for the classic tests (`analysis::classic`)
//! and their soundness check against the simulator: UUniFast utilizations
//! (Bini & Buttazzo 2005), periods dividing 200 ms, implicit or constrained
//! deadlines, explicit or rate-monotonic priorities. Written as task-system
//! TOML and parsed, so every system is one a user could write.

use crate::model::{parse_task_system, Format, TaskSystem};
use crate::policy::SchedulerKind;
use std::fmt::Write;

pub const MS: u64 = 1_000_000;
/// Every period divides 200 ms, so 400 ms is two hyperperiods.
pub const PERIODS_MS: [u64; 7] = [10, 20, 25, 40, 50, 100, 200];

/// SplitMix64: a fixed sequence per seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    pub fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[(self.next() % v.len() as u64) as usize]
    }
    /// UUniFast (Bini & Buttazzo 2005): n utilizations summing to `total`.
    pub fn uunifast(&mut self, n: usize, total: f64) -> Vec<f64> {
        let mut sum = total;
        let mut out = Vec::with_capacity(n);
        for i in 1..n {
            let next = sum * self.unit().powf(1.0 / (n - i) as f64);
            out.push(sum - next);
            sum = next;
        }
        out.push(sum);
        out
    }
}

/// One task's TOML: PET from its utilization (at least 10 µs), deadline
/// implicit or constrained between the PET and the period.
fn task(rng: &mut Rng, text: &mut String, name: &str, u: f64, period_ms: u64, place: &str, constrained: bool, priority: bool) {
    let period_ns = period_ms * MS;
    let pet_ns = ((u * period_ns as f64) as u64).clamp(10_000, period_ns);
    let deadline_ns = if constrained { pet_ns + (rng.unit() * (period_ns - pet_ns) as f64) as u64 } else { period_ns };
    let _ = write!(text, "[[task]]\nname = \"{name}\"\n{place}period = \"{period_ns}ns\"\ndeadline = \"{}ns\"\npet = \"{pet_ns}ns\"\n", deadline_ns.max(pet_ns));
    if priority {
        let _ = writeln!(text, "priority = {}", rng.range(1, 99));
    }
}

/// Two cores, 1-5 tasks each, per-core utilization 0.2-1.05 (pfp, pedf).
pub fn partitioned(rng: &mut Rng) -> String {
    let (constrained, priority) = (rng.next() % 2 == 0, rng.next() % 3 == 0);
    let mut text = String::from("[platform]\ncores = 2\n");
    for core in 0..2 {
        let n = rng.range(1, 5) as usize;
        let total = 0.2 + 0.85 * rng.unit();
        for (k, u) in rng.uunifast(n, total).into_iter().enumerate() {
            let p = rng.pick(&PERIODS_MS);
            task(rng, &mut text, &format!("c{core}t{k}"), u, p, &format!("core = {core}\n"), constrained, priority);
        }
    }
    text
}

/// As [`partitioned`], each task preemptive, cooperative (its PET split
/// into 1-4 runnables at random) or non-preemptive, a third each (pfp with
/// limited preemption); half the preemptive and cooperative tasks with a
/// copy-in and a copy-out of up to a quarter of the PET each.
pub fn partitioned_limited(rng: &mut Rng) -> String {
    let text = partitioned(rng);
    let mut parts = text.split("[[task]]\n");
    let mut out = parts.next().unwrap_or_default().to_string();
    for one in parts {
        out.push_str("[[task]]\n");
        out.push_str(one);
        let pet: u64 = one.split("pet = \"").nth(1).and_then(|r| r.split("ns").next()).and_then(|v| v.parse().ok()).expect("task() writes pet in ns");
        let kind = rng.next() % 3;
        let copies = if kind != 1 && rng.next() % 2 == 0 { (rng.range(0, pet / 4), rng.range(0, pet / 4)) } else { (0, 0) };
        if copies != (0, 0) {
            out.push_str(&format!("copy_in = \"{}ns\"\ncopy_out = \"{}ns\"\n", copies.0, copies.1));
        }
        match kind {
            0 => {}
            1 => out.push_str("preemption = \"non-preemptive\"\n"),
            _ => {
                // The PET less the copies in 1-4 runnables: cut at random points, in order.
                let pet = pet - copies.0 - copies.1;
                let mut cuts: Vec<u64> = (0..rng.range(0, 3)).map(|_| rng.range(1, pet.max(2) - 1)).collect();
                cuts.sort_unstable();
                cuts.dedup();
                let bounds: Vec<u64> = std::iter::once(0).chain(cuts).chain(std::iter::once(pet)).collect();
                let steps: Vec<String> = bounds.windows(2).enumerate().map(|(r, w)| format!("{{ name = \"r{r}\", pet = \"{}ns\" }}", w[1] - w[0])).collect();
                out.push_str(&format!("preemption = \"cooperative\"\nrunnables = [{}]\n", steps.join(", ")));
            }
        }
    }
    out
}

/// As [`partitioned_limited`] on a scratchpad platform (issue 27, Build 3):
/// a 200 MHz clock, a GRAM (5-20 cycles) and an LRAM per core (1-2 cycles
/// from its core, 5-20 from the other), round-robin or FCFS ports, 2-8
/// labels of 1-16 B placed at random; every task's work in runnables (one
/// for a task without), each reading and writing 1-2 labels so that its
/// accesses alone take up to 40% of its PET; a quarter of the tasks with an
/// activation limit of one; about half with implicit communication (copies
/// of their labels, `model::scratchpad::task_copies`), the rest explicit.
pub fn partitioned_scratchpad(rng: &mut Rng) -> String {
    let text = partitioned_limited(rng);
    let arbiter = rng.pick(&["round-robin", "fcfs"]);
    let mut platform = "[platform]\ncores = 2\nclock = \"200MHz\"\n".to_string();
    platform += &format!("[[platform.memory]]\nname = \"GRAM\"\nsize = \"1KiB\"\nlatency_cycles = {}\narbiter = \"{arbiter}\"\n", rng.range(5, 20));
    for core in 0..2 {
        let (local, remote) = (rng.range(1, 2), rng.range(5, 20));
        let lat = if core == 0 { [local, remote] } else { [remote, local] };
        platform += &format!("[[platform.memory]]\nname = \"LRAM{core}\"\ncore = {core}\nsize = \"1KiB\"\nlatency_cycles = [{}, {}]\narbiter = \"{arbiter}\"\n", lat[0], lat[1]);
    }
    let n_labels = rng.range(2, 8) as usize;
    let mut labels = String::new();
    let mut words = Vec::new();
    for l in 0..n_labels {
        let m = rng.range(0, 2);
        let size = rng.range(1, 16);
        labels += &format!("[[label]]\nname = \"l{l}\"\nsize = \"{size}B\"\nmemory = \"{}\"\n", if m == 0 { "GRAM".to_string() } else { format!("LRAM{}", m - 1) });
        words.push(size.div_ceil(4));
    }
    // Accesses of a runnable of `pet` ns: 1-2 labels, up to 40% of it at 20 cycles (100 ns) each word.
    let accesses = |rng: &mut Rng, pet: u64| -> String {
        let share = 0.4 * rng.unit();
        let mut parts = Vec::new();
        for (key, _) in [("reads", 0), ("writes", 1)] {
            if rng.next() % 3 == 0 {
                continue;
            }
            let l = rng.range(0, n_labels as u64 - 1) as usize;
            let n = ((pet as f64 * share / 2.0) / (100.0 * words[l] as f64)) as u64;
            if n > 0 {
                parts.push(format!("{key} = {{ l{l} = {n} }}"));
            }
        }
        parts.iter().map(|p| format!(", {p}")).collect()
    };
    let mut parts = text.split("[[task]]\n");
    parts.next();
    let mut out = platform;
    for one in parts {
        out.push_str("[[task]]\n");
        let field = |key: &str| one.split(&format!("{key} = \"")).nth(1).and_then(|r| r.split("ns").next()).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let copies = field("copy_in") + field("copy_out");
        let body: Vec<&str> = one.lines().filter(|l| !l.starts_with("runnables = ")).collect();
        out.push_str(&body.join("\n"));
        out.push('\n');
        let steps: Vec<(String, u64)> = match one.lines().find(|l| l.starts_with("runnables = ")) {
            Some(line) => line.split("{ name = \"").skip(1).map(|r| {
                let name = r.split('"').next().unwrap_or_default().to_string();
                let pet = r.split("pet = \"").nth(1).and_then(|x| x.split("ns").next()).and_then(|v| v.parse().ok()).unwrap_or(0);
                (name, pet)
            }).collect(),
            None => vec![("r0".to_string(), field("pet") - copies)],
        };
        let runnables: Vec<String> = steps.iter().map(|(name, pet)| format!("{{ name = \"{name}\", pet = \"{pet}ns\"{} }}", accesses(rng, *pet))).collect();
        out.push_str(&format!("runnables = [{}]\n", runnables.join(", ")));
        if rng.next() % 4 == 0 {
            out.push_str("activation_limit = 1\n");
        }
        // Stated copies go with explicit communication; half the others copy their labels (implicit).
        if copies > 0 || rng.next() % 2 == 0 {
            out.push_str("communication = \"explicit\"\n");
        }
    }
    out + &labels
}

/// 2 or 4 cores, m+1 to 3m tasks, total utilization 0.2m-m (gedf, gfp).
pub fn global(rng: &mut Rng, constrained: bool) -> String {
    let m = rng.pick(&[2u64, 4]);
    let mut text = format!("[platform]\ncores = {m}\n");
    let n = rng.range(m + 1, 3 * m) as usize;
    let total = m as f64 * (0.2 + 0.8 * rng.unit());
    let priority = rng.next() % 3 == 0;
    for (k, u) in rng.uunifast(n, total).into_iter().enumerate() {
        let p = rng.pick(&PERIODS_MS);
        task(rng, &mut text, &format!("t{k}"), u.min(1.0), p, "", constrained, priority);
    }
    text
}

/// Two cores, 1-3 periodic or CBS servers each, 1-3 tasks per server (servers).
pub fn servers(rng: &mut Rng, cbs: bool) -> String {
    server_system(rng, cbs, false, false)
}

/// Periodic servers (as `servers`) whose tasks have memory profiles; with
/// `mrs`, MRS regulation and memory budgets of 200-40,000 requests per
/// server period on most servers.
pub fn servers_memory(rng: &mut Rng, mrs: bool) -> String {
    server_system(rng, false, true, mrs)
}

fn server_system(rng: &mut Rng, cbs: bool, memory: bool, mrs: bool) -> String {
    let mut text = String::from("[platform]\ncores = 2\n");
    if mrs {
        text.push_str("[regulation]\nkind = \"mrs\"\n");
    }
    let mut tasks = String::new();
    let mut s = 0;
    for core in 0..2 {
        let n = rng.range(1, 3) as usize;
        let total = 0.3 + 0.7 * rng.unit();
        for u in rng.uunifast(n, total) {
            // Server periods well below most task periods, as reservations are used.
            let period_ms = rng.pick(&[5u64, 10, 20, 25]);
            let budget_ns = ((u * (period_ms * MS) as f64) as u64).clamp(100_000, period_ms * MS);
            let kind = if cbs { "cbs" } else { "periodic" };
            let _ = write!(text, "[[server]]\nname = \"s{s}\"\ncore = {core}\nkind = \"{kind}\"\npriority = {}\nperiod = \"{period_ms}ms\"\nbudget = \"{budget_ns}ns\"\n", rng.range(1, 5));
            if mrs && rng.next() % 4 != 0 {
                let _ = writeln!(text, "memory_budget = {}", rng.pick(&[200u64, 2_000, 10_000, 40_000]));
            }
            let rate = budget_ns as f64 / (period_ms * MS) as f64;
            let k = rng.range(1, 3) as usize;
            let load = rate * (0.1 + if memory { 0.6 } else { 0.8 } * rng.unit());
            for (j, tu) in rng.uunifast(k, load).into_iter().enumerate() {
                let p = rng.pick(&[40u64, 50, 100, 200]);
                let place = format!("server = \"s{s}\"\n");
                if memory {
                    let priority = rng.next() % 2 == 0;
                    task(rng, &mut tasks, &format!("s{s}t{j}"), tu, p, &place, false, priority);
                    memory_profile(rng, &mut tasks);
                } else {
                    let (constrained, priority) = (rng.next() % 2 == 0, rng.next() % 2 == 0);
                    task(rng, &mut tasks, &format!("s{s}t{j}"), tu, p, &place, constrained, priority);
                }
            }
            s += 1;
        }
    }
    text + &tasks
}

/// Partitioned tasks with memory profiles on the default platform (i.MX6:
/// 1 MiB LLC, 32 B lines): per core 1-4 tasks of utilization 0.1-0.7 in all,
/// working sets of 16 KiB-4 MiB walked at random or streamed, up to 5,000
/// references per ms; with `memguard`, per-core budgets of 20-2,000 requests
/// per 1 ms (pfp with memory stalls).
pub fn partitioned_memory(rng: &mut Rng, memguard: bool) -> String {
    partitioned_memory_deadlines(rng, memguard, false)
}

/// As [`partitioned_memory`]; with `constrained`, half the systems have
/// deadlines between the PET and the period (pedf with memory stalls).
fn partitioned_memory_deadlines(rng: &mut Rng, memguard: bool, constrained: bool) -> String {
    let constrained = constrained && rng.next() % 2 == 0;
    let mut text = String::from("[platform]\ncores = 2\n");
    if memguard {
        let _ = write!(text, "[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [{}, {}]\n", rng.pick(&[20u64, 200, 2_000]), rng.pick(&[20u64, 200, 2_000]));
    }
    for core in 0..2 {
        let n = rng.range(1, 4) as usize;
        let total = 0.1 + 0.6 * rng.unit();
        for (k, u) in rng.uunifast(n, total).into_iter().enumerate() {
            let p = rng.pick(&PERIODS_MS);
            let priority = rng.next() % 3 == 0;
            task(rng, &mut text, &format!("c{core}t{k}"), u, p, &format!("core = {core}\n"), constrained, priority);
            memory_profile(rng, &mut text);
        }
    }
    text
}

/// As [`partitioned_memory`], under MemGuard budgets per group of tasks:
/// 1-3 groups, each task in one of them at random or in none (unregulated),
/// a group's tasks on either core, budgets of 20-2,000 requests per 1 ms.
pub fn partitioned_memory_groups(rng: &mut Rng) -> String {
    let text = partitioned_memory(rng, false);
    let names: Vec<String> = text.lines().filter_map(|l| l.strip_prefix("name = ")).map(|n| n.trim_matches('"').to_string()).collect();
    let groups = rng.range(1, 3) as usize;
    let mut members = vec![Vec::new(); groups];
    for n in &names {
        let g = rng.range(0, groups as u64) as usize;
        if g < groups {
            members[g].push(format!("\"{n}\""));
        }
    }
    if members.iter().all(Vec::is_empty) {
        // A regulation needs a group: the first task's.
        members[0].push(format!("\"{}\"", names[0]));
    }
    let mut out = text;
    let _ = write!(out, "[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\n");
    for (g, m) in members.iter().enumerate().filter(|(_, m)| !m.is_empty()) {
        let _ = write!(out, "[[regulation.group]]\nname = \"g{g}\"\ntasks = [{}]\nbudget = {}\n", m.join(", "), rng.pick(&[20u64, 200, 2_000]));
    }
    out
}

/// Memory profiles for a task (the distributions of `partitioned_memory`), or none.
fn memory_profile(rng: &mut Rng, text: &mut String) {
    if rng.next() % 4 != 0 {
        let wss = rng.pick(&["16KiB", "64KiB", "256KiB", "1MiB", "4MiB"]);
        let pattern = rng.pick(&["random", "stream"]);
        let _ = writeln!(text, "memory = {{ wss = \"{wss}\", pattern = \"{pattern}\", read_fraction = {:.2}, accesses_per_ms = {} }}", rng.unit(), rng.range(0, 5_000));
    }
}


/// Two cores, 3-6 global tasks with memory profiles, utilization 0.2-1.4 in
/// all; with `constrained`, deadlines between the PET and the period (gfp).
fn global_memory(rng: &mut Rng, constrained: bool) -> String {
    let mut text = String::from("[platform]\ncores = 2\n");
    let n = rng.range(3, 6) as usize;
    let total = 0.2 + 1.2 * rng.unit();
    let priority = rng.next() % 3 == 0;
    for (k, u) in rng.uunifast(n, total).into_iter().enumerate() {
        let p = rng.pick(&PERIODS_MS);
        task(rng, &mut text, &format!("t{k}"), u.min(1.0), p, "", constrained, priority);
        memory_profile(rng, &mut text);
    }
    text
}

/// A pfp system with memory profiles under MCTI (per-core budgets of
/// 20-2,000 requests per 1 ms), each task critical (criticality 1 or 2) or
/// not at random.
pub fn system_with_memory_mcti(seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x3c7, |rng| {
        let text = partitioned_memory(rng, true).replace("kind = \"memguard\"", "kind = \"mcti\"");
        let mut out = String::new();
        for line in text.lines() {
            out.push_str(line);
            out.push('\n');
            if line.starts_with("name = ") {
                let c = rng.range(0, 2);
                if c > 0 {
                    let _ = writeln!(out, "level = {c}");
                }
            }
        }
        out
    })
}

/// A pfp system with memory profiles under the bandwidth monitor: the first
/// task of core 0 is the real-time task, core 1 its best-effort core,
/// threshold 0.01-0.2, sampled every 50 µs; and the text of its overhead
/// table (one phase, 64 entries of 0-0.5 at random: what the monitor
/// estimates, right or wrong; the bound may not depend on it).
pub fn system_with_memory_monitor(seed: u64) -> (String, TaskSystem, String) {
    let mut table = String::new();
    let (text, system) = generated(seed, 0x40d, |rng| {
        let body = partitioned_memory(rng, false);
        let threshold = 0.01 + 0.19 * rng.unit();
        let entries: Vec<String> = (0..64).map(|_| format!("{:.4}", 0.5 * rng.unit())).collect();
        table = format!("task = \"c0t0\"\nsample = \"50us\"\nshift = 10\nbe_cores = 1\n[[phase]]\noverhead = [{}]\n", entries.join(", "));
        format!("{body}[regulation]\nkind = \"monitor\"\nrt_task = \"c0t0\"\nbe_cores = [1]\nsample = \"50us\"\nthreshold = {threshold:.3}\noverhead_table = \"generated-overheads.toml\"\n")
    });
    (text, system, table)
}

/// A pedf, gedf or gfp system with memory profiles, unregulated.
pub fn system_with_memory_for(kind: SchedulerKind, seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x7e7 ^ kind as u64, |rng| match kind {
        SchedulerKind::Gedf => global_memory(rng, false),
        SchedulerKind::Gfp => global_memory(rng, true),
        _ => partitioned_memory_deadlines(rng, false, true),
    })
}

/// A pedf system with memory profiles under MemGuard per-core budgets of
/// 20-2,000 requests per 1 ms, half with constrained deadlines, a quarter
/// with reclaim (floor 100 requests).
pub fn pedf_with_memory_memguard(seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x7e8, |rng| {
        let text = partitioned_memory_deadlines(rng, true, true);
        if rng.next() % 4 == 0 { text.replacen("period = \"1ms\"\n", "period = \"1ms\"\nreclaim = true\nreclaim_min = 100\n", 1) } else { text }
    })
}

/// A CBS server system with memory profiles, unregulated.
pub fn cbs_servers_with_memory(seed: u64) -> (String, TaskSystem) {
    generated(seed, 0xcb5, |rng| server_system(rng, true, true, false))
}

/// A CBS server system with memory profiles under MRS: memory budgets of
/// 200-40,000 requests per period on most reservations.
pub fn cbs_servers_under_mrs(seed: u64) -> (String, TaskSystem) {
    generated(seed, 0xcb6, |rng| server_system(rng, true, true, true))
}

/// A server system (periodic or CBS, half each) with memory profiles under
/// per-core budgets of 200-20,000 requests per 1 ms: MemGuard, or MCTI with
/// each task critical (criticality 1 or 2) or not at random.
pub fn servers_with_memory_budgets(mcti: bool, seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x5e7 ^ mcti as u64, |rng| {
        let cbs = rng.next() % 2 == 0;
        let text = server_system(rng, cbs, true, false);
        let kind = if mcti { "mcti" } else { "memguard" };
        let mut out = String::new();
        let mut in_task = false;
        for line in text.lines() {
            out.push_str(line);
            out.push('\n');
            if line.starts_with("[[") {
                in_task = line == "[[task]]";
            }
            if mcti && in_task && line.starts_with("name = ") {
                let c = rng.range(0, 2);
                if c > 0 {
                    let _ = writeln!(out, "level = {c}");
                }
            }
        }
        let _ = write!(out, "[regulation]\nkind = \"{kind}\"\nperiod = \"1ms\"\nbudgets = [{}, {}]\n", rng.pick(&[200u64, 2_000, 20_000]), rng.pick(&[200u64, 2_000, 20_000]));
        out
    })
}

/// A server system with memory profiles, unregulated or under MRS.
pub fn servers_with_memory(mrs: bool, seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x5e5 ^ mrs as u64, |rng| servers_memory(rng, mrs))
}

/// As [`servers_with_memory`] under MRS, each task first released at a
/// random start of its server's period within its own period (on the
/// server's grid, so a window may open only at a period's start where its
/// period is a multiple too), or, one task in four, at any offset.
pub fn servers_with_memory_offsets(seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x0ff5, |rng| {
        let text = servers_memory(rng, true);
        let system = parse_task_system(&text, Format::Toml, "generated.toml").expect("a generated system parses");
        let mut offsets = system.tasks.iter().map(|t| {
            let grid = t.server.map_or(1, |s| system.servers[s].period_ns);
            let x = rng.next() % t.period_ns;
            if rng.next() % 4 == 0 { x } else { x / grid * grid }
        });
        let mut out = String::new();
        for line in text.lines() {
            out.push_str(line);
            out.push('\n');
            if line == "[[task]]" {
                let _ = writeln!(out, "offset = \"{}ns\"", offsets.next().expect("an offset per task"));
            }
        }
        out
    })
}

/// A pfp system with cooperative and non-preemptive tasks ([`partitioned_limited`]).
pub fn system_limited(seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x11b, partitioned_limited)
}

/// A pfp system on a scratchpad platform ([`partitioned_scratchpad`]).
pub fn system_scratchpad(seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x5c7a, partitioned_scratchpad)
}

/// A pfp system with memory profiles under MemGuard group budgets.
pub fn system_with_memory_groups(seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x6a6, partitioned_memory_groups)
}

/// As [`system_with_memory`] under MemGuard, or under MemGuard groups with
/// `groups`, with reclaim (floor 10-1,000 requests) and, in half the
/// systems, spare sharing.
pub fn system_with_memory_reclaim(groups: bool, seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x7ec ^ groups as u64, |rng| {
        let text = if groups { partitioned_memory_groups(rng) } else { partitioned_memory(rng, true) };
        let options = format!("reclaim = true\nreclaim_min = {}\nspare_sharing = {}\n", rng.pick(&[10u64, 100, 1_000]), rng.next() % 2 == 0);
        text.replacen("period = \"1ms\"\n", &format!("period = \"1ms\"\n{options}"), 1)
    })
}

/// A pfp system with memory profiles, unregulated or under MemGuard.
pub fn system_with_memory(memguard: bool, seed: u64) -> (String, TaskSystem) {
    generated(seed, 0x3e3 ^ memguard as u64, |rng| partitioned_memory(rng, memguard))
}

/// The text `make` writes from `seed` (mixed with `salt`, one per family of
/// systems), and the system parsed from it.
fn generated(seed: u64, salt: u64, make: impl FnOnce(&mut Rng) -> String) -> (String, TaskSystem) {
    let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ salt);
    let text = make(&mut rng);
    let system = parse_task_system(&text, Format::Toml, "generated.toml").unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
    (text, system)
}

/// The file text and system for `kind` (servers: periodic, or CBS when `cbs`) and `seed`.
pub fn system(kind: SchedulerKind, cbs: bool, seed: u64) -> (String, TaskSystem) {
    generated(seed, (kind as u64 + 1) ^ ((cbs as u64) << 8), |rng| match kind {
        SchedulerKind::Pfp | SchedulerKind::Pedf => partitioned(rng),
        SchedulerKind::Gedf => global(rng, false),
        SchedulerKind::Gfp => global(rng, true),
        SchedulerKind::Servers => servers(rng, cbs),
        SchedulerKind::Mc2 => panic!("MC² systems come from generate::mc2_uniform"),
    })
}

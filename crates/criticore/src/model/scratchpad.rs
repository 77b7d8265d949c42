//! Scratchpad platforms (issue 27, Build 3; docs/format.md
//! `[[platform.memory]]`, `[[label]]`): memories local to a core or global,
//! reached through a crossbar with one arbiter per target memory, and the
//! labels placed in them that runnables read and write. Only what the file
//! says; the costs it implies are `interference::crossbar`'s.

use super::Arbiter;
use serde::Serialize;

/// A memory behind the crossbar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Memory {
    pub name: String,
    /// The core it is local to (its LRAM); None: global.
    pub core: Option<usize>,
    pub size_bytes: u64,
    /// Cycles one access takes from each core (the path's latency), during
    /// which it holds the memory's port.
    pub latency_cycles: Vec<u64>,
    /// Bytes one access moves: a label of s bytes takes ⌈s / width⌉ accesses.
    pub width_bytes: u64,
    /// Who gets the port next among waiting cores.
    pub arbiter: Arbiter,
}

/// A label (a named variable) and the memory it is placed in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Label {
    pub name: String,
    pub size_bytes: u64,
    /// Index into `Platform::memories`.
    pub memory: usize,
}

/// A runnable's accesses to one label per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LabelAccess {
    /// Index into `TaskSystem::labels`.
    pub label: usize,
    pub reads: u64,
    pub writes: u64,
}

impl Memory {
    /// Accesses one access of a label of `size_bytes` makes.
    pub fn accesses_of(&self, size_bytes: u64) -> u64 {
        size_bytes.div_ceil(self.width_bytes).max(1)
    }
}

/// The arbiters a memory's port may have (the crossbar's).
pub const PORT_ARBITERS: [Arbiter; 3] = [Arbiter::RoundRobin, Arbiter::Fcfs, Arbiter::FixedPriority];

/// Implicit communication's copies of a task's labels on a scratchpad
/// platform (docs/format.md `communication`): at the job's start it copies
/// each label it reads from the label's memory to `memory`, at its end each
/// label it writes back; its runnables' accesses go to the copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copies {
    /// Where the copies live: the memory nearest the task's core.
    pub memory: usize,
    /// Per copy, its accesses by memory: (memory, accesses), home and copy.
    pub copy_in: Vec<(usize, u64)>,
    pub copy_out: Vec<(usize, u64)>,
}

impl Copies {
    /// Cycles of a copy's computation: one per access it makes (the load
    /// or the store); its accesses' latency and waits come on top, as a
    /// runnable's do.
    pub fn cycles(accesses: &[(usize, u64)]) -> u64 {
        accesses.iter().map(|&(_, n)| n).fold(0, u64::saturating_add)
    }
}

/// The memory a task's copies live in: the least latency from its core
/// (from every core, the least worst, for a task that may run on any),
/// the lower index on a tie.
pub fn copy_memory(memories: &[Memory], core: Option<usize>) -> usize {
    let cost = |m: &Memory| core.map_or_else(|| m.latency_cycles.iter().copied().max().unwrap_or(0), |c| m.latency_cycles[c]);
    (0..memories.len()).min_by_key(|&k| (cost(&memories[k]), k)).expect("a scratchpad platform has memories")
}

/// Whether task `t`'s copies come from its labels: implicit or LET
/// communication on a scratchpad platform, and label accesses to copy.
pub fn copies_labels(platform: &super::Platform, t: &super::Task) -> bool {
    !platform.memories.is_empty() && t.communication != super::Communication::Explicit && t.runnables.iter().any(|r| !r.accesses.is_empty())
}

/// Task `t`'s copies (None: its accesses go where its runnables make them).
pub fn task_copies(platform: &super::Platform, labels: &[Label], t: &super::Task) -> Option<Copies> {
    if !copies_labels(platform, t) {
        return None;
    }
    let memory = copy_memory(&platform.memories, t.core);
    let (read, written) = (labels_of(t, |a| a.reads > 0), labels_of(t, |a| a.writes > 0));
    let copy = |of: &[usize]| {
        let mut by_memory: Vec<(usize, u64)> = Vec::new();
        for &l in of {
            let label = &labels[l];
            for m in [label.memory, memory] {
                let n = platform.memories[m].accesses_of(label.size_bytes);
                match by_memory.iter_mut().find(|(x, _)| *x == m) {
                    Some((_, k)) => *k = k.saturating_add(n),
                    None => by_memory.push((m, n)),
                }
            }
        }
        by_memory.sort_unstable();
        by_memory
    };
    Some(Copies { memory, copy_in: copy(&read), copy_out: copy(&written) })
}

/// The labels task `t`'s runnables access as `accessed` says, each once
/// however many runnables access it, in index order.
fn labels_of(t: &super::Task, accessed: fn(&LabelAccess) -> bool) -> Vec<usize> {
    let mut of: Vec<usize> = t.runnables.iter().flat_map(|r| &r.accesses).filter(|a| accessed(a)).map(|a| a.label).collect();
    of.sort_unstable();
    of.dedup();
    of
}

/// Bytes each memory holds: its labels, and the copies of the copying
/// tasks whose nearest memory it is (a task's copy of each label it reads
/// or writes, once). Err: the first task, in file order, whose copies take
/// a memory past its size, and the memory.
pub fn used_bytes(system: &super::TaskSystem) -> Result<Vec<u64>, (usize, usize)> {
    let memories = &system.platform.memories;
    let mut used = vec![0u64; memories.len()];
    for l in &system.labels {
        used[l.memory] = used[l.memory].saturating_add(l.size_bytes);
    }
    for (i, t) in system.tasks.iter().enumerate().filter(|(_, t)| copies_labels(&system.platform, t)) {
        let m = copy_memory(memories, t.core);
        let bytes = labels_of(t, |_| true).iter().map(|&l| system.labels[l].size_bytes).fold(0, u64::saturating_add);
        used[m] = used[m].saturating_add(bytes);
        if used[m] > memories[m].size_bytes {
            return Err((i, m));
        }
    }
    Ok(used)
}

/// Set each copying task's copy-in and copy-out computation (and its PET
/// with them), at the end of a parse or an import. Err: (task, field) of
/// copies the file states for a task whose copies come from its labels.
pub fn derive_copies(system: &mut super::TaskSystem) -> Result<(), (usize, &'static str)> {
    for (i, t) in system.tasks.iter().enumerate() {
        if copies_labels(&system.platform, t) && t.copy_in_ns + t.copy_out_ns > 0 {
            return Err((i, if t.copy_in_ns > 0 { "copy_in" } else { "copy_out" }));
        }
    }
    set_copies(system);
    Ok(())
}

/// Each copying task's copies as its labels make them now (after labels
/// move: `optimize::labels`), its PET changed by as much.
pub fn set_copies(system: &mut super::TaskSystem) {
    let Some(clock_hz) = system.platform.clock_hz else { return };
    for i in 0..system.tasks.len() {
        let Some(c) = task_copies(&system.platform, &system.labels, &system.tasks[i]) else { continue };
        let t = &mut system.tasks[i];
        let ns = |a: &[(usize, u64)]| cycles_ns_ceil(Copies::cycles(a), clock_hz);
        let (before, copy_in, copy_out) = (t.copy_in_ns + t.copy_out_ns, ns(&c.copy_in), ns(&c.copy_out));
        (t.copy_in_ns, t.copy_out_ns) = (copy_in, copy_out);
        for p in t.pet_ns.0.iter_mut().flatten() {
            *p = (*p - before).saturating_add(copy_in + copy_out);
        }
    }
}

/// Nanoseconds of `cycles` at `clock_hz`, rounded up (exact).
pub fn cycles_ns_ceil(cycles: u64, clock_hz: u64) -> u64 {
    (cycles as u128 * 1_000_000_000).div_ceil(clock_hz as u128).min(u64::MAX as u128) as u64
}

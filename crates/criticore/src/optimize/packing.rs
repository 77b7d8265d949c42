//! Phase 1 of the optimizer (mc2-io-ipc-os-isolation §6.1): partition the
//! Level-A/B tasks onto cores by worst fit, packing groups of tasks that share
//! IPC buffers as units (so CE can apply) and splitting a group when no core
//! can take it.
//!
//! The paper's pseudocode (Chisholm et al. 2016, App. B) is not public; this is
//! the rule implemented (docs/optimizer.md):
//!
//! - A task's size is its idle-system utilization in the two per-core tests:
//!   u^A = PET^A/T for Level-A tasks (Level-A test) and u^B = PET^B·(1+ρ)/T
//!   for Level-A and -B tasks (Level-B test). An item (group or task) fits on
//!   a core if both sums stay ≤ 1. Ways are decided later (phase 3), so the
//!   full-LLC costs are the only ones known here: a core that fails this
//!   test fails for every way allocation.
//! - Items are taken largest first (size = Σ max(u^A, u^B)); each goes to the
//!   core with the most remaining capacity 1 − max(U^A, U^B) on which it fits
//!   (worst fit; ties to the lower core).
//! - A group that fits on no core is split in two halves in link order
//!   (first ⌈k/2⌉ tasks, the rest); both halves go back into the queue. A
//!   single task that fits nowhere makes the system unschedulable.

use crate::analysis::UTILIZATION_EPS;
use crate::model::{Level, Task, TaskSystem};

/// A task's sizes in the Level-A and Level-B tests at idle cost.
fn sizes(t: &Task) -> (f64, f64) {
    let period = t.period_ns as f64;
    let reload = match (t.level, t.cost) {
        (Some(Level::B), Some(c)) => c.reload,
        _ => 0.0,
    };
    let u_a = if t.level == Some(Level::A) { t.pet_ns.get(Level::A).unwrap_or(0) as f64 / period } else { 0.0 };
    let u_b = t.pet_ns.get(Level::B).unwrap_or(0) as f64 * (1.0 + reload) / period;
    (u_a, u_b)
}

/// Groups of Level-A/B tasks joined by IPC links, each in link order (a
/// chain from the task that only sends), groups ordered by first task.
pub fn ipc_groups(system: &TaskSystem) -> Vec<Vec<usize>> {
    let n = system.tasks.len();
    let ab: Vec<bool> = system.tasks.iter().map(|t| matches!(t.level, Some(Level::A | Level::B))).collect();
    // Union-find over links.
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut receives = vec![false; n];
    for (i, t) in system.tasks.iter().enumerate() {
        if let Some(link) = t.ipc {
            if ab[i] && ab[link.to] {
                let (a, b) = (find(&mut parent, i), find(&mut parent, link.to));
                parent[a.max(b)] = a.min(b);
                receives[link.to] = true;
            }
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of = vec![usize::MAX; n];
    for i in (0..n).filter(|&i| ab[i]) {
        let root = find(&mut parent, i);
        if group_of[root] == usize::MAX {
            group_of[root] = groups.len();
            groups.push(Vec::new());
        }
        groups[group_of[root]].push(i);
    }
    // Link order: walk each chain from a task that receives nothing.
    let mut seen = vec![false; n];
    for g in &mut groups {
        if g.len() < 3 {
            if g.len() == 2 && system.tasks[g[0]].ipc.map(|l| l.to) != Some(g[1]) {
                g.swap(0, 1);
            }
            continue;
        }
        let mut ordered = Vec::with_capacity(g.len());
        for &start in g.iter().filter(|&&i| !receives[i]).chain(g.iter()) {
            let mut x = start;
            while !seen[x] {
                seen[x] = true;
                ordered.push(x);
                match system.tasks[x].ipc {
                    Some(l) if ab[l.to] => x = l.to,
                    _ => break,
                }
            }
        }
        *g = ordered;
    }
    groups
}

/// Phase 1: a core for every Level-A/B task (index → core), or the task that
/// fits nowhere. `groups`: pack IPC groups as units (scheme O) or every task alone.
pub fn pack(system: &TaskSystem, groups: bool) -> Result<Vec<Option<usize>>, usize> {
    let m = system.platform.cores;
    let task_sizes: Vec<(f64, f64)> = system.tasks.iter().map(sizes).collect();
    let items: Vec<Vec<usize>> = if groups {
        ipc_groups(system)
    } else {
        (0..system.tasks.len()).filter(|&i| matches!(system.tasks[i].level, Some(Level::A | Level::B))).map(|i| vec![i]).collect()
    };
    let size = |item: &[usize]| item.iter().map(|&i| task_sizes[i].0.max(task_sizes[i].1)).sum::<f64>();
    // Largest first; stable, so equal sizes keep task order.
    let mut queue: Vec<(f64, Vec<usize>)> = items.into_iter().map(|it| (size(&it), it)).collect();
    queue.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut load = vec![(0.0f64, 0.0f64); m];
    let mut core = vec![None; system.tasks.len()];
    let mut order: Vec<usize> = (0..m).collect();
    while !queue.is_empty() {
        let (_, item) = queue.remove(0);
        let (ua, ub) = item.iter().fold((0.0, 0.0), |(a, b), &i| (a + task_sizes[i].0, b + task_sizes[i].1));
        // Worst fit: most remaining capacity first, ties to the lower core.
        order.sort_by(|&p, &q| load[p].0.max(load[p].1).total_cmp(&load[q].0.max(load[q].1)).then(p.cmp(&q)));
        let fit = order.iter().copied().find(|&p| load[p].0 + ua <= 1.0 + UTILIZATION_EPS && load[p].1 + ub <= 1.0 + UTILIZATION_EPS);
        match fit {
            Some(p) => {
                load[p].0 += ua;
                load[p].1 += ub;
                for &i in &item {
                    core[i] = Some(p);
                }
            }
            None if item.len() > 1 => {
                let half = item.len().div_ceil(2);
                for part in [item[..half].to_vec(), item[half..].to_vec()] {
                    let s = size(&part);
                    // Behind every item of the same size (stable).
                    let at = queue.iter().position(|(q, _)| *q < s).unwrap_or(queue.len());
                    queue.insert(at, (s, part));
                }
            }
            None => return Err(item[0]),
        }
    }
    Ok(core)
}

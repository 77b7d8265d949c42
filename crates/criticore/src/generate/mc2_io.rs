//! Task systems for the schedulability study of mc2-io-ipc-os-isolation §6.1:
//! the stepwise procedure over the seven categories of Table 3, on the
//! i.MX6 (4 cores, 16-way 1 MiB LLC). Constants the paper does not give are
//! marked "assumed" and listed in docs/study-model.md.
//!
//! 1. Criticality shares (cat. 1) drawn per level and normalized to sum to 1;
//!    each level gets share × U of generated utilization.
//! 2. Tasks are added to a level until its share is reached; the last one is
//!    scaled down to hit it exactly (docs/references.md, MC²: Generation). Utilizations from cat. 3; periods
//!    from cat. 2 (A/B: one of two harmonic values; C: uniform, whole µs).
//!    Tasks come in IPC groups of 1–3 (assumed) that share a period (§6.1);
//!    each task of a group sends into the next one's message queue.
//! 3. Generated cost e = u·T is the idle-system cost under Level-A pessimism
//!    (§6.1): PET^A = e, PET^B = e/1.5, PET^C = PET^B × U[0.5, 0.7) for A/B
//!    tasks and × U[0.2, 0.4) for C tasks (docs/references.md, MC²;
//!    unconfirmed there).
//! 4. Cost curve: s from {1.16, 2.95, 15.68} (docs/references.md, MC²), WSS uniform in 1..=16
//!    ways (assumed), reload fraction from cat. 4.
//! 5. IPC sizes from cat. 5, one per message queue.
//! 6. I/O (cat. 6): tasks in random order get an I/O buffer whose copy takes
//!    a fraction κ ~ U[0.05, 0.2) (assumed) of their own-level idle cost,
//!    until the drawn system bandwidth is reached (the last one scaled down).
//!    If every task already does I/O, all are scaled up together, none
//!    beyond κ = 1 (what a capped task cannot carry goes to the others).
//! 7. Direct-I/O share (cat. 7) drawn per level; that many of the level's I/O
//!    tasks (rounded) use direct DMA, the rest intermediate copies.

use crate::model::{CostCurve, IoBuffer, IoKind, IpcLink, Level, LevelPets, Platform, Task, TaskSystem};
use crate::policy::cost::COPY_BYTES_PER_S;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// Table 3, in order: (key, choices).
pub const CATEGORIES: [(&str, &[&str]); 7] = [
    ("criticality", &["C-Light", "C-Heavy", "All-Mod."]),
    ("period", &["Short", "Moderate", "Long"]),
    ("task_utilization", &["Light", "Medium", "Heavy"]),
    ("reload", &["Quick", "Slow"]),
    ("ipc_size", &["Small", "Large"]),
    ("io_bandwidth", &["Low", "Medium", "High"]),
    ("direct_io", &["Few", "Many"]),
];

/// One choice per category (indices into [`CATEGORIES`]): a scenario (§6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Scenario(pub [u8; 7]);

impl Scenario {
    /// Scenario number `id` of the cross product, last category fastest.
    pub fn from_id(mut id: usize) -> Option<Scenario> {
        let mut choice = [0u8; 7];
        for k in (0..7).rev() {
            let n = CATEGORIES[k].1.len();
            choice[k] = (id % n) as u8;
            id /= n;
        }
        (id == 0).then_some(Scenario(choice))
    }

    pub fn id(&self) -> usize {
        self.0.iter().enumerate().fold(0, |acc, (k, &c)| acc * CATEGORIES[k].1.len() + c as usize)
    }

    pub fn count() -> usize {
        CATEGORIES.iter().map(|(_, c)| c.len()).product()
    }

    /// From (key, choice name) pairs; every category must be given once.
    pub fn from_names<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Scenario, String> {
        let mut choice = [u8::MAX; 7];
        for (key, name) in pairs {
            let k = CATEGORIES.iter().position(|(c, _)| *c == key).ok_or_else(|| format!("unknown category \"{key}\""))?;
            let c = CATEGORIES[k].1.iter().position(|n| n.eq_ignore_ascii_case(name)).ok_or_else(|| {
                format!("unknown {key} choice \"{name}\" (expected one of: {})", CATEGORIES[k].1.join(", "))
            })?;
            choice[k] = c as u8;
        }
        match choice.iter().position(|&c| c == u8::MAX) {
            Some(k) => Err(format!("missing category \"{}\"", CATEGORIES[k].0)),
            None => Ok(Scenario(choice)),
        }
    }

    /// The paper's tuple notation, e.g. "(C-Light, Long, Light, Quick, Small, High, Many)".
    pub fn label(&self) -> String {
        let names: Vec<&str> = self.0.iter().enumerate().map(|(k, &c)| CATEGORIES[k].1[c as usize]).collect();
        format!("({})", names.join(", "))
    }

    fn pick(&self, k: usize) -> usize {
        self.0[k] as usize
    }

    /// Cat. 1: share ranges (percent) for A, B, C.
    pub fn share_ranges(&self) -> [(f64, f64); 3] {
        match self.pick(0) {
            0 => [(35.0, 45.0), (35.0, 45.0), (10.0, 30.0)],
            1 => [(10.0, 30.0), (10.0, 30.0), (50.0, 70.0)],
            _ => [(28.0, 39.0), (28.0, 39.0), (28.0, 39.0)],
        }
    }

    /// Cat. 2: Level-A and -B period sets (ms) and the Level-C range (ms).
    pub fn periods_ms(&self) -> ([u64; 2], [u64; 2], (u64, u64)) {
        match self.pick(1) {
            0 => ([12, 24], [24, 48], (12, 100)),
            1 => ([20, 40], [40, 80], (20, 100)),
            _ => ([48, 96], [96, 192], (50, 500)),
        }
    }

    /// Cat. 3: per-task utilization ranges for A, B, C.
    pub fn utilization_ranges(&self) -> [(f64, f64); 3] {
        match self.pick(2) {
            0 => [(0.001, 0.03), (0.001, 0.05), (0.001, 0.1)],
            1 => [(0.02, 0.1), (0.05, 0.2), (0.1, 0.4)],
            _ => [(0.1, 0.2), (0.2, 0.4), (0.4, 0.6)],
        }
    }

    /// Cat. 4: max reload time as a fraction of cost.
    pub fn reload_range(&self) -> (f64, f64) {
        if self.pick(3) == 0 { (0.01, 0.10) } else { (0.25, 0.50) }
    }

    /// Cat. 5: IPC message sizes (bytes).
    pub fn ipc_sizes(&self) -> [u64; 2] {
        if self.pick(4) == 0 { [128, 256] } else { [4096, 8192] }
    }

    /// Cat. 6: system I/O bandwidth range (MB/s, closed).
    pub fn io_bandwidth_mb_s(&self) -> (f64, f64) {
        match self.pick(5) {
            0 => (0.0, 20.0),
            1 => (40.0, 60.0),
            _ => (180.0, 200.0),
        }
    }

    /// Cat. 7: direct-I/O share range (percent, closed), the same for every level.
    pub fn direct_share(&self) -> (f64, f64) {
        if self.pick(6) == 0 { (0.0, 30.0) } else { (70.0, 100.0) }
    }
}

/// Slowdown without LLC, s (docs/references.md, MC²: DIS stressmark ratios).
pub const LLC_SLOWDOWNS: [f64; 3] = [1.16, 2.95, 15.68];
/// Level-C PET / Level-B PET for A/B tasks and for C tasks (docs/references.md, MC²: unconfirmed).
pub const LEVEL_C_RATIO_AB: (f64, f64) = (0.5, 0.7);
pub const LEVEL_C_RATIO_C: (f64, f64) = (0.2, 0.4);
/// IPC group sizes (assumed: the paper gives none).
pub const GROUP_SIZES: [usize; 3] = [1, 2, 3];
/// Share of an I/O task's own-level idle cost spent copying its data (assumed).
pub const IO_COPY_SHARE: (f64, f64) = (0.05, 0.20);

/// What was drawn for one system besides the tasks themselves (for tests and reports).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Draws {
    /// Cat. 1 draws before normalization (percent), A, B, C.
    pub shares_percent: [f64; 3],
    /// Cat. 6 draw (bytes/s).
    pub io_bandwidth_target: f64,
    /// Sum of the tasks' I/O bandwidths (≤ target only when every task does I/O at κ = 1).
    pub io_bandwidth: f64,
    /// Cat. 7 draws (percent), A, B, C.
    pub direct_percent: [f64; 3],
    /// Utilization drawn for each task before the last one per level was scaled.
    pub utilizations: Vec<f64>,
}

fn uniform(rng: &mut impl Rng, (lo, hi): (f64, f64)) -> f64 {
    if hi > lo { rng.random_range(lo..hi) } else { lo }
}

/// Generate one system of total generated utilization `utilization` from `seed`.
pub fn generate(scenario: Scenario, utilization: f64, seed: u64) -> (TaskSystem, Draws) {
    generate_on(&Platform::preset("imx6").expect("built-in preset"), scenario, utilization, seed)
}

/// [`generate`] on another platform (e.g. `imx6-transaction`, whose study
/// cost constants are calibrated); the draws do not depend on it.
pub fn generate_on(platform: &Platform, scenario: Scenario, utilization: f64, seed: u64) -> (TaskSystem, Draws) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let platform = platform.clone();
    let ways = platform.llc.ways;
    let raw: [f64; 3] = scenario.share_ranges().map(|r| uniform(&mut rng, r));
    let total: f64 = raw.iter().sum();
    let (a_periods, b_periods, c_range) = scenario.periods_ms();
    let u_ranges = scenario.utilization_ranges();
    let sizes = scenario.ipc_sizes();
    let mut tasks: Vec<Task> = Vec::new();
    let mut drawn = Vec::new();
    for (li, level) in [Level::A, Level::B, Level::C].into_iter().enumerate() {
        let target = raw[li] / total * utilization;
        let mut sum = 0.0;
        let mut index = 0usize;
        while sum < target - 1e-12 {
            let group = GROUP_SIZES[rng.random_range(0..GROUP_SIZES.len())];
            let period_ns = match level {
                Level::A => a_periods[rng.random_range(0..2)] * MS,
                Level::B => b_periods[rng.random_range(0..2)] * MS,
                _ => rng.random_range(c_range.0 * 1000..c_range.1 * 1000) * US,
            };
            let first = tasks.len();
            for _ in 0..group {
                if sum >= target - 1e-12 {
                    break;
                }
                let u_draw = uniform(&mut rng, u_ranges[li]);
                drawn.push(u_draw);
                let u = u_draw.min(target - sum);
                sum += u;
                let e = u * period_ns as f64; // Level-A pessimism (§6.1)
                let pet_b = e / 1.5;
                let ratio = if level == Level::C { LEVEL_C_RATIO_C } else { LEVEL_C_RATIO_AB };
                let pet_c = pet_b * uniform(&mut rng, ratio);
                let mut pets = LevelPets::default();
                if level == Level::A {
                    pets.set(Level::A, (e.round() as u64).max(1));
                }
                if level != Level::C {
                    pets.set(Level::B, (pet_b.round() as u64).max(1));
                }
                pets.set(Level::C, (pet_c.round() as u64).max(1));
                let cost = CostCurve {
                    llc_slowdown: LLC_SLOWDOWNS[rng.random_range(0..LLC_SLOWDOWNS.len())],
                    wss_ways: rng.random_range(1..=ways),
                    reload: uniform(&mut rng, scenario.reload_range()),
                };
                let name = format!("{level}{index}");
                index += 1;
                let core = None;
                tasks.push(Task { cost: Some(cost), ..Task::mc2(name, level, core, period_ns, pets) });
            }
            // Each task of the group sends into the next one's queue.
            for i in first..tasks.len().saturating_sub(1) {
                let bytes = sizes[rng.random_range(0..2)];
                tasks[i].ipc = Some(IpcLink { to: i + 1, bytes, method: None, buffer: None });
            }
        }
    }
    // I/O (cat. 6): bandwidth of a task whose copy takes share κ of its own-level idle cost.
    let (lo, hi) = scenario.io_bandwidth_mb_s();
    let target = if hi > lo { rng.random_range(lo..=hi) } else { lo } * 1e6;
    let own_utilization = |t: &Task| t.pet_ns.get(t.level.expect("MC² task")).expect("own PET") as f64 / t.period_ns as f64;
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.shuffle(&mut rng);
    let mut bandwidth = vec![0.0f64; tasks.len()];
    let mut sum = 0.0;
    for &i in &order {
        if sum >= target {
            break;
        }
        let b = uniform(&mut rng, IO_COPY_SHARE) * own_utilization(&tasks[i]) * COPY_BYTES_PER_S;
        bandwidth[i] = b.min(target - sum);
        sum += bandwidth[i];
    }
    if sum < target && sum > 0.0 {
        // Every task does I/O and the level is not reached: scale the tasks
        // up together, none beyond κ = 1; what a capped task cannot carry
        // goes to the others (water-filling).
        let cap: Vec<f64> = tasks.iter().map(|t| own_utilization(t) * COPY_BYTES_PER_S).collect();
        for _ in 0..tasks.len() {
            let (fixed, free): (f64, f64) = bandwidth.iter().zip(&cap).fold((0.0, 0.0), |(f, g), (&b, &c)| if b >= c { (f + b, g) } else { (f, g + b) });
            if free <= 0.0 || fixed + free >= target * (1.0 - 1e-12) {
                break;
            }
            let scale = (target - fixed) / free;
            for (b, &c) in bandwidth.iter_mut().zip(&cap) {
                if *b < c {
                    *b = (*b * scale).min(c);
                }
            }
        }
    }
    // Cat. 7: direct share per level, applied in the random order above.
    let direct_percent: [f64; 3] = [0; 3].map(|_| {
        let (lo, hi) = scenario.direct_share();
        rng.random_range(lo..=hi)
    });
    for (li, level) in [Level::A, Level::B, Level::C].into_iter().enumerate() {
        let io_tasks: Vec<usize> = order.iter().copied().filter(|&i| tasks[i].level == Some(level) && bandwidth[i] >= 1.0).collect();
        let direct = (direct_percent[li] / 100.0 * io_tasks.len() as f64).round() as usize;
        for (k, &i) in io_tasks.iter().enumerate() {
            tasks[i].io = Some(IoBuffer {
                bandwidth_bytes_per_s: bandwidth[i].round() as u64,
                kind: if k < direct { IoKind::Direct } else { IoKind::Copy },
                buffer: None,
            });
        }
    }
    let io_bandwidth = tasks.iter().filter_map(|t| t.io).map(|io| io.bandwidth_bytes_per_s as f64).sum();
    let system = TaskSystem { platform, tasks, servers: vec![], allocation: None, regulation: None, devices: vec![], chains: vec![], labels: Vec::new() };
    let draws = Draws { shares_percent: raw, io_bandwidth_target: target, io_bandwidth, direct_percent, utilizations: drawn };
    (system, draws)
}

/// Seed of system `index` at `point` of scenario `scenario_id` in a study with
/// `seed`: SplitMix64 over the four numbers, so any machine and any grouping
/// of points into batches derives the same system.
pub fn system_seed(seed: u64, scenario_id: u64, point: u64, index: u64) -> u64 {
    let mut x = seed;
    for v in [scenario_id, point, index] {
        x = splitmix64(x ^ splitmix64(v.wrapping_add(0x9E37_79B9_7F4A_7C15)));
    }
    x
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

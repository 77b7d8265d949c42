//! Level C: global EDF on the capacity that Levels A and B leave on each core,
//! with Level-C PETs for every task (mc2-hardware-management §2).
//!
//! Supply model: core p runs its Level-A/B tasks (Level-C PETs) and gives
//! Level C at least û_p·Δ − σ_p time in any interval of length Δ, with
//! û_p = 1 − U_A^C(p) − U_B^C(p) and σ_p = Σ 2·eᵢ·(1 − uᵢ) over those tasks (a
//! periodic task's work in any window of length Δ is at most uᵢ·Δ + 2eᵢ(1 − uᵢ)).
//!
//! Bounded-tardiness condition (restricted-supply form of Leontyev & Anderson,
//! RTS 2010, as used for MC²; docs/references.md, MC²: Per-level conditions):
//!   Σ_p û_p ≥ U_C   and   Σ_p û_p > (m−1)·u_max + U_L(m−1).
//! Tardiness bound (docs/analysis.md derives it): task i's tardiness is at most
//!   x + eᵢ,  x = (E_L(m−1) + Σ_p σ_p) / (Σ_p û_p − (m−1)·u_max − U_L(m−1)),
//! E_L(m−1) the sum of the m−1 largest Level-C PETs.

use super::exact::{self, Frac};
use super::{charge, Charged, Provisioning};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use std::cmp::Ordering;
use crate::model::{Level, TaskSystem};

/// What core `core` supplies to Level C, exactly (the f64s are for reports).
#[derive(Debug, Clone, PartialEq)]
pub struct CoreSupply {
    pub core: usize,
    /// û_p: long-run share of the core left to Level C (clamped at 0).
    pub capacity: f64,
    /// σ_p: maximum supply delay in nanoseconds.
    pub supply_delay_ns: f64,
    /// û_p and σ_p exactly: as u128 fractions where they fit, else big.
    capacity_q: Exact,
    delay_q: Exact,
}

/// A non-negative rational: small (u128 over u128) where it fits.
#[derive(Debug, Clone, PartialEq)]
enum Exact {
    Small(Frac),
    Big(BigRational),
}

impl Exact {
    fn big(&self) -> BigRational {
        match self {
            Exact::Small(f) => f.big(),
            Exact::Big(q) => q.clone(),
        }
    }

    fn small(&self) -> Option<Frac> {
        match self {
            Exact::Small(f) => Some(*f),
            Exact::Big(_) => None,
        }
    }

    fn to_f64(&self) -> f64 {
        match self {
            Exact::Small(f) => f.num as f64 / f.den as f64,
            Exact::Big(q) => exact::to_f64(q),
        }
    }
}

impl CoreSupply {
    /// A core wholly available: û = 1, σ = 0.
    pub fn full(core: usize) -> CoreSupply {
        CoreSupply { core, capacity: 1.0, supply_delay_ns: 0.0, capacity_q: Exact::Small(Frac::new(1, 1)), delay_q: Exact::Small(Frac::new(0, 1)) }
    }
}

/// Supply of one core given its Level-A/B tasks charged at Level-C PETs.
pub fn core_supply(core: usize, higher: &[Charged]) -> CoreSupply {
    // Decided exactly: 0.7 + 0.2 + 0.1 is a full core even though f64 says 0.999….
    let u = fracs(higher);
    let small_u = exact::small_sum(&u);
    let full = match small_u {
        Some((n, d)) => n >= d,
        None => exact::cmp_sum(&u, Frac::new(1, 1)) != Ordering::Less,
    };
    if full {
        let zero = Exact::Small(Frac::new(0, 1));
        return CoreSupply { core, capacity: 0.0, supply_delay_ns: 0.0, capacity_q: zero.clone(), delay_q: zero };
    }
    // σ = Σ 2e(1 − e/T) = Σ 2e(T − e)/T.
    let delays: Vec<Frac> = higher.iter().map(|c| Frac::new(2 * c.pet_ns as u128 * (c.period_ns - c.pet_ns.min(c.period_ns)) as u128, c.period_ns as u128)).collect();
    let (capacity_q, delay_q) = match (small_u, exact::small_sum(&delays)) {
        // U < 1 here, so d − n > 0.
        (Some((n, d)), Some((dn, dd))) => (Exact::Small(Frac::new(d - n, d)), Exact::Small(Frac::new(dn, dd))),
        _ => (Exact::Big(BigRational::one() - exact::sum(&u)), Exact::Big(exact::sum(&delays))),
    };
    CoreSupply { core, capacity: capacity_q.to_f64(), supply_delay_ns: delay_q.to_f64(), capacity_q, delay_q }
}

fn fracs(items: &[Charged]) -> Vec<Frac> {
    exact::utilizations(items.iter().map(|c| (c.pet_ns, c.period_ns)))
}

#[derive(Debug, Clone, PartialEq)]
pub struct LevelCTest {
    pub tasks: Vec<usize>,
    pub per_core: Vec<CoreSupply>,
    /// U_C: total utilization of the Level-C tasks.
    pub total_utilization: f64,
    /// Σ_p û_p.
    pub supply: f64,
    /// u_max.
    pub max_task_utilization: f64,
    /// U_L(m−1).
    pub largest_utilization_sum: f64,
    /// E_L(m−1) in nanoseconds.
    pub largest_pet_sum_ns: u64,
    /// Σ_p û_p ≥ U_C.
    pub capacity_condition: bool,
    /// Σ_p û_p > (m−1)·u_max + U_L(m−1).
    pub tardiness_condition: bool,
    /// x in nanoseconds when both conditions hold.
    pub x_ns: Option<f64>,
    /// Tardiness bound x + eᵢ per task of `tasks`, rounded up to whole ns.
    pub tardiness_bounds_ns: Vec<Option<u64>>,
    /// eᵢ per task of `tasks`, as charged.
    pub pets_ns: Vec<u64>,
}

impl LevelCTest {
    pub fn schedulable(&self) -> bool {
        self.capacity_condition && self.tardiness_condition
    }
}

/// The restricted-supply G-EDF test over `m` cores, pure in its inputs, in
/// exact arithmetic: both conditions are rational comparisons and the bound
/// is ⌈x + eᵢ⌉ of the exact x.
pub fn restricted_supply_gedf(per_core: Vec<CoreSupply>, tasks: &[Charged]) -> LevelCTest {
    if let Some(t) = small(&per_core, tasks) {
        return t;
    }
    let m = per_core.len();
    let k = m.saturating_sub(1);
    let supply: BigRational = per_core.iter().map(|s| s.capacity_q.big()).sum();
    let total_delay: BigRational = per_core.iter().map(|s| s.delay_q.big()).sum();
    let mut utils = fracs(tasks);
    utils.sort_unstable_by(|a, b| b.cmp(a));
    let total = exact::sum(&utils);
    let u_max = utils.first().map_or_else(BigRational::zero, Frac::big);
    let largest = exact::sum(&utils[..k.min(utils.len())]);
    let mut pets: Vec<u64> = tasks.iter().map(|c| c.pet_ns).collect();
    pets.sort_unstable_by(|a, b| b.cmp(a));
    let largest_pet_sum: u128 = pets.iter().take(k).map(|&e| e as u128).sum();
    let capacity_condition = supply >= total;
    let slack = supply.clone() - BigRational::from_integer(BigInt::from(k)) * &u_max - &largest;
    let tardiness_condition = tasks.is_empty() || slack > BigRational::zero();
    let x = (capacity_condition && tardiness_condition && !tasks.is_empty())
        .then(|| (BigRational::from_integer(BigInt::from(largest_pet_sum)) + total_delay) / &slack);
    let tardiness_bounds_ns = tasks
        .iter()
        .map(|c| x.as_ref().map(|x| exact::ceil_u64(&(x + BigRational::from_integer(BigInt::from(c.pet_ns))))))
        .collect();
    LevelCTest {
        tasks: tasks.iter().map(|c| c.task).collect(),
        per_core,
        total_utilization: exact::to_f64(&total),
        supply: exact::to_f64(&supply),
        max_task_utilization: exact::to_f64(&u_max),
        largest_utilization_sum: exact::to_f64(&largest),
        largest_pet_sum_ns: u64::try_from(largest_pet_sum).unwrap_or(u64::MAX),
        capacity_condition,
        tardiness_condition,
        x_ns: x.as_ref().map(exact::to_f64),
        tardiness_bounds_ns,
        pets_ns: tasks.iter().map(|c| c.pet_ns).collect(),
    }
}

/// The same test in u128 fractions over the lcm of the periods; None where a
/// value would not fit (then big rationals decide).
fn small(per_core: &[CoreSupply], tasks: &[Charged]) -> Option<LevelCTest> {
    let k = per_core.len().saturating_sub(1);
    let caps: Vec<Frac> = per_core.iter().map(|s| s.capacity_q.small()).collect::<Option<_>>()?;
    let delays: Vec<Frac> = per_core.iter().map(|s| s.delay_q.small()).collect::<Option<_>>()?;
    let (na, da) = exact::small_sum(&caps)?;
    let (n_delay, d_delay) = exact::small_sum(&delays)?;
    let mut utils = fracs(tasks);
    utils.sort_unstable_by(|a, b| b.cmp(a));
    let (nu, du) = exact::small_sum(&utils)?;
    let u_max = utils.first().copied().unwrap_or(Frac::new(0, 1));
    let top = &utils[..k.min(utils.len())];
    let mut terms = top.to_vec();
    terms.push(Frac::new(u_max.num.checked_mul(k as u128)?, u_max.den));
    // S = (m−1)·u_max + U_L(m−1) = ns/ds; slack = Σû − S = (na·ds − ns·da)/(da·ds).
    let (ns, ds) = exact::small_sum(&terms)?;
    let mut pets: Vec<u64> = tasks.iter().map(|c| c.pet_ns).collect();
    pets.sort_unstable_by(|a, b| b.cmp(a));
    let largest_pet_sum: u128 = pets.iter().take(k).map(|&e| e as u128).sum();
    let supply = Frac::new(na, da);
    let capacity_condition = supply >= Frac::new(nu, du);
    let slack_ok = tasks.is_empty() || supply > Frac::new(ns, ds);
    let x = if capacity_condition && slack_ok && !tasks.is_empty() {
        // x = (E_L + Σσ)/slack = (E_L·d_delay + n_delay)·da·ds / (d_delay·(na·ds − ns·da)).
        let top = largest_pet_sum.checked_mul(d_delay)?.checked_add(n_delay)?.checked_mul(da)?.checked_mul(ds)?;
        let bottom = d_delay.checked_mul(na.checked_mul(ds)?.checked_sub(ns.checked_mul(da)?)?)?;
        Some((top, bottom))
    } else {
        None
    };
    let tardiness_bounds_ns = tasks
        .iter()
        .map(|c| x.map(|(n, d)| u64::try_from(n.div_ceil(d) + c.pet_ns as u128).unwrap_or(u64::MAX)))
        .collect();
    Some(LevelCTest {
        tasks: tasks.iter().map(|c| c.task).collect(),
        per_core: per_core.to_vec(),
        total_utilization: nu as f64 / du as f64,
        supply: na as f64 / da as f64,
        max_task_utilization: u_max.num as f64 / u_max.den as f64,
        // For the report only.
        largest_utilization_sum: top.iter().map(|f| f.num as f64 / f.den as f64).sum(),
        largest_pet_sum_ns: u64::try_from(largest_pet_sum).unwrap_or(u64::MAX),
        capacity_condition,
        tardiness_condition: slack_ok,
        x_ns: x.map(|(n, d)| n as f64 / d as f64),
        tardiness_bounds_ns,
        pets_ns: tasks.iter().map(|c| c.pet_ns).collect(),
    })
}

/// Level-C test of a task system under a provisioning; None if a PET is missing.
pub fn test(system: &TaskSystem, prov: Provisioning) -> Option<LevelCTest> {
    let per_core = (0..system.platform.cores)
        .map(|p| {
            let higher = system.on_core(p, Level::A).chain(system.on_core(p, Level::B));
            charge(system, higher, Level::C, prov).map(|h| core_supply(p, &h))
        })
        .collect::<Option<Vec<_>>>()?;
    let tasks = charge(system, system.at_level(Level::C), Level::C, prov)?;
    Some(restricted_supply_gedf(per_core, &tasks))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn c(task: usize, pet_ms: u64, period_ms: u64) -> Charged {
        Charged { task, pet_ns: pet_ms * MS, period_ns: period_ms * MS }
    }

    fn full(m: usize) -> Vec<CoreSupply> {
        (0..m).map(CoreSupply::full).collect()
    }

    #[test]
    fn supply_of_a_core_is_worked_out_by_hand() {
        // A/B tasks: 10/100 and 20/200 → û = 0.8, σ = 2·10·0.9 + 2·20·0.9 = 54 ms.
        let s = core_supply(0, &[c(0, 10, 100), c(1, 20, 200)]);
        assert!((s.capacity - 0.8).abs() < 1e-12);
        assert!((s.supply_delay_ns - 54.0 * MS as f64).abs() < 1e-3);
        let empty = core_supply(1, &[]);
        assert_eq!((empty.capacity, empty.supply_delay_ns), (1.0, 0.0));
        assert!(empty.supply_delay_ns.is_sign_positive());
    }

    #[test]
    fn exactly_full_core_supplies_nothing() {
        // 70 + 20 + 10 ms per 100 ms fill the core exactly (f64 sums to 0.999…).
        let s = core_supply(0, &[c(0, 70, 100), c(1, 20, 100), c(2, 10, 100)]);
        assert_eq!((s.capacity, s.supply_delay_ns), (0.0, 0.0));
        // With one Level-C task 10/100 and a second, empty core (m = 2):
        // slack = Σû − (m−1)·u_max − U_L(1) = 1 − 0.1 − 0.1 = 0.8,
        // x = (E_L(1) = 10 ms + Σσ = 0) / 0.8 = 12.5 ms → bound = x + 10 ms = 22.5 ms.
        let t = restricted_supply_gedf(vec![s, core_supply(1, &[])], &[c(3, 10, 100)]);
        assert_eq!(t.tardiness_bounds_ns, vec![Some(22_500_000)]);
    }

    #[test]
    fn tardiness_bound_is_worked_out_by_hand() {
        // 2 full cores; tasks 5/10 and 3/10 (u = 0.5, 0.3).
        // slack = 2 − 1·0.5 − 0.5 = 1.0; E_L(1) = 5 ms; σ = 0 → x = 5 ms.
        let t = restricted_supply_gedf(full(2), &[c(0, 5, 10), c(1, 3, 10)]);
        assert!(t.schedulable());
        assert!((t.x_ns.unwrap() - 5.0 * MS as f64).abs() < 1e-6);
        assert_eq!(t.tardiness_bounds_ns, vec![Some(10 * MS), Some(8 * MS)]);
    }

    #[test]
    fn capacity_condition_holds_at_equality_and_fails_just_above() {
        // One core with û = 0.5 (A/B: 50/100) and no delay; Level-C demand 0.5 then 0.5 + 1 ns/100 ms.
        let per_core = vec![core_supply(0, &[c(9, 50, 100)])];
        let at = restricted_supply_gedf(per_core.clone(), &[c(0, 50, 100)]);
        assert!(at.capacity_condition && at.tardiness_condition, "{at:?}");
        let above = restricted_supply_gedf(per_core, &[Charged { task: 0, pet_ns: 50 * MS + 1, period_ns: 100 * MS }]);
        assert!(!above.capacity_condition);
        assert!(above.tardiness_bounds_ns.iter().all(Option::is_none));
    }

    #[test]
    fn tardiness_condition_is_strict() {
        // 2 full cores, three tasks of u = 0.5: U_C = 1.5 ≤ 2 but
        // (m−1)·u_max + U_L(1) = 0.5 + 0.5 = 1.0 < 2 → holds.
        let ok = restricted_supply_gedf(full(2), &[c(0, 5, 10), c(1, 5, 10), c(2, 5, 10)]);
        assert!(ok.schedulable());
        // Two tasks of u = 1.0 on 2 cores: U_C = 2 = supply, but 1·1 + 1 = 2 is not < 2.
        let tight = restricted_supply_gedf(full(2), &[c(0, 10, 10), c(1, 10, 10)]);
        assert!(tight.capacity_condition);
        assert!(!tight.tardiness_condition);
        assert!(!tight.schedulable());
    }

    #[test]
    fn no_level_c_tasks_is_trivially_schedulable() {
        let t = restricted_supply_gedf(full(4), &[]);
        assert!(t.schedulable());
        assert_eq!(t.x_ns, None);
    }
}

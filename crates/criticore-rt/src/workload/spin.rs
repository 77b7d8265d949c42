//! A spin that runs for a given time on the CPU: a periodic job's delay
//! (Fig. 4's delay loop, sized in time) and a compute-only phase, like
//! rt-app's `runtime` event rather than its calibrated `run` loop.
//!
//! Why time and not a calibrated round count: on a VM whose vCPU idles
//! between jobs, the same rounds ran 2-3× slower in the first milliseconds
//! after a sleep than back to back (0.67 against 1.4-2.1 ns a round here,
//! 2026-12-01), so jobs sized by rounds measured back to back ran 1.9× their
//! PET. Time is read on CLOCK_MONOTONIC (vDSO, ~30 ns here; the thread's CPU
//! clock is a system call, ~830 ns). A step between two reads longer than
//! [`OFF_CPU_GAP_NS`] is time the thread was off the CPU (preempted,
//! stopped by a regulator or a server, the vCPU taken by the host), and
//! does not count: the spin's time is running time, as a PET is.

use crate::os::clock::now_ns;

/// The longest step between two clock reads counted as running. A step is
/// ~50-150 ns on the CPU; a preemption, a stop or a taken vCPU is at least
/// several µs (a wake-up alone takes about 10 µs here, docs/references.md,
/// Runtime §2).
pub const OFF_CPU_GAP_NS: u64 = 20_000;

/// Rounds of the two-add loop between clock reads.
const ROUNDS_PER_READ: u32 = 16;

/// Running time so far from successive clock reads.
#[derive(Debug, Clone, Copy)]
pub struct RunningTime {
    last_ns: u64,
    ran_ns: u64,
}

impl RunningTime {
    pub fn from(now_ns: u64) -> Self {
        RunningTime { last_ns: now_ns, ran_ns: 0 }
    }

    /// Take a clock read; the running time so far (steps over
    /// [`OFF_CPU_GAP_NS`] left out).
    pub fn read(&mut self, now_ns: u64) -> u64 {
        let step = now_ns.saturating_sub(self.last_ns);
        self.last_ns = now_ns;
        if step <= OFF_CPU_GAP_NS {
            self.ran_ns += step;
        }
        self.ran_ns
    }
}

/// Spin for `ns` of running time, the two-add loop of Fig. 4 seeded with
/// `seed` (the lines just read, so the spin starts after them); returns the
/// loop's value to fold back. The first clock read waits for the loads
/// before it (the vDSO orders rdtsc after them).
pub fn spin_ns(ns: u64, seed: u64) -> u64 {
    let (mut a, mut b) = (seed, seed);
    if ns == 0 {
        return 0;
    }
    let mut clock = RunningTime::from(now_ns());
    loop {
        (a, b) = rounds(ROUNDS_PER_READ as u64, a, b);
        if clock.read(now_ns()) >= ns {
            return a ^ b;
        }
    }
}

/// Fig. 4's delay_loop: `n` rounds of two adds, each kept by `black_box`.
/// `criticore load --delay N` spins by this count; [`spin_ns`] by time.
#[inline(always)]
pub fn rounds(n: u64, mut a: u64, mut b: u64) -> (u64, u64) {
    for _ in 0..n {
        a = std::hint::black_box(a.wrapping_add(1));
        b = std::hint::black_box(b.wrapping_add(1));
    }
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_over_the_gap_are_off_the_cpu() {
        let mut t = RunningTime::from(1_000);
        assert_eq!(t.read(1_050), 50);
        assert_eq!(t.read(1_100), 100);
        // 20 µs is still running; 1 ns more is off the CPU.
        assert_eq!(t.read(1_100 + OFF_CPU_GAP_NS), 100 + OFF_CPU_GAP_NS);
        assert_eq!(t.read(1_100 + 2 * OFF_CPU_GAP_NS + 1), 100 + OFF_CPU_GAP_NS);
        assert_eq!(t.read(1_100 + 2 * OFF_CPU_GAP_NS + 31), 130 + OFF_CPU_GAP_NS);
        // A clock read that goes back (none does on CLOCK_MONOTONIC) adds nothing.
        assert_eq!(t.read(0), 130 + OFF_CPU_GAP_NS);
    }

    #[test]
    fn a_spin_runs_at_least_its_time_on_the_monotonic_clock() {
        // Off-CPU steps do not count, so the spin ends no earlier than its time.
        let start = now_ns();
        spin_ns(300_000, 7);
        assert!(now_ns() - start >= 300_000);
        assert_eq!(spin_ns(0, 7), 0);
    }
}

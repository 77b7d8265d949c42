//! One phase of a periodic job as the walker runs it: what the phase fitting
//! (`periodic.rs`) computes and the sizing store (`sizing_cache.rs`) remembers.

#[derive(Debug, Clone, PartialEq)]
pub struct PhaseWork {
    /// Iterations of 10 lines (0 = compute only).
    pub iterations: u64,
    pub read_nb: u32,
    /// Running time spun after each iteration (or, compute only, in total):
    /// `spin::spin_ns`.
    pub delay_ns: u64,
    /// The work the file gives this phase (ns, alone).
    pub work_ns: u64,
}

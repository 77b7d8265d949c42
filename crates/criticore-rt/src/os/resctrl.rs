//! MCTI's fixed-priority interconnect (mcti-task-isolation §4 rule 5,
//! Property 1) on a machine that offers a real memory-bandwidth control:
//! Intel Memory Bandwidth Allocation or Arm MPAM, both through the kernel's
//! resctrl file system (`/sys/fs/resctrl`, the `MB` resource). User space
//! cannot program an arbiter; what resctrl offers is a cap per class of
//! service (CLOS), as a percentage of the peak, in steps of the hardware's
//! granularity, down to its minimum.
//!
//! The mapping: while the interconnect is fair (rule 2, every period start)
//! every group runs at 100 %. While it is in fixed priority (rule 5), the
//! group Property 1 ranks highest keeps 100 % and every other group is held
//! at the hardware's minimum: a cap cannot reorder requests, but it makes the
//! lower-ranked ones yield the bandwidth, which is what fixed priority gives
//! the top one. Groups of equal top rank all keep 100 %.
//!
//! This machine has no resctrl (checked by [`present`]); [`plan`] and
//! [`schemata`] are pure and tested here; docs/runtime.md ("MCTI at run
//! time") says what a run does where it is present.

use std::path::Path;

/// Where the kernel mounts resctrl, and the file that says MB is controlled.
pub const ROOT: &str = "/sys/fs/resctrl";

/// The MB resource's limits, from `info/MB/` (`min_bandwidth`, `bandwidth_gran`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbLimits {
    pub min_percent: u32,
    pub granularity: u32,
}

/// Whether this machine's resctrl controls memory bandwidth, and its limits.
pub fn present() -> Option<MbLimits> {
    limits_in(Path::new(ROOT))
}

/// [`present`] under another root (tests).
pub fn limits_in(root: &Path) -> Option<MbLimits> {
    let read = |f: &str| std::fs::read_to_string(root.join("info/MB").join(f)).ok()?.trim().parse::<u32>().ok();
    Some(MbLimits { min_percent: read("min_bandwidth")?, granularity: read("bandwidth_gran")?.max(1) })
}

/// Per group, its MB cap in percent: 100 for all while the interconnect is
/// fair (`priority` None), else 100 for the top Property 1 rank and the
/// minimum (rounded up to the granularity) for the rest.
pub fn plan(priority: Option<&[u32]>, groups: usize, limits: MbLimits) -> Vec<u32> {
    let Some(p) = priority else { return vec![100; groups] };
    let top = p.iter().copied().max().unwrap_or(0);
    let floor = limits.min_percent.div_ceil(limits.granularity) * limits.granularity;
    p.iter().map(|&r| if r == top && top > 0 { 100 } else { floor.min(100) }).collect()
}

/// A `schemata` line capping every memory domain at `percent`.
pub fn schemata(domains: &[u32], percent: u32) -> String {
    let parts: Vec<String> = domains.iter().map(|d| format!("{d}={percent}")).collect();
    format!("MB:{}\n", parts.join(";"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: MbLimits = MbLimits { min_percent: 10, granularity: 10 };

    #[test]
    fn fair_is_uncapped_and_fixed_priority_keeps_only_the_top_rank() {
        assert_eq!(plan(None, 3, LIMITS), vec![100, 100, 100]);
        // Property 1 ranks (mcti::property1_priorities): entity 1 highest,
        // entity 3 not critical (0).
        assert_eq!(plan(Some(&[1, 3, 2, 0]), 4, LIMITS), vec![10, 100, 10, 10]);
        // Equal top ranks both keep 100; a minimum off the granularity rounds up.
        assert_eq!(plan(Some(&[2, 2, 1]), 3, MbLimits { min_percent: 15, granularity: 10 }), vec![100, 100, 20]);
        // No critical entity at all: nobody is preferred.
        assert_eq!(plan(Some(&[0, 0]), 2, LIMITS), vec![10, 10]);
    }

    #[test]
    fn schemata_caps_every_domain() {
        assert_eq!(schemata(&[0, 1], 40), "MB:0=40;1=40\n");
    }

    #[test]
    fn limits_come_from_the_mb_info_files() {
        let root = std::env::temp_dir().join(format!("criticore-resctrl-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(limits_in(&root), None, "no resctrl");
        std::fs::create_dir_all(root.join("info/MB")).unwrap();
        std::fs::write(root.join("info/MB/min_bandwidth"), "10\n").unwrap();
        std::fs::write(root.join("info/MB/bandwidth_gran"), "10\n").unwrap();
        assert_eq!(limits_in(&root), Some(LIMITS));
        std::fs::remove_dir_all(&root).unwrap();
        // This machine: no resctrl mounted with MB (the planning above is all that runs here).
        if !Path::new(ROOT).join("info/MB").exists() {
            assert_eq!(present(), None);
        }
    }
}

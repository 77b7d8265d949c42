//! The nine buffer-management schemes x|y of mc2-io-ipc-os-isolation §6.1:
//! x says how IPC buffers are handled, y how I/O buffers are.

use serde::Serialize;
use std::fmt;

/// IPC policy x.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum IpcPolicy {
    /// R: buffers randomly assigned to DRAM banks, no §4.2 technique.
    Random,
    /// C: all buffers in Level-C banks, no technique.
    LevelC,
    /// O: CE for groups packed onto one core, CL for the rest when the lock
    /// region holds them, SBP otherwise (§6.1).
    Optimized,
}

/// I/O policy y (buffers of Level-A/B tasks; Level-C buffers are always in Level C).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum IoPolicy {
    /// R: randomly assigned to banks.
    Random,
    /// C: all in Level-C banks.
    LevelC,
    /// C+A/B-ALL: every Level-A/B buffer in its task's Level-A/B bank.
    All,
    /// C+A/B-LP: within each level, the half of the I/O tasks with the longest periods in A/B banks.
    LongPeriods,
    /// C+A/B-SP: within each level, the half with the shortest periods in A/B banks.
    ShortPeriods,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scheme {
    pub ipc: IpcPolicy,
    pub io: IoPolicy,
}

impl Scheme {
    /// The nine schemes in the paper's order (§6.1, Fig. 15 legend).
    pub const ALL: [Scheme; 9] = [
        Scheme { ipc: IpcPolicy::Random, io: IoPolicy::Random },
        Scheme { ipc: IpcPolicy::LevelC, io: IoPolicy::LevelC },
        Scheme { ipc: IpcPolicy::Optimized, io: IoPolicy::LevelC },
        Scheme { ipc: IpcPolicy::LevelC, io: IoPolicy::All },
        Scheme { ipc: IpcPolicy::LevelC, io: IoPolicy::LongPeriods },
        Scheme { ipc: IpcPolicy::LevelC, io: IoPolicy::ShortPeriods },
        Scheme { ipc: IpcPolicy::Optimized, io: IoPolicy::All },
        Scheme { ipc: IpcPolicy::Optimized, io: IoPolicy::LongPeriods },
        Scheme { ipc: IpcPolicy::Optimized, io: IoPolicy::ShortPeriods },
    ];

    /// The paper's names of [`Scheme::ALL`], in the same order.
    const NAMES: [&'static str; 9] =
        ["R|R", "C|C", "O|C", "C|C+A/B-ALL", "C|C+A/B-LP", "C|C+A/B-SP", "O|C+A/B-ALL", "O|C+A/B-LP", "O|C+A/B-SP"];

    /// The paper's name; combinations outside the nine are "other".
    pub fn name(&self) -> &'static str {
        Scheme::ALL.iter().position(|s| s == self).map_or("other", |k| Scheme::NAMES[k])
    }

    /// Parse a scheme name, case-insensitively ("o|c+a/b-all").
    pub fn parse(name: &str) -> Option<Scheme> {
        Scheme::NAMES.iter().position(|n| n.eq_ignore_ascii_case(name.trim())).map(|k| Scheme::ALL[k])
    }

    /// Names of the nine schemes, in order.
    pub fn names() -> Vec<&'static str> {
        Scheme::NAMES.to_vec()
    }

    /// Whether phase 1 packs communicating tasks as groups (CE, §6.1).
    pub fn packs_groups(&self) -> bool {
        self.ipc == IpcPolicy::Optimized
    }

    /// Whether the scheme draws random placements (needs a seed).
    pub fn is_random(&self) -> bool {
        self.ipc == IpcPolicy::Random || self.io == IoPolicy::Random
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_distinct_names_round_trip() {
        let names = Scheme::names();
        assert_eq!(names.len(), 9);
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n));
            assert_eq!(Scheme::parse(n), Some(Scheme::ALL[i]));
        }
        assert_eq!(Scheme::parse("o|c+a/b-all"), Some(Scheme::ALL[6]));
        assert_eq!(Scheme::parse("X|Y"), None);
    }
}

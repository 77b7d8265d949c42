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

    pub fn name(&self) -> &'static str {
        use IoPolicy as Y;
        use IpcPolicy as X;
        match (self.ipc, self.io) {
            (X::Random, Y::Random) => "R|R",
            (X::LevelC, Y::LevelC) => "C|C",
            (X::Optimized, Y::LevelC) => "O|C",
            (X::LevelC, Y::All) => "C|C+A/B-ALL",
            (X::LevelC, Y::LongPeriods) => "C|C+A/B-LP",
            (X::LevelC, Y::ShortPeriods) => "C|C+A/B-SP",
            (X::Optimized, Y::All) => "O|C+A/B-ALL",
            (X::Optimized, Y::LongPeriods) => "O|C+A/B-LP",
            (X::Optimized, Y::ShortPeriods) => "O|C+A/B-SP",
            // Combinations outside the paper's nine still get a name.
            (X::Random, _) => "R|other",
            (X::LevelC, Y::Random) => "C|R",
            (X::Optimized, Y::Random) => "O|R",
        }
    }

    /// Parse a scheme name, case-insensitively ("o|c+a/b-all").
    pub fn parse(name: &str) -> Option<Scheme> {
        Scheme::ALL.iter().copied().find(|s| s.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Names of the nine schemes, in order.
    pub fn names() -> Vec<&'static str> {
        Scheme::ALL.iter().map(|s| s.name()).collect()
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

//! Overhead tables of the bandwidth monitor (blin-bandwidth-monitor §3.2–3.3),
//! the file the profiling pipeline writes and the monitor reads:
//!
//! ```toml
//! task = "rt"            # informative
//! sample = "50us"        # sampling interval the table was built for
//! shift = 10             # index = bytes moved in one sample >> shift
//! be_cores = 3           # informative: active best-effort cores when profiled
//! [[phase]]              # one per memory phase of the task, in order
//! overhead = [0.0, 0.001, 0.004]   # relative overhead per index; the last entry
//!                                  # holds for every larger index
//! ```
//! With a 50 µs sample and shift 10, entries are 20.48 MB/s apart (§3.3).

use super::parse::Format;
use crate::error::{FieldError, InputError};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct OverheadTable {
    pub sample_ns: u64,
    pub shift: u32,
    /// Per phase, overhead by index.
    pub phases: Vec<Vec<f64>>,
}

impl OverheadTable {
    /// Overhead of one sample that moved `bytes`, in phase `phase` (clamped to the last).
    pub fn lookup(&self, phase: usize, bytes: u64) -> f64 {
        let row = &self.phases[phase.min(self.phases.len() - 1)];
        let index = (bytes >> self.shift) as usize;
        row[index.min(row.len() - 1)]
    }
}

pub fn parse_overhead_table(text: &str, file: &str) -> Result<OverheadTable, InputError> {
    let value: Value = match Format::from_path(file) {
        Format::Json => serde_json::from_str(text).map_err(|e| FieldError::new("(file)", format!("invalid JSON: {e}")).in_file(file))?,
        Format::Toml => {
            let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
                FieldError::new("(file)", format!("invalid TOML: {}", e.message().replace('\n', "; "))).in_file(file)
            })?;
            serde_json::to_value(table).map_err(|e| FieldError::new("(file)", e.to_string()).in_file(file))?
        }
    };
    walk(&value).map_err(|e| e.in_file(file))
}

fn walk(value: &Value) -> Result<OverheadTable, FieldError> {
    let obj = value.as_object().ok_or_else(|| FieldError::new("(top level)", "expected a table"))?;
    for key in obj.keys() {
        if !["task", "sample", "shift", "be_cores", "phase"].contains(&key.as_str()) {
            return Err(FieldError::new(key, "unknown field (expected one of: task, sample, shift, be_cores, phase)"));
        }
    }
    let sample_ns = match obj.get("sample") {
        None => 50_000,
        Some(v) => {
            let text = v.as_str().ok_or_else(|| FieldError::new("sample", "expected a duration string"))?;
            super::units::parse_duration_ns(text).map_err(|r| FieldError::new("sample", r))?
        }
    };
    let shift = match obj.get("shift") {
        None => 10,
        Some(v) => v.as_u64().filter(|&s| s < 64).ok_or_else(|| FieldError::new("shift", "expected an integer between 0 and 63"))? as u32,
    };
    let phases = obj
        .get("phase")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| FieldError::new("phase", "expected at least one [[phase]] table"))?;
    let phases = phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let field = format!("phase[{i}].overhead");
            let row = p.get("overhead").and_then(Value::as_array).filter(|a| !a.is_empty()).ok_or_else(|| {
                FieldError::new(&field, "expected a non-empty array of overheads")
            })?;
            row.iter()
                .enumerate()
                .map(|(j, x)| {
                    x.as_f64().filter(|o| *o >= 0.0 && o.is_finite()).ok_or_else(|| FieldError::new(format!("{field}[{j}]"), "expected a non-negative number"))
                })
                .collect::<Result<Vec<f64>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(OverheadTable { sample_ns, shift, phases })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_shifts_bytes_and_clamps_to_the_last_entry() {
        let t = parse_overhead_table("shift = 10\n[[phase]]\noverhead = [0.0, 0.5, 1.0]\n", "t.toml").unwrap();
        assert_eq!(t.sample_ns, 50_000);
        assert_eq!(t.lookup(0, 1023), 0.0);
        assert_eq!(t.lookup(0, 1024), 0.5);
        assert_eq!(t.lookup(0, 1 << 20), 1.0);
        assert_eq!(t.lookup(5, 2048), 1.0); // phase clamped to the last
    }

    #[test]
    fn bad_tables_name_the_field() {
        let e = parse_overhead_table("[[phase]]\noverhead = [0.1, -1]\n", "t.toml").unwrap_err();
        assert_eq!(e.field, "phase[0].overhead[1]");
        let e = parse_overhead_table("shift = 10\n", "t.toml").unwrap_err();
        assert_eq!(e.field, "phase");
    }
}

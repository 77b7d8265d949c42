//! Unit strings: durations ("100ms", "50us", "1.5s"), sizes ("256KiB", "32B")
//! and bandwidths ("2020MB/s"). Parsed exactly (decimal, no floating point) into
//! integer nanoseconds, bytes and bytes per second.
//!
//! KiB/MiB/GiB are binary (2^10…), KB/MB/GB are decimal (10^3…): the papers quote
//! bandwidth in decimal MB/s (blin-bandwidth-monitor §2.3) and cache sizes in binary.

use crate::error::quote;

const DURATION_UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
];

const SIZE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
];

/// Parse a duration string into nanoseconds. Zero is allowed here; callers
/// that need a positive value check it themselves.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    parse_with_units(text, DURATION_UNITS, "duration", "\"100ms\", \"50us\", \"1.5s\"", "nanoseconds")
}

/// Parse a size string into bytes.
pub fn parse_size_bytes(text: &str) -> Result<u64, String> {
    parse_with_units(text, SIZE_UNITS, "size", "\"256KiB\", \"32B\", \"128MiB\"", "bytes")
}

const FREQUENCY_UNITS: &[(&str, u128)] = &[("Hz", 1), ("kHz", 1_000), ("MHz", 1_000_000), ("GHz", 1_000_000_000)];

/// Parse a frequency string ("200MHz", "1.2GHz") into whole hertz.
pub fn parse_frequency_hz(text: &str) -> Result<u64, String> {
    parse_with_units(text, FREQUENCY_UNITS, "frequency", "\"200MHz\", \"1.2GHz\"", "hertz")
}

/// Parse a bandwidth string ("2020MB/s") into bytes per second.
pub fn parse_bandwidth_bytes_per_s(text: &str) -> Result<u64, String> {
    let t = text.trim();
    match t.strip_suffix("/s") {
        Some(size) => parse_size_bytes(size).map_err(|_| bandwidth_hint(text)),
        None => Err(bandwidth_hint(text)),
    }
}

fn bandwidth_hint(text: &str) -> String {
    format!("expected a bandwidth like \"2020MB/s\" or \"1GiB/s\", got {}", quote(text))
}

fn parse_with_units(
    text: &str,
    units: &[(&str, u128)],
    what: &str,
    examples: &str,
    base: &str,
) -> Result<u64, String> {
    let t = text.trim();
    let hint = || format!("expected a {what} with a unit such as {examples}, got {}", quote(text));
    if t.starts_with('-') {
        return Err(format!("{what} must not be negative, got {}", quote(text)));
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = (&t[..split], t[split..].trim());
    if number.is_empty() || unit.is_empty() {
        return Err(hint());
    }
    let Some(&(_, scale)) = units.iter().find(|(u, _)| *u == unit) else {
        return Err(hint());
    };
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) {
        return Err(hint());
    }
    // Exact decimal: value = (int.frac) * scale, which must be a whole base unit.
    if frac_part.len() > 18 || int_part.len() > 20 {
        return Err(format!("{what} {} is out of range", quote(text)));
    }
    let int: u128 = if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| hint())? };
    let frac: u128 = if frac_part.is_empty() { 0 } else { frac_part.parse().map_err(|_| hint())? };
    let denom = 10u128.pow(frac_part.len() as u32);
    let scaled_frac = frac * scale;
    if scaled_frac % denom != 0 {
        return Err(format!("{what} {} is not a whole number of {base}", quote(text)));
    }
    let value = int
        .checked_mul(scale)
        .and_then(|v| v.checked_add(scaled_frac / denom))
        .filter(|v| *v <= u64::MAX as u128)
        .ok_or_else(|| format!("{what} {} is out of range", quote(text)))?;
    Ok(value as u64)
}

/// Format nanoseconds with the largest unit that represents them exactly.
pub fn format_duration_ns(ns: u64) -> String {
    exactly(ns, &[("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)], "ns")
}

/// Format bytes with the largest binary unit that represents them exactly.
pub fn format_size_bytes(bytes: u64) -> String {
    exactly(bytes, &[("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)], "B")
}

/// Format hertz with the largest unit that represents them exactly.
pub fn format_frequency_hz(hz: u64) -> String {
    exactly(hz, &[("GHz", 1_000_000_000), ("MHz", 1_000_000), ("kHz", 1_000)], "Hz")
}

fn exactly(n: u64, units: &[(&str, u64)], base: &str) -> String {
    for &(unit, scale) in units {
        if n != 0 && n % scale == 0 {
            return format!("{}{unit}", n / scale);
        }
    }
    format!("{n}{base}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_frequencies_print_in_the_largest_exact_unit_and_read_back() {
        assert_eq!((format_size_bytes(131_072), format_size_bytes(1_025), format_size_bytes(3 << 20)), ("128KiB".into(), "1025B".into(), "3MiB".into()));
        assert_eq!((format_frequency_hz(200_000_000), format_frequency_hz(1_500), format_frequency_hz(7)), ("200MHz".into(), "1500Hz".into(), "7Hz".into()));
        assert_eq!((parse_frequency_hz("200MHz"), parse_frequency_hz("1.2GHz"), parse_frequency_hz("1500Hz")), (Ok(200_000_000), Ok(1_200_000_000), Ok(1_500)));
        assert!(parse_frequency_hz("200 MHzz").is_err() && parse_frequency_hz("0.5Hz").is_err());
    }

    #[test]
    fn durations_parse_exactly() {
        assert_eq!(parse_duration_ns("100ms"), Ok(100_000_000));
        assert_eq!(parse_duration_ns("50us"), Ok(50_000));
        assert_eq!(parse_duration_ns("50µs"), Ok(50_000));
        assert_eq!(parse_duration_ns("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration_ns(" 7 ns "), Ok(7));
        assert_eq!(parse_duration_ns("0.000000001s"), Ok(1));
        assert_eq!(parse_duration_ns(".5ms"), Ok(500_000));
    }

    #[test]
    fn malformed_durations_are_rejected() {
        for bad in ["100", "ms", "100 parsecs", "1.2.3ms", "", "-5ms", "0.5ns", "1e3ms", "99999999999999999999s"] {
            assert!(parse_duration_ns(bad).is_err(), "{bad} should be rejected");
        }
        assert!(parse_duration_ns("-5ms").unwrap_err().contains("negative"));
        assert!(parse_duration_ns("0.5ns").unwrap_err().contains("whole number"));
    }

    #[test]
    fn sizes_are_binary_for_kib_and_decimal_for_kb() {
        assert_eq!(parse_size_bytes("256KiB"), Ok(262_144));
        assert_eq!(parse_size_bytes("1MiB"), Ok(1_048_576));
        assert_eq!(parse_size_bytes("32KB"), Ok(32_000));
        assert_eq!(parse_size_bytes("32B"), Ok(32));
        assert!(parse_size_bytes("32kb").is_err());
    }

    #[test]
    fn bandwidths_are_bytes_per_second() {
        assert_eq!(parse_bandwidth_bytes_per_s("2020MB/s"), Ok(2_020_000_000));
        assert_eq!(parse_bandwidth_bytes_per_s("1GiB/s"), Ok(1 << 30));
        assert!(parse_bandwidth_bytes_per_s("2020MB").is_err());
    }

    #[test]
    fn durations_format_with_the_largest_exact_unit() {
        assert_eq!(format_duration_ns(100_000_000), "100ms");
        assert_eq!(format_duration_ns(1_500_000_000), "1500ms");
        assert_eq!(format_duration_ns(2_000_000_000), "2s");
        assert_eq!(format_duration_ns(1_001), "1001ns");
        assert_eq!(format_duration_ns(0), "0ns");
    }
}

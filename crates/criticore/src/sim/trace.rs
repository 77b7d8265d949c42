//! Perfetto / Chrome trace export (JSON trace-event format, loadable in
//! ui.perfetto.dev and chrome://tracing). Process 1 has one track per core with
//! job slices; process 2 one track per server (when the server holds a core);
//! process 3 one track per task with instants for releases, deadlines and
//! deadline misses; process 4 one track per core (or MRS server) with the
//! regulator's stalled / overload / suspended / depleted spans; per-core
//! bandwidth counters (MB/s) when a bandwidth series was kept. Timestamps are
//! microseconds with nanosecond decimals.

use super::SimResult;
use crate::model::TaskSystem;
use std::fmt::Write;

fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// The trace as a JSON document. Job records are needed for release and
/// deadline instants; segments for the execution slices.
pub fn perfetto_json(system: &TaskSystem, result: &SimResult) -> String {
    let mut out = String::with_capacity(128 * (result.segments.len() + 2 * result.records.len()) + 4096);
    out.push_str("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut first = true;
    let mut event = |out: &mut String, text: String| {
        if !first {
            out.push_str(",\n");
        }
        first = false;
        out.push_str(&text);
    };
    let meta = |pid: u32, tid: Option<u32>, kind: &str, name: &str| match tid {
        Some(tid) => format!("{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"name\":\"{kind}\",\"args\":{{\"name\":{}}}}}", quoted(name)),
        None => format!("{{\"ph\":\"M\",\"pid\":{pid},\"name\":\"{kind}\",\"args\":{{\"name\":{}}}}}", quoted(name)),
    };
    event(&mut out, meta(1, None, "process_name", "cores"));
    for c in 0..system.platform.cores {
        event(&mut out, meta(1, Some(c as u32), "thread_name", &format!("core {c}")));
    }
    if !system.servers.is_empty() {
        event(&mut out, meta(2, None, "process_name", "servers"));
        for (i, s) in system.servers.iter().enumerate() {
            event(&mut out, meta(2, Some(i as u32), "thread_name", &format!("{} (core {})", s.name, s.core)));
        }
    }
    if !result.regulator_intervals.is_empty() {
        event(&mut out, meta(4, None, "process_name", "regulator"));
    }
    for i in &result.regulator_intervals {
        event(
            &mut out,
            format!(
                "{{\"ph\":\"X\",\"pid\":4,\"tid\":{},\"ts\":{},\"dur\":{},\"name\":\"{}\",\"cat\":\"regulator\"}}",
                i.core,
                us(i.start_ns),
                us(i.end_ns - i.start_ns),
                i.state
            ),
        );
    }
    // Bandwidth counters per core, in MB/s per bin.
    let line = system.platform.llc.line_bytes as f64;
    let any_traffic = result.bandwidth.iter().flatten().any(|&r| r > 0.0);
    for (c, bins) in result.bandwidth.iter().enumerate().filter(|_| any_traffic) {
        for (k, requests) in bins.iter().enumerate() {
            let mb_s = requests * line / result.bandwidth_bin_ns as f64 * 1e3;
            event(
                &mut out,
                format!(
                    "{{\"ph\":\"C\",\"pid\":1,\"ts\":{},\"name\":\"bandwidth core {c} (MB/s)\",\"args\":{{\"MB/s\":{mb_s:.3}}}}}",
                    us(k as u64 * result.bandwidth_bin_ns)
                ),
            );
        }
    }
    event(&mut out, meta(3, None, "process_name", "tasks"));
    for (i, t) in system.tasks.iter().enumerate() {
        event(&mut out, meta(3, Some(i as u32), "thread_name", &t.name));
    }
    for s in &result.segments {
        let name = &system.tasks[s.task as usize].name;
        let mut e = String::new();
        let _ = write!(
            e,
            "{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":\"job\",\"args\":{{\"task\":{},\"job\":{}}}}}",
            s.core,
            us(s.start_ns),
            us(s.end_ns - s.start_ns),
            quoted(&format!("{name}#{}", s.number)),
            quoted(name),
            s.number
        );
        event(&mut out, e);
    }
    for s in &result.server_segments {
        let name = &system.servers[s.server as usize].name;
        event(
            &mut out,
            format!(
                "{{\"ph\":\"X\",\"pid\":2,\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":\"server\"}}",
                s.server,
                us(s.start_ns),
                us(s.end_ns - s.start_ns),
                quoted(name)
            ),
        );
    }
    let instant = |tid: u32, ns: u64, name: &str| {
        format!("{{\"ph\":\"i\",\"s\":\"t\",\"pid\":3,\"tid\":{tid},\"ts\":{},\"name\":\"{name}\",\"cat\":\"{name}\"}}", us(ns))
    };
    for r in &result.records {
        event(&mut out, instant(r.task, r.release_ns, "release"));
        event(&mut out, instant(r.task, r.deadline_ns, "deadline"));
        if r.finish_ns > r.deadline_ns {
            event(&mut out, instant(r.task, r.deadline_ns, "miss"));
        }
    }
    // Jobs unfinished at the end: their release, and a miss if the deadline has passed.
    for u in &result.unfinished {
        event(&mut out, instant(u.task, u.release_ns, "release"));
        if u.deadline_ns <= result.duration_ns {
            event(&mut out, instant(u.task, u.deadline_ns, "deadline"));
            event(&mut out, instant(u.task, u.deadline_ns, "miss"));
        }
    }
    out.push_str("\n]}\n");
    out
}

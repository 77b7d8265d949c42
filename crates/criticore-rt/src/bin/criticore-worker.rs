//! `criticore-worker FILE TASK`: task TASK of the task-system file as a real
//! periodic process, without Python (`criticore_rt::workload::worker`).
//! `criticore-worker load ARGS...`: the memory-load generator as
//! `criticore load ARGS...` runs it (the options `LoadOptions::from_args` takes).
//! `criticore regulate` starts it for those `criticore load` commands.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "load") {
        match criticore_rt::workload::worker::run_load(&args[1..]) {
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
            Ok((r, spec)) => {
                let lines = r.reads + r.writes;
                let secs = r.elapsed_ns as f64 / 1e9;
                let gb_s = if r.elapsed_ns > 0 { (lines * spec.line_bytes as u64) as f64 / r.elapsed_ns as f64 } else { 0.0 };
                let buffer = match spec.buffer_bytes {
                    b if b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
                    b if b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
                    b => format!("{b} B"),
                };
                println!("criticore load: {lines} lines of {} B in {secs:.3} s ({gb_s:.3} GB/s), buffer {buffer}", spec.line_bytes);
            }
        }
        exit_if_ctrl_c();
        return;
    }
    let [file, task] = args.as_slice() else {
        eprintln!("usage: criticore-worker FILE TASK  (runs TASK of FILE periodically; job records to $CRITICORE_JOB_LOG as CSV)\n       criticore-worker load [OPTIONS]  (criticore load's generator)");
        std::process::exit(2);
    };
    match criticore_rt::workload::worker::run(file, task) {
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
        Ok((records, clock)) => {
            if let Some(log) = std::env::var_os("CRITICORE_JOB_LOG") {
                if let Err(e) = criticore_rt::workload::worker::write_csv(std::path::Path::new(&log), &records, &clock) {
                    eprintln!("error: {}: cannot write the job records: {e}", std::path::Path::new(&log).display());
                    std::process::exit(1);
                }
            }
        }
    }
    exit_if_ctrl_c();
}

/// A run a Ctrl-C (SIGINT) stopped has reported what it did; its status says
/// so, 130, as `criticore load`'s (SIGTERM, how a runtime ends it, is 0).
fn exit_if_ctrl_c() {
    if criticore_rt::workload::load::stopped_by_ctrl_c() {
        std::process::exit(130);
    }
}

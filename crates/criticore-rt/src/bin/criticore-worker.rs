//! `criticore-worker FILE TASK`: task TASK of the task-system file as a real
//! periodic process, without Python (`criticore_rt::workload::worker`).
//! `criticore regulate` starts it for `command = "criticore load --file F --task T"`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, task] = args.as_slice() else {
        eprintln!("usage: criticore-worker FILE TASK  (runs TASK of FILE periodically; job records to $CRITICORE_JOB_LOG as CSV)");
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
}

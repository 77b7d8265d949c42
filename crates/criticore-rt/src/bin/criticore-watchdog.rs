//! `criticore-watchdog`: resumes and thaws what a regulator stopped when the
//! regulator ends, however it ends. Started by `Watchdog::spawn`, which holds
//! the write end of its stdin; see `criticore_rt::os::watchdog` for the protocol
//! and why each mechanism exists.

fn main() {
    if std::env::args().len() > 1 {
        eprintln!("usage: criticore-watchdog  (reads `pid N` / `thaw PATH<TAB>TEXT` / `end` lines on stdin; acts on EOF)");
        std::process::exit(2);
    }
    criticore_rt::os::watchdog::run(0)
}

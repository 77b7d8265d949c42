//! DMA devices, IPC buffer placement and OS activity in the fluid memory model
//! (mc2-io-ipc-os-isolation §3–§5, mc2-hardware-management §4.2 and Appendix).

use criticore::sim::{sched::SchedulerKind, simulate, SimConfig};
use criticore::{parse_task_system, Format};

const MS: u64 = 1_000_000;

/// Response time (ns) of the first job of `task` in a 200 ms run.
fn response(text: &str, task: &str) -> u64 {
    let system = parse_task_system(text, Format::Toml, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let i = system.tasks.iter().position(|t| t.name == task).unwrap();
    let config = SimConfig { record_jobs: true, ..SimConfig::new(200 * MS) };
    let r = simulate(&system, SchedulerKind::implied_by(&system), &config).unwrap();
    r.records.iter().find(|j| j.task == i as u32 && j.number == 1).map(|j| j.finish_ns - j.release_ns).expect("first job finished")
}

const PLATFORM: &str = "[platform]\npreset = \"sabre-lite\"\ncores = 4\n";
// Tasks here are outside MC² (no level) and pinned: the scheduler is partitioned
// fixed priority, and a pinned task uses its core's partition when the
// allocation names the core, the Level-C partition otherwise.

// ------------------------------------------------------------------ OS isolation

/// The μB task of mc2-hardware-management §4.2: working set equal to its
/// partition (2 ways = 128 KiB), a dummy system call touching 16 pages (64 KiB)
/// between iterations. A victim on core 1 without system calls (Appendix).
fn os_system(os_isolation: bool) -> String {
    format!(
        "{PLATFORM}[allocation]\nos_isolation = {os_isolation}\nllc_ways = {{ core0 = 2, core1 = 2, levelC = 8, os = 4 }}\nbanks = {{ core0 = [4], core1 = [5], levelC = [2, 3], os = [0, 1] }}\n\
         [[task]]\nname = \"caller\"\ncore = 0\nperiod = \"100ms\"\npet = \"20ms\"\n\
         memory = {{ wss = \"128KiB\", pattern = \"random\", accesses_per_ms = 3000, syscalls = {{ per_ms = 1, footprint = \"64KiB\" }} }}\n\
         [[task]]\nname = \"victim\"\ncore = 1\nperiod = \"100ms\"\npet = \"20ms\"\n\
         memory = {{ wss = \"128KiB\", pattern = \"random\", accesses_per_ms = 3000 }}\n"
    )
}

#[test]
fn os_isolation_lowers_the_system_calling_task_and_its_victim() {
    let (iso_caller, iso_victim) = (response(&os_system(true), "caller"), response(&os_system(false), "caller"));
    // With isolation the kernel lines stay in the OS partition: both run at their PET.
    assert_eq!(iso_caller, 20 * MS);
    assert_eq!(response(&os_system(true), "victim"), 20 * MS);
    // Without it the 64 KiB of kernel lines press on every partition: the caller's
    // 128 KiB set no longer fits (Obs. 8) and neither does the victim's (Appendix).
    assert!(iso_victim > iso_caller, "caller {iso_victim} vs {iso_caller}");
    assert!(response(&os_system(false), "victim") > 20 * MS);
}

// ------------------------------------------------------------------------- DMA

fn dma_system(buffer: &str) -> String {
    format!(
        "{PLATFORM}[allocation]\nllc_ways = {{ core0 = 2, levelC = 8 }}\nbanks = {{ core0 = [4], levelC = [2, 3] }}\n\
         [[device]]\nname = \"ssd\"\nperiod = \"1ms\"\nbytes = \"256KiB\"\nbandwidth = \"400MB/s\"\nbuffer = \"{buffer}\"\n\
         [[task]]\nname = \"a\"\ncore = 0\nperiod = \"100ms\"\npet = \"20ms\"\n\
         memory = {{ wss = \"1MiB\", pattern = \"random\", accesses_per_ms = 2000 }}\n"
    )
}

#[test]
fn a_dma_buffer_in_the_tasks_own_bank_interferes_more_than_one_in_level_c() {
    // §4.3 / Table 1: a buffer in the Level-A/B bank exposes that core's tasks to
    // DMA-sourced row conflicts; in the Level-C banks only the bus is shared.
    let own = response(&dma_system("core0"), "a");
    let level_c = response(&dma_system("levelC"), "a");
    assert!(own > level_c, "own bank {own} vs Level C {level_c}");
    assert!(level_c > 20 * MS, "the bus is still shared: {level_c}");
}

#[test]
fn device_interrupts_take_their_share_of_cpu_0_only() {
    // 100 µs of interrupt handling per 1 ms on CPU 0: a CPU-only 9 ms job there
    // progresses at 0.9 and takes exactly 10 ms; on core 1 it takes 9 ms.
    let text = format!(
        "{PLATFORM}[[device]]\nname = \"cam\"\nperiod = \"1ms\"\nbytes = \"4KiB\"\nbandwidth = \"400MB/s\"\nirq = \"100us\"\n\
         [[task]]\nname = \"t0\"\ncore = 0\nperiod = \"100ms\"\npet = \"9ms\"\n\
         [[task]]\nname = \"t1\"\ncore = 1\nperiod = \"100ms\"\npet = \"9ms\"\n"
    );
    assert!((response(&text, "t0") as i64 - 10 * MS as i64).abs() <= 1, "{}", response(&text, "t0"));
    assert_eq!(response(&text, "t1"), 9 * MS);
}

// ------------------------------------------------------------------------- IPC

/// A sender pinned to core 0 whose 120 KiB working set plus a 16 KiB message
/// buffer slightly exceeds its 128 KiB partition; a background load on core 1
/// in the Level-C partition stresses the Level-C banks (§5.1). (Tasks outside
/// MC²: a Level-A job slowed past its table slot would wait for its next slot.)
fn ipc_system(method: &str) -> String {
    format!(
        "{PLATFORM}[allocation]\nllc_ways = {{ core0 = 2, levelC = 8 }}\nbanks = {{ core0 = [4], levelC = [2, 3] }}\n\
         [[task]]\nname = \"sender\"\ncore = 0\nperiod = \"100ms\"\npet = \"20ms\"\n\
         memory = {{ wss = \"120KiB\", pattern = \"random\", accesses_per_ms = 1000, ipc = {{ bytes = \"16KiB\", accesses_per_ms = 2000, method = \"{method}\" }} }}\n\
         [[task]]\nname = \"background\"\ncore = 1\nperiod = \"100ms\"\npet = \"100ms\"\n\
         memory = {{ wss = \"8MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 40000 }}\n"
    )
}

#[test]
fn ipc_is_fastest_locked_then_same_core_then_bypassed() {
    // Obs. 1 (mc2-io-ipc-os-isolation §5.1): CL < CE < SBP. CL hits always; CE's
    // buffer shares the partition (136 KiB in 128 KiB: some misses, in its own
    // bank); SBP reads every message line from the Level-C banks the background
    // load hammers.
    let (cl, ce, sbp) = (response(&ipc_system("cl"), "sender"), response(&ipc_system("ce"), "sender"), response(&ipc_system("sbp"), "sender"));
    assert!(cl < ce && ce < sbp, "CL {cl}, CE {ce}, SBP {sbp}");
}

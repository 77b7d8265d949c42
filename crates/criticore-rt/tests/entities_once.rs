//! Issue 25, "Entities once": the simulator's regulator and the runtime's
//! session regulate a file by one entity plan (`criticore::regulate::entities`),
//! for every example with a `[regulation]` table and for random files.

use criticore::model::overhead::parse_overhead_table;
use criticore::model::{RegulationKind, TaskSystem};
use criticore::sim::{regulator, SimConfig};
use criticore::{parse_task_system, Format};
use criticore_rt::session::plan_groups;
use std::path::{Path, PathBuf};

fn examples(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            examples(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

/// The simulator's plan and the runtime's, for `kind`; both Err or both the same.
fn both(system: &TaskSystem, kind: RegulationKind, dir: &Path) -> Option<criticore::regulate::entities::EntityPlan> {
    let mut config = SimConfig::new(1_000_000);
    config.regulation = Some(Some(kind));
    if kind == RegulationKind::Monitor {
        let m = system.regulation.as_ref()?.monitor.as_ref()?;
        let text = std::fs::read_to_string(dir.join(&m.table_file)).ok()?;
        config.overhead_table = Some(parse_overhead_table(&text, &m.table_file).unwrap());
    }
    let sim = regulator(system, &config).map(|r| r.entity_plan().cloned());
    let rt = plan_groups(system, kind);
    match (sim, rt) {
        (Ok(Some(sim)), Ok(rt)) => {
            assert_eq!(sim, rt.plan, "{kind:?}");
            // Every runtime group is an entity of that plan, holding its tasks.
            for g in &rt.groups {
                let e = &rt.plan.entities[g.entity];
                assert_eq!((&g.name, g.budget, g.criticality), (&e.name, e.budget.unwrap_or(0), e.criticality));
                assert!(g.tasks.iter().all(|t| e.tasks.contains(t)));
            }
            Some(sim)
        }
        (Err(_), Err(_)) | (Ok(_), Err(_)) | (Err(_), Ok(_)) => None,
        (Ok(None), _) => panic!("{kind:?}: the simulator's regulator has no plan"),
    }
}

#[test]
fn every_example_with_a_regulation_has_one_entity_plan() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files = Vec::new();
    examples(&root, &mut files);
    let mut compared = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let Ok(system) = parse_task_system(&text, Format::Toml, &f.display().to_string()) else { continue };
        let Some(reg) = &system.regulation else { continue };
        // The file's own kind must plan in both; the others where they apply.
        assert!(both(&system, reg.kind, f.parent().unwrap()).is_some(), "{}: {:?}", f.display(), reg.kind);
        compared += 1;
        for kind in [RegulationKind::Memguard, RegulationKind::Mcti, RegulationKind::Mrs] {
            both(&system, kind, f.parent().unwrap());
        }
    }
    // examples/: mrs-memory, memguard-bombs, the eight mcti/ files, monitor/,
    // profile/ and the two regulate/ files.
    assert!(compared >= 14, "{compared} examples with a [regulation] table");
}

/// A small deterministic generator (no dependency): tasks on cores or
/// global, levels, groups or per-core budgets, servers.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn random_file(seed: u64) -> String {
    let mut r = Lcg(seed);
    let cores = 1 + r.next(4) as usize;
    let mut text = format!("[platform]\ncores = {cores}\n");
    let servers = r.next(3) as usize;
    for s in 0..servers {
        text += &format!(
            "[[server]]\nname = \"s{s}\"\ncore = {}\nkind = \"periodic\"\npriority = {}\nperiod = \"10ms\"\nbudget = \"2ms\"\nmemory_budget = {}\n",
            r.next(cores as u64),
            s + 1,
            100 * (1 + r.next(50))
        );
    }
    let tasks = 1 + r.next(8) as usize;
    for t in 0..tasks {
        text += &format!("[[task]]\nname = \"t{t}\"\nperiod = \"{}ms\"\npet = \"1ms\"\n", 10 + r.next(20));
        // With servers, every task is in one (the parser's rule).
        match r.next(4) {
            _ if servers > 0 => text += &format!("server = \"s{}\"\n", r.next(servers as u64)),
            1 => {}
            _ => text += &format!("core = {}\n", r.next(cores as u64)),
        }
        match r.next(3) {
            0 => text += &format!("level = \"{}\"\n", ["A", "B", "C"][r.next(3) as usize]),
            1 => text += &format!("level = {}\n", r.next(4)),
            _ => {}
        }
        if r.next(2) == 0 {
            text += "command = [\"true\"]\n";
        }
    }
    let kind = ["memguard", "mcti", "mrs"][r.next(3) as usize];
    text += &format!("[regulation]\nkind = \"{kind}\"\nperiod = \"1ms\"\n");
    if kind == "memguard" && r.next(3) == 0 {
        text += &format!("[[regulation.group]]\nname = \"g\"\ntasks = [\"t{}\"]\nbudget = 500\n", r.next(tasks as u64));
    } else {
        let budgets: Vec<String> = (0..cores).map(|_| (100 * (1 + r.next(20))).to_string()).collect();
        text += &format!("budgets = [{}]\n", budgets.join(", "));
    }
    text
}

#[test]
fn random_files_have_one_entity_plan() {
    let (mut parsed, mut planned) = (0, 0);
    for seed in 0..1_000 {
        let text = random_file(seed);
        let Ok(system) = parse_task_system(&text, Format::Toml, "random.toml") else { continue };
        parsed += 1;
        for kind in [RegulationKind::Memguard, RegulationKind::Mcti, RegulationKind::Mrs] {
            planned += usize::from(both(&system, kind, Path::new(".")).is_some());
        }
    }
    // A third or more parse (the rest break a parser rule, e.g. a level
    // with a server); each plans under at least its own kind.
    assert!(parsed >= 300 && planned >= parsed, "{parsed} parsed, {planned} planned");
}

//! Importing other tools' models. Amalthea (Eclipse APP4MC) files are read
//! into a plain intermediate [`Model`] ([`amalthea`]), which is mapped onto
//! criticore's task system ([`to_system`]) and written as a task-system file
//! ([`write`]). Everything the task system cannot hold yet is counted by kind
//! in the [`Summary`], never dropped silently (docs/amalthea.md).
//!
//! Like the rest of the engine this opens no file and prints nothing: it
//! takes the file's bytes and returns values.

pub mod amalthea;
pub mod to_system;
pub mod write;
mod xml;

use crate::decimal::Exact;
use crate::error::InputError;
use crate::model::TaskSystem;
use serde::Serialize;

/// What an import gives: the model as read, the task system, its file text and the summary.
#[derive(Debug, Clone)]
pub struct Imported {
    pub model: Model,
    pub system: TaskSystem,
    pub toml: String,
    pub summary: Summary,
}

/// Import an Amalthea model (`.amxmi`, gzip-compressed or not) with execution
/// needs multiplied by `scale` (`--scale`; 1 when None). `file` names the
/// file in errors.
pub fn import_amalthea(bytes: &[u8], file: &str, scale: Option<&Exact>) -> Result<Imported, InputError> {
    let model = amalthea::read(bytes).map_err(|e| e.in_file(file))?;
    let (system, summary) = to_system::task_system(&model, scale).map_err(|e| e.in_file(file))?;
    let toml = write::system_toml(&system, &summary, file);
    // What the file says is what every consumer reads: the system is the
    // written file parsed back (the import's tests check it equals `system`).
    let system = crate::model::parse_task_system(&toml, crate::model::Format::Toml, file)?;
    Ok(Imported { model, system, toml, summary })
}

/// An Amalthea model, reduced to what criticore uses now or will use.
/// Indices point into the model's own lists.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Model {
    /// The metamodel version of the namespace (`0.7.2`, `2.1.0`).
    pub version: String,
    pub tasks: Vec<Task>,
    pub runnables: Vec<Runnable>,
    pub labels: Vec<Label>,
    /// Processing units criticore schedules on (CPUs), in file order.
    pub cores: Vec<Core>,
    /// Processing units of another type (GPU, accelerator): not scheduled.
    pub other_units: Vec<Core>,
    pub memories: Vec<Memory>,
    /// Access paths between cores and memories, with their latency in cycles.
    pub access_paths: Vec<AccessPath>,
    pub chains: Vec<Chain>,
    /// Mode and probability switches in call graphs: the branch with the
    /// largest execution need is the one kept.
    pub switches: usize,
    /// Elements read past, by kind (semaphore accesses, waits, a task's
    /// second stimulus…): counted so the summary names them.
    pub unread: Vec<(String, usize)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Task {
    pub name: String,
    pub stimulus: Stimulus,
    /// OSEK priority: higher is more important.
    pub priority: Option<i64>,
    pub preemption: Preemption,
    pub activation_limit: Option<u32>,
    /// Upper limit of the response time (a process requirement), if given.
    pub deadline_ns: Option<u64>,
    /// Index into `cores`; None when the allocation names no single core.
    pub core: Option<usize>,
    /// Runnables called, in order (indices into `runnables`).
    pub steps: Vec<usize>,
    /// Inter-process stimuli this task triggers (by name).
    pub triggers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Stimulus {
    Periodic { period_ns: u64, offset_ns: u64, jitter_ns: u64 },
    /// Inter-arrival time between `min_ns` and `max_ns` (`distribution`: how it is drawn).
    Sporadic { min_ns: u64, max_ns: u64, distribution: Option<String> },
    /// The next activation `min_ns`…`max_ns` after the previous one.
    RelativePeriodic { min_ns: u64, max_ns: u64, offset_ns: u64, distribution: Option<String> },
    /// Activated when another task reaches an inter-process trigger.
    InterProcess { name: String },
}

/// Amalthea's preemption attribute, as the task system holds it.
pub use crate::model::Preemption;

#[derive(Debug, Clone, Serialize)]
pub struct Runnable {
    pub name: String,
    /// Execution needs, summed when a runnable has several.
    pub needs: Vec<Need>,
    pub accesses: Vec<LabelAccess>,
}

/// What a runnable's execution need is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NeedUnit {
    /// Instructions (0.7): cycles = instructions / the core type's instructions per cycle.
    Instructions,
    /// Ticks (1.x, 2.x): cycles of the processing unit.
    Ticks,
}

#[derive(Debug, Clone, Serialize)]
pub struct Need {
    pub unit: NeedUnit,
    /// For any processing-unit type not listed in `per_type`.
    pub default: Option<Amount>,
    /// Per core type (0.7) or processing-unit definition (1.x), by name.
    pub per_type: Vec<(String, Amount)>,
}

impl Need {
    /// The amount for a core of type `pu_type`.
    pub fn for_type(&self, pu_type: &str) -> Option<&Amount> {
        self.per_type.iter().find(|(t, _)| t == pu_type).map(|(_, a)| a).or(self.default.as_ref())
    }
}

/// An execution need: its bounds, mean and distribution as the file gives them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Amount {
    pub upper: u64,
    pub lower: Option<u64>,
    pub mean: Option<f64>,
    /// `Constant`, `WeibullEstimators`, `DiscreteValueUniformDistribution`, … (the file's type).
    pub distribution: String,
    /// Its parameters by name (`pRemainPromille`, `sd`, `alpha`, …).
    pub parameters: Vec<(String, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LabelAccess {
    /// Index into `labels`.
    pub label: usize,
    pub write: bool,
    /// Accesses per run of the runnable (the file's statistic; 1 when none).
    pub count: f64,
    /// Its `implementation` (explicit, implicit, timed: LET); None: undefined.
    pub implementation: Option<crate::model::Communication>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Label {
    pub name: String,
    pub size_bits: u64,
    /// Index into `memories` (the memory mapping), if mapped.
    pub memory: Option<usize>,
    pub constant: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Core {
    pub name: String,
    /// Core type (0.7) or processing-unit definition (1.x): keys execution needs.
    pub pu_type: String,
    pub clock_hz: Exact,
    pub instructions_per_cycle: Exact,
}

#[derive(Debug, Clone, Serialize)]
pub struct Memory {
    pub name: String,
    pub size_bytes: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AccessPath {
    pub name: String,
    pub source: String,
    pub target: String,
    pub latency_cycles: Option<f64>,
}

/// An event chain: from a stimulus event to a response event through segments.
#[derive(Debug, Clone, Serialize)]
pub struct Chain {
    pub name: String,
    pub stimulus: Event,
    pub response: Event,
    pub segments: Vec<Chain>,
}

/// An event of the event model: what happens (`start`) to which entity (a runnable's name).
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub name: String,
    pub entity: Option<String>,
    pub event_type: Option<String>,
}

/// What the import made and what it could not represent, by element kind.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub tasks: usize,
    pub cores: usize,
    /// (kind, count), each count above zero, in a fixed order.
    pub not_represented: Vec<(String, usize)>,
}

impl Summary {
    /// The one line the CLI prints.
    pub fn line(&self) -> String {
        let mut line = format!("imported {} tasks on {} cores", self.tasks, self.cores);
        if !self.not_represented.is_empty() {
            let parts: Vec<String> = self.not_represented.iter().map(|(k, n)| format!("{n} {k}")).collect();
            line.push_str("; not represented yet: ");
            line.push_str(&parts.join(", "));
        }
        line
    }
}

//! criticore engine: the task-system model, MC² and classic schedulability
//! analysis, the optimizer and the simulator. Pure: no printing, no files.
//!
//! Imports run one way: [`model`] ← the rules ([`regulate`]: regulators,
//! [`policy`]: scheduling policies, [`interference`]: the memory model's
//! equations) ← [`analysis`] and [`sim`], siblings that share only what lies
//! below them ← [`optimize`] ← [`generate`] ← [`study`]. [`import`] reads
//! other tools' models into the [`model`] and names nothing else.

pub mod analysis;
pub mod decimal;
pub mod error;
pub mod generate;
pub mod import;
pub mod model;
pub mod interference;
pub mod optimize;
pub mod policy;
pub mod regulate;
pub mod sim;
pub mod study;

pub use error::InputError;
pub use model::{parse_task_system, Format, TaskSystem};

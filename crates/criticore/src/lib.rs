//! criticore engine: the task-system model, MC² schedulability analysis, and
//! (in later modules) the optimizer and simulator. Pure: no printing, no files.

pub mod analysis;
pub mod error;
pub mod generate;
pub mod model;
pub mod interference;
pub mod optimize;
pub mod policy;
pub mod regulate;
pub mod sim;
pub mod study;

pub use error::InputError;
pub use model::{parse_task_system, Format, TaskSystem};

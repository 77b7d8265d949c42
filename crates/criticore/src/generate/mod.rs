//! Seeded random task systems. Every draw comes from a ChaCha generator seeded
//! explicitly, so the same seed gives the same system on any machine.

pub mod classic;
pub mod mc2_uniform;

pub use mc2_uniform::{mc2_uniform, Mc2UniformParams};

pub mod mc2_io;

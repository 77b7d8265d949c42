//! The programs criticore runs as load and as victims: the load generator's
//! hot loop, a pointer-chasing victim, a task of the file as a periodic real
//! process (and [`worker`], the same without Python), and one point of
//! `criticore profile`.

pub mod chase;
pub mod load;
pub mod periodic;
pub mod phase;
pub mod profile;
pub mod sizing_cache;
pub mod spin;
pub mod worker;

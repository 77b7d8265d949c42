//! The transaction (request-level) memory model (docs/simulator.md;
//! docs/transaction-model.md): every LLC miss is a request through a
//! set-associative LLC with way masks and page colours ([`cache`]), the MC²
//! page allocator over physical frames ([`page_alloc`], [`address`]), a bus
//! arbiter ([`arbiter`]) and DRAM banks with row buffers ([`dram`]),
//! driven reference by reference by the papers' micro-benchmarks
//! ([`workload`]) in [`system`]. Used to reproduce the micro-benchmarks
//! and to calibrate the fluid model.

pub mod address;
pub mod arbiter;
pub mod cache;
pub mod dma;
pub mod dram;
pub mod ipc;
pub mod load;
pub mod mc2_io;
pub mod mc2_ub;
pub mod model;
pub mod page_alloc;
pub mod system;
pub mod workload;

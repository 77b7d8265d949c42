//! When a perf event overflowed: the sample the kernel writes at each
//! overflow into the event's ring buffer, with `PERF_SAMPLE_TIME` on
//! CLOCK_MONOTONIC (`use_clockid`), is the moment the count crossed the armed
//! period, the start of the regulator's end-to-end reaction (as a counter
//! page's `crossed_ns` is for shared-memory counters).
//!
//! The ring is 1 + [`DATA_PAGES`] pages mapped read-write, so the reader
//! moves `data_tail` and the kernel never drops the newest sample for lack of
//! room; [`Ring::drain`] reads every record since the last call and keeps the
//! latest sample time (include/uapi/linux/perf_event.h, `struct
//! perf_event_mmap_page` and `PERF_RECORD_SAMPLE`).

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{fence, Ordering};

/// Data pages of a ring (a power of two): a sample is 24–48 bytes, and the
/// regulator drains at every period and stop, so 8 pages never fill.
pub const DATA_PAGES: usize = 8;

pub const SAMPLE_TID: u64 = 1 << 1;
pub const SAMPLE_TIME: u64 = 1 << 2;
const RECORD_SAMPLE: u32 = 9;

// Offsets in struct perf_event_mmap_page.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;
const DATA_OFFSET: usize = 1040;
const DATA_SIZE: usize = 1048;

/// One event's mapped ring buffer.
pub struct Ring {
    base: *mut u8,
    len: usize,
    data_offset: usize,
    data_size: usize,
    /// Bytes before the time in a sample record: the header, then pid/tid
    /// where `PERF_SAMPLE_TID` is set (the fields come in bit order).
    time_at: usize,
    /// The latest sample time read (CLOCK_MONOTONIC ns), 0 before any.
    latest: std::cell::Cell<u64>,
}

impl Ring {
    /// Map the ring of the event `fd`, opened with `sample_type` (which must
    /// hold `SAMPLE_TIME`).
    pub fn map(fd: RawFd, sample_type: u64) -> io::Result<Ring> {
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = page * (1 + DATA_PAGES);
        // SAFETY: a fresh shared mapping of the event's buffer; unmapped on drop.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = base as *mut u8;
        // SAFETY: within the control page.
        let (offset, size) = unsafe { (read_u64(base, DATA_OFFSET) as usize, read_u64(base, DATA_SIZE) as usize) };
        // Kernels before 4.1 leave both 0: the data follows the control page.
        let (data_offset, data_size) = if size == 0 { (page, len - page) } else { (offset, size) };
        let time_at = 8 + if sample_type & SAMPLE_TID != 0 { 8 } else { 0 };
        Ok(Ring { base, len, data_offset, data_size, time_at, latest: std::cell::Cell::new(0) })
    }

    /// Read the records written since the last call; the latest sample time
    /// seen so far (0: none yet).
    pub fn drain(&self) -> u64 {
        // SAFETY: offsets within the mapping; head is read before the data
        // (acquire), tail written after it (release), as perf_event_open(2) asks.
        unsafe {
            let head = read_u64(self.base, DATA_HEAD);
            fence(Ordering::Acquire);
            let mut tail = read_u64(self.base, DATA_TAIL);
            while tail < head {
                let at = |k: usize| self.data_offset + ((tail as usize + k) % self.data_size);
                let byte = |k: usize| *self.base.add(at(k));
                let word = |k: usize, n: usize| (0..n).fold(0u64, |v, i| v | (byte(k + i) as u64) << (8 * i));
                let (kind, size) = (word(0, 4) as u32, word(6, 2) as u64);
                if size == 0 {
                    break;
                }
                if kind == RECORD_SAMPLE && size as usize >= self.time_at + 8 {
                    self.latest.set(self.latest.get().max(word(self.time_at, 8)));
                }
                tail += size;
            }
            fence(Ordering::Release);
            std::ptr::write_volatile(self.base.add(DATA_TAIL) as *mut u64, head);
        }
        self.latest.get()
    }
}

unsafe fn read_u64(base: *mut u8, offset: usize) -> u64 {
    std::ptr::read_volatile(base.add(offset) as *const u64)
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

// The mapping is only touched through &self by the thread that owns the counter.
unsafe impl Send for Ring {}

//! The IPC copies of mc2-io-ipc-os-isolation §5.1: `load_msg()` (the
//! Sender's kernel copies a message from its user buffer into a message
//! buffer) and `do_msg_fill()` (the Receiver's kernel copies it out), line by
//! line. Where the message buffer lives is the management strategy (§4.2):
//! SBP — uncacheable, in the Level-C/OS banks; CE — cacheable, in the
//! communicating tasks' own partition and bank; CL — locked in the LLC.

use super::workload::{Access, Workload};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// load_msg: read the user buffer, write the message buffer.
    Send,
    /// do_msg_fill: read the message buffer, write the user buffer.
    Receive,
}

/// `messages` copies of `bytes` between a user buffer and a message buffer.
pub struct MessageCopy {
    /// Pages of the user buffer and of the message buffer.
    user: Vec<u64>,
    kernel: Vec<u64>,
    page_bytes: u64,
    lines: u64,
    line_bytes: u64,
    direction: Direction,
    /// The message buffer is uncacheable (SBP).
    uncached: bool,
    compute_ps: u64,
    messages: u64,
    k: u64,
    step: u64,
}

impl MessageCopy {
    pub fn new(user: &[u64], kernel: &[u64], page_bytes: u64, bytes: u64, line_bytes: u64, direction: Direction, uncached: bool, compute_ps: u64, messages: u64) -> MessageCopy {
        assert!(bytes <= page_bytes * user.len().min(kernel.len()) as u64);
        MessageCopy { user: user.to_vec(), kernel: kernel.to_vec(), page_bytes, lines: bytes.div_ceil(line_bytes), line_bytes, direction, uncached, compute_ps, messages, k: 0, step: 0 }
    }
}

impl Workload for MessageCopy {
    fn next(&mut self) -> Option<Access> {
        if self.k >= self.messages {
            return None;
        }
        // Line i: two references, the source then the destination.
        let (i, second) = (self.step / 2, self.step % 2 == 1);
        let off = i * self.line_bytes;
        let kernel_side = (self.direction == Direction::Send) == second;
        let pages = if kernel_side { &self.kernel } else { &self.user };
        let addr = pages[(off / self.page_bytes) as usize] + off % self.page_bytes;
        let write = second;
        self.step += 1;
        if self.step == 2 * self.lines {
            self.step = 0;
            self.k += 1;
        }
        let mut a = Access::user(addr, write, self.compute_ps);
        a.kernel = true;
        a.uncached = kernel_side && self.uncached;
        Some(a)
    }

    fn iterations(&self) -> u64 {
        self.k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_reads_user_then_writes_kernel_line_by_line() {
        let mut m = MessageCopy::new(&[0x1000], &[0x8000], 4096, 64, 32, Direction::Send, true, 0, 1);
        let v: Vec<(u64, bool, bool)> = std::iter::from_fn(|| m.next()).map(|a| (a.addr, a.write, a.uncached)).collect();
        assert_eq!(v, vec![(0x1000, false, false), (0x8000, true, true), (0x1020, false, false), (0x8020, true, true)]);
        let mut m = MessageCopy::new(&[0x1000], &[0x8000], 4096, 32, 32, Direction::Receive, false, 0, 2);
        let v: Vec<(u64, bool)> = std::iter::from_fn(|| m.next()).map(|a| (a.addr, a.write)).collect();
        assert_eq!(v, vec![(0x8000, false), (0x1000, true), (0x8000, false), (0x1000, true)]);
        assert_eq!(m.iterations(), 2);
    }
}

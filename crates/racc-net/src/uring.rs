//! The router's device I/O through io_uring (`LoopConfig::uring`): every read and write of a
//! pass of the router's loop goes to the kernel in one `io_uring_enter` instead of one system
//! call each. The kernel work per packet is the same (a TUN write still runs the receiving
//! host's IP and UDP input on the router's CPU); what is saved is the system calls' entry and
//! exit and the empty read that ends each device's batch.
//!
//! Reads are non-blocking attempts (`RWF_NOWAIT`: an empty device answers `EAGAIN` at once;
//! without it io_uring would arm a poll and complete the read whenever a packet came, into a
//! slot the router has reused meanwhile; where a kernel's TUN refuses the flag, the fd's
//! `O_NONBLOCK` has the same effect): the loop asks for a few packets per device, each
//! read straight into a router slot, and waits for devices with epoll as before. Writes copy the
//! packet into a fixed pool of buffers (a slot is reused as soon as it is freed, and the slots'
//! storage may move when it grows, while the kernel reads a write's buffer until it completes).

use crate::clock::Clock;
use crate::device::MAX_PKT;
use crate::router::stats::RouterStats;
use io_uring::{opcode, types, IoUring};
use racc_proto::time::Time;
use std::io;
use std::os::fd::RawFd;

/// Submission queue entries (the completion queue has twice as many).
const ENTRIES: u32 = 256;
/// Write buffers: packets written in one pass before the queue is submitted.
const WRITES: usize = 128;
/// A completion's `user_data`: a read (its index in the pass's reads) or a write (its buffer).
const READ_TAG: u64 = 1 << 63;
/// A write buffer: a packet and a link-layer header.
const WBUF: usize = MAX_PKT + 64;

pub struct Uring {
    ring: IoUring,
    wbufs: Vec<u8>,
    /// Per write buffer: when the emulated link delivers its packet (for the lateness).
    wdue: Vec<Time>,
    wfree: Vec<u16>,
    /// Entries pushed and not yet submitted, and submitted whose completion is not yet read.
    queued: usize,
    in_flight: usize,
    /// This pass's reads, in submission order: (slot, device), and each one's result.
    pub reads: Vec<(u32, u16)>,
    pub results: Vec<i32>,
    /// The reads' flags: RWF_NOWAIT, or none where the kernel refuses it.
    read_flags: i32,
    /// The ring failed (the run ends with this).
    pub error: Option<io::Error>,
}

impl Uring {
    /// A ring for the calling thread (the only one that submits), the devices `fds`
    /// registered as fixed files 0..n.
    pub fn new(fds: &[RawFd]) -> io::Result<Uring> {
        let ring = IoUring::builder().setup_single_issuer().build(ENTRIES)?;
        ring.submitter().register_files(fds)?;
        Ok(Uring {
            ring,
            wbufs: vec![0; WRITES * WBUF],
            wdue: vec![0; WRITES],
            wfree: (0..WRITES as u16).rev().collect(),
            queued: 0,
            in_flight: 0,
            reads: Vec::new(),
            results: Vec::new(),
            read_flags: libc::RWF_NOWAIT,
            error: None,
        })
    }

    /// Queue `pkt` to be written to device `dev`, due at `due` (for the lateness); submits
    /// what is queued first when the buffers or the queue are full.
    /// `head` goes before it (a veth's Ethernet header, or nothing).
    pub fn write(&mut self, head: &[u8], pkt: &[u8], dev: u16, due: Time, clock: &Clock, stats: &mut RouterStats) {
        if self.wfree.is_empty() || self.queued >= ENTRIES as usize {
            self.submit(clock, stats);
        }
        let Some(b) = self.wfree.pop() else {
            // Every buffer still in the kernel after a full submit: never expected.
            stats.write_errors += 1;
            return;
        };
        let (at, n) = (b as usize * WBUF, head.len() + pkt.len());
        let buf = &mut self.wbufs[at..at + n];
        buf[..head.len()].copy_from_slice(head);
        buf[head.len()..].copy_from_slice(pkt);
        self.wdue[b as usize] = due;
        let e = opcode::Write::new(types::Fixed(dev as u32), buf.as_ptr(), n as u32).build().user_data(b as u64);
        // SAFETY: the buffer stays untouched (out of `wfree`) until its completion is read.
        if unsafe { self.ring.submission().push(&e) }.is_err() {
            self.submit(clock, stats);
            // SAFETY: as above; the queue was just emptied.
            unsafe { self.ring.submission().push(&e) }.expect("an empty submission queue");
        }
        self.queued += 1;
    }

    /// Queue a read of one packet from device `dev` into `buf` (router slot `slot`): the
    /// pass's next read, its result in `results` at its index in `reads` after [`Uring::submit`].
    ///
    /// # Safety
    /// `buf` must stay valid and untouched until [`Uring::submit`] returns.
    pub unsafe fn read(&mut self, dev: u16, slot: u32, buf: &mut [u8], clock: &Clock, stats: &mut RouterStats) {
        if self.queued >= ENTRIES as usize {
            self.submit(clock, stats);
        }
        let n = self.reads.len();
        self.reads.push((slot, dev));
        let e = opcode::Read::new(types::Fixed(dev as u32), buf.as_mut_ptr(), buf.len() as u32)
            .rw_flags(self.read_flags)
            .build()
            .user_data(READ_TAG | n as u64);
        // SAFETY: the caller keeps `buf` valid until the completion is read (in `submit`).
        if unsafe { self.ring.submission().push(&e) }.is_err() {
            self.submit(clock, stats);
            // SAFETY: as above; the queue was just emptied.
            unsafe { self.ring.submission().push(&e) }.expect("an empty submission queue");
        }
        self.queued += 1;
    }

    /// Start a pass's reads.
    pub fn clear_reads(&mut self) {
        self.reads.clear();
        self.results.clear();
    }

    /// Hand everything queued to the kernel in one system call and read every completion: the
    /// reads' results into `results` (by read number), the writes' into `stats`. TUN reads and
    /// writes complete in the call (a read of an empty device fails with EAGAIN at once:
    /// RWF_NOWAIT, or the fd's O_NONBLOCK where the kernel's TUN lacks RWF_NOWAIT). Returns
    /// only when the kernel is done with every buffer; a failure of the ring itself is kept in
    /// `error` (the router ends its run with it).
    pub fn submit(&mut self, clock: &Clock, stats: &mut RouterStats) {
        self.results.resize(self.reads.len(), -libc::EAGAIN);
        let t0 = clock.now();
        while self.queued + self.in_flight > 0 {
            match self.ring.submit_and_wait(self.queued + self.in_flight) {
                Ok(n) => {
                    self.in_flight += n;
                    self.queued -= n.min(self.queued);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // The ring is unusable; the buffers it holds are never freed (nor reused).
                    self.error.get_or_insert(e);
                    break;
                }
            }
            for cqe in self.ring.completion() {
                self.in_flight -= 1;
                let (ud, res) = (cqe.user_data(), cqe.result());
                if ud & READ_TAG != 0 {
                    if res == -libc::EOPNOTSUPP && self.read_flags != 0 {
                        // This kernel's TUN does not take RWF_NOWAIT; O_NONBLOCK does the same.
                        self.read_flags = 0;
                    }
                    self.results[(ud & !READ_TAG) as usize] = res;
                } else {
                    let b = ud as usize;
                    self.wfree.push(b as u16);
                    if res < 0 {
                        stats.write_errors += 1;
                    } else {
                        stats.delivered += 1;
                        let late = t0.saturating_sub(self.wdue[b]);
                        stats.lateness_ns.push(late.min(u32::MAX as u64) as u32);
                    }
                }
            }
        }
        stats.write_ns += clock.now() - t0;
    }

    /// Whether anything waits to be submitted.
    pub fn pending(&self) -> bool {
        self.queued + self.in_flight > 0
    }
}

//! How the live run's loops wait and batch: the router thread's and the host threads'
//! settings, chosen once per run (`racc live run --loop ...`).

use racc_proto::time::Time;

/// How the router's loop waits. The defaults are what measured best on the 2-core KVM machine
/// (`examples/ceiling.rs`; figures in docs/LIVE.md): slept-through
/// short waits and a pinned router cut the CPU per packet and the delivery lateness p99;
/// polling and IFF_NAPI did not help, and stay off.
#[derive(Clone, Copy, Debug)]
pub struct LoopConfig {
    /// Waits up to this long are spent polling (epoll with no timeout) instead of sleeping.
    /// Off: on a busy machine a real-time thread that polls starves the ordinary ones, and the
    /// kernel's share for them then stalls it for tens of milliseconds.
    pub spin_ns: Time,
    /// Waits up to this long (and longer than `spin_ns`) sleep until the timer without
    /// waking for the devices, which are read when it fires: packets from the hosts wait up to
    /// this long in their device, for one wake-up instead of two.
    pub coalesce_ns: Time,
    /// The router thread's timer slack, ns (`PR_SET_TIMERSLACK`).
    pub timer_slack_ns: u64,
    /// Pin the router thread to the last CPU the process may use, and keep the host threads
    /// off it (when there are at least two).
    pub pin: bool,
    /// Create the TUN devices with IFF_NAPI (the kernel's receive path of a packet the router
    /// writes runs in NAPI context).
    pub napi: bool,
    /// The most datagrams a host reads with one `recvmmsg` and sends with one `sendmmsg`
    /// (1: a system call per packet).
    pub host_batch: usize,
    /// After a pass that received packets, a host sleeps this long (or to its next timer)
    /// without watching its sockets, then reads what queued (0: it waits in `ppoll`). Costs
    /// up to this much delay at the receiving end of a busy path (the one-way delays measured
    /// there and the ACK clock), none on an idle one.
    pub host_hold_ns: Time,
    /// The router sleeps to its next event plus this, so that events this close to it run in
    /// the same wake-up (each up to this much later than due: the delivery lateness). At
    /// 600 Mb/s 20 µs halved the wake-ups and cut the router's CPU per packet by 1-2 µs.
    pub gather_ns: Time,
    /// The devices' reads and writes of a pass go to the kernel in one `io_uring_enter`
    /// ([`crate::uring`]) instead of a system call each.
    pub uring: bool,
    /// Veth pairs instead of TUN devices, the router reading its ends through AF_PACKET
    /// receive rings (no system call per packet read; [`crate::packet`]).
    pub veth: bool,
    /// Due-time sends: a host calls an endpoint whose timer fired at the time it was due
    /// (never before its last call) rather than at the late clock reading, and the router
    /// stamps a packet into its first port at the send time it carries (within that port's
    /// delay). Off (`racc-live --clock-sends`): both at the clock reading, as before; the
    /// hosts' timer lateness and the way from socket to router then shape the arrivals
    /// (docs/LIVE.md, RCP on shape a).
    pub due_sends: bool,
}

impl Default for LoopConfig {
    fn default() -> LoopConfig {
        LoopConfig {
            spin_ns: 0,
            coalesce_ns: 50_000,
            timer_slack_ns: 1,
            pin: true,
            napi: false,
            host_batch: 32,
            host_hold_ns: 100_000,
            gather_ns: 20_000,
            uring: false,
            veth: false,
            due_sends: true,
        }
    }
}

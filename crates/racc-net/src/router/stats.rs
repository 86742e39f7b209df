//! What the router counts beyond the ports' own counters (the live report's router table).

/// What the router saw, beyond the ports' own counters.
#[derive(Clone, Debug, Default)]
pub struct RouterStats {
    /// Packets read from the TUN devices.
    pub rx_pkts: u64,
    pub not_ipv4: u64,
    pub not_udp: u64,
    pub not_racc: u64,
    /// racc datagrams of another wire format version than this build's (`shim::VERSION`).
    pub bad_version: u64,
    /// racc datagrams of no flow of the run, or not from and to that flow's hosts.
    pub misrouted: u64,
    /// racc datagrams whose tag is not this run's (`auth.rs`): forged, bit-flipped, or of
    /// another run. Dropped before any port sees them.
    pub forged: u64,
    /// Datagrams with this run's tag whose counter the flow direction's window has seen or left
    /// behind: replays. Dropped before any port sees them.
    pub replayed: u64,
    /// Written to the destination host's device.
    pub delivered: u64,
    pub write_errors: u64,
    /// A module's rewrite could not be put back into the bytes (never expected).
    pub write_back_errors: u64,
    /// How late each delivery was written, after the time the emulated link delivers it, ns.
    pub lateness_ns: Vec<u32>,
    /// The router thread's CPU time, ns.
    pub cpu_ns: u64,
    /// How long the router thread waited runnable but not running, ns: pinned alone on its
    /// CPU at SCHED_FIFO, this is the kernel's RT throttling (`sched_rt_runtime_us`).
    pub run_delay_ns: u64,
    /// Passes of the router's loop (each one wait at most).
    pub loops: u64,
    /// Waits spent polling rather than sleeping (`LoopConfig::spin_ns`).
    pub spins: u64,
    /// Waits slept through without watching the devices (`LoopConfig::coalesce_ns`).
    pub coalesced: u64,
    /// Wall time spent inside the writes to the hosts' devices (the kernel's receive path
    /// for the packet runs there), and inside the reads, ns.
    pub write_ns: u64,
    pub read_ns: u64,
    /// Packets stamped into their first port at the send time they carry, earlier than read
    /// (`LoopConfig::due_sends`), and the time so taken back, summed, ns.
    pub stamped_sent: u64,
    pub stamp_back_ns: u64,
    /// Packets a veth's receive ring had no room for (lost before the router saw them).
    pub ring_drops: u64,
}

impl RouterStats {
    pub fn foreign(&self) -> u64 {
        self.not_ipv4 + self.not_udp + self.not_racc + self.bad_version + self.misrouted
    }
}

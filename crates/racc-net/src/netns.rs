//! The emulated network's Linux side: one network namespace per host, joined to the router by a
//! TUN device that the router creates in its own namespace and moves into the host's, so that the
//! router keeps the device's fd while the host's kernel sees an ordinary interface.
//!
//! Names carry the run's owner: namespace `racc-<pid>-<run>-h<i>`, or `racc-<pid>-<label>-<run>-h<i>`
//! with `$RACC_LIVE_TAG` (its letters and digits, at most 16: which user or job made it, as
//! the kernel runtime's `$RACC_KERNEL_TAG`). Teardown deletes them (TUN
//! devices vanish with the router's fds). A process killed before its teardown leaves namespaces
//! behind; every run starts by deleting those whose pid no longer exists ([`sweep_stale`]).

use crate::device::Device;
use crate::packet::{self, PacketPort};
use crate::sys;
use crate::tun::Tun;
use std::io;
use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

const NETNS_DIR: &str = "/var/run/netns";
/// Every racc namespace starts with this.
pub const PREFIX: &str = "racc-";

static RUN: AtomicU32 = AtomicU32::new(0);

/// The hosts' next hop towards the router: an address no host has ([`host_addr`] never ends
/// in .254 or .255).
const GATEWAY: &str = "10.99.255.254";

/// Host `i`'s address: 10.99.0.0/16, never a .0 host part.
pub fn host_addr(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 99, (i / 250) as u8, (i % 250 + 1) as u8)
}

/// Run an `ip` command (iproute2), failing with its message.
fn ip(args: &[&str]) -> io::Result<()> {
    let out = Command::new("ip").args(args).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// `$RACC_LIVE_TAG`'s letters and digits (at most 16) and a dash, or nothing.
fn tag_label(tag: Option<&str>) -> String {
    let l: String = tag.unwrap_or("").chars().filter(|c| c.is_ascii_alphanumeric()).take(16).collect();
    if l.is_empty() {
        l
    } else {
        format!("{l}-")
    }
}

/// The pid in a racc namespace name, if it is one.
fn owner_pid(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

/// Every racc namespace now present.
pub fn racc_namespaces() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else { return Vec::new() };
    let mut v: Vec<String> =
        dir.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| owner_pid(n).is_some()).collect();
    v.sort();
    v
}

/// Delete the namespaces left by racc runs whose process is gone; returns their names.
pub fn sweep_stale() -> Vec<String> {
    let me = std::process::id();
    let mut removed = Vec::new();
    for n in racc_namespaces() {
        let pid = owner_pid(&n).expect("filtered");
        if pid != me && !sys::pid_alive(pid) && ip(&["netns", "delete", &n]).is_ok() {
            removed.push(n);
        }
    }
    removed
}

/// One host's namespace and the router's end of its link (a TUN device, or a veth pair's).
pub struct HostNet {
    pub ns: String,
    pub addr: Ipv4Addr,
    pub dev: Device,
}

/// A link-layer address as `ip` writes it.
fn mac(m: &[u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// Receive-ring frames per veth device: 8192 (16 MB, 100 ms of 1 Gb/s in 1500-byte packets) for
/// a few hosts, fewer for many, at least 256.
fn ring_frames(hosts: usize) -> usize {
    (32_768 / hosts.max(1)).clamp(256, 8192)
}

/// The namespaces of one run; dropping it deletes them (normal exit, error or panic alike).
pub struct Network {
    pub hosts: Vec<HostNet>,
}

impl Network {
    /// Create `n` host namespaces, each with a device addressed `host_addr(i)` routing the
    /// whole 10.99/16 to the router: a TUN device (with IFF_NAPI if `napi`), or with `veth` a
    /// veth pair whose router end stays in this namespace, read through a packet ring.
    pub fn create(n: usize, napi: bool, veth: bool) -> io::Result<Network> {
        let run = RUN.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let label = tag_label(std::env::var("RACC_LIVE_TAG").ok().as_deref());
        let mut net = Network { hosts: Vec::with_capacity(n) };
        for i in 0..n {
            let ns = format!("{PREFIX}{pid}-{label}{run}-h{i}");
            ip(&["netns", "add", &ns])?;
            // Owned from here on: a failure below still deletes it (and the veth pair in it).
            let made = if veth { make_veth(&ns, pid, run, i, n) } else { make_tun(&ns, napi) };
            let (dev, name) = match made {
                Ok(d) => d,
                Err(e) => {
                    let _ = ip(&["netns", "delete", &ns]);
                    return Err(e);
                }
            };
            let addr = host_addr(i);
            net.hosts.push(HostNet { ns: ns.clone(), addr, dev });
            // No IPv6 on the device: its router solicitations would only be foreign packets.
            let _ = Command::new("ip")
                .args(["netns", "exec", &ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"])
                .output();
            ip(&["-n", &ns, "addr", "add", &format!("{addr}/32"), "dev", &name])?;
            // A long device queue: the emulated port's buffer is the router's, not the kernel's.
            ip(&["-n", &ns, "link", "set", &name, "txqueuelen", "10000", "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            if veth {
                // The gateway's address is no device's: the router's end sees the hosts'
                // packets as another host's (`packet.rs`), and there is no ARP to answer.
                ip(&[
                    "-n",
                    &ns,
                    "neigh",
                    "add",
                    GATEWAY,
                    "lladdr",
                    &mac(&packet::GATEWAY_MAC),
                    "dev",
                    &name,
                    "nud",
                    "permanent",
                ])?;
            }
            // Through a gateway on the link (no host has its address; TUN has no ARP): the
            // raw socket's packets (IP_HDRINCL) then use the nexthop's cached route instead of
            // a route allocated and freed per packet, which the kernel does for a header-included
            // packet on a route with no gateway (`__mkroute_output`, FLOWI_FLAG_KNOWN_NH).
            ip(&["-n", &ns, "route", "add", "10.99.0.0/16", "via", GATEWAY, "dev", &name, "onlink"])?;
        }
        Ok(net)
    }
}

/// A TUN device created here and moved into namespace `ns`; returns it and its name.
fn make_tun(ns: &str, napi: bool) -> io::Result<(Device, String)> {
    let tun = Tun::create("racc%d", napi)?;
    let name = tun.name.clone();
    ip(&["link", "set", &name, "netns", ns])?;
    Ok((Device::Tun(tun), name))
}

/// A veth pair: `eth0` in namespace `ns`, the router's end here (named after the run, so
/// concurrent runs never clash), up, without IPv6, its packet ring open. Returns the router's
/// end and the host's device name.
fn make_veth(ns: &str, pid: u32, run: u32, i: usize, hosts: usize) -> io::Result<(Device, String)> {
    let name = format!("rc{pid:x}-{run:x}-{i:x}");
    if name.len() >= 16 {
        return Err(io::Error::other(format!("veth name {name} too long")));
    }
    ip(&[
        "link",
        "add",
        "name",
        &name,
        "address",
        &mac(&packet::ROUTER_MAC),
        "type",
        "veth",
        "peer",
        "name",
        "eth0",
        "address",
        &mac(&packet::HOST_MAC),
        "netns",
        ns,
    ])?;
    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6"), "1");
    ip(&["link", "set", &name, "up"])?;
    let port = PacketPort::open(&name, ring_frames(hosts))?;
    Ok((Device::Veth(port), "eth0".into()))
}

impl Drop for Network {
    fn drop(&mut self) {
        for h in &self.hosts {
            let _ = ip(&["netns", "delete", &h.ns]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tagged_name_keeps_its_owner_pid_for_the_stale_sweep() {
        assert_eq!(tag_label(None), "");
        assert_eq!(tag_label(Some("")), "");
        assert_eq!(tag_label(Some("live-39/b; rm")), "live39brm-");
        assert_eq!(tag_label(Some("abcdefghijklmnopqrstuvwxyz")), "abcdefghijklmnop-");
        let name = format!("{PREFIX}4242-{}0-h1", tag_label(Some("live39b")));
        assert_eq!(name, "racc-4242-live39b-0-h1");
        assert_eq!(owner_pid(&name), Some(4242));
        assert_eq!(owner_pid("racc-4242-0-h1"), Some(4242));
    }
}

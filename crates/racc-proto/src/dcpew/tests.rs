//! The tunnel claim at the protocol level (DCP-EW §III.C): one sender's packets cross
//! g1 (ingress SM + NM) → r (NM, the bottleneck's LF) → g2 (egress SM + NM) → a real TCP
//! receiver with DPCP's echo, and its ACKs come back to the sender's decoder. DCP-EW's sender
//! decodes r's 4-bit LF exactly; DPCP's routers read every tunnel packet as an MSP (no
//! seq/ack inside the tunnel), so its LSP echoes only repeat r's MSP digit: 11 01 reads as 11
//! 11 (MD 0.43 instead of 0.875), 10 01 as 10 10.

use super::*;
use crate::cc::{Ack, CongestionControl, SenderCtx};
use crate::dpcp::levels::Lf;
use crate::dpcp::{DpcpParams, DpcpRouter, DpcpRouterParams, DpcpWindow};
use crate::endpoint::Endpoint;
use crate::ipsec::{decapsulate, Tunnel};
use crate::packet::{flags, tcp_checksum, Kind, Packet, TcpHeader};
use crate::router::{PortView, RouterModule};
use crate::tcp::TcpReceiver;
use crate::time::{Time, NS_PER_MS};
use crate::vcp::{LoadFactor, LoadFactorParams};

const MS: Time = NS_PER_MS;
const ISN: u32 = 0x8000_0000;

fn ctx(now: Time) -> SenderCtx {
    SenderCtx { now, mss: 1000, srtt: Some(200 * MS), latest_rtt: Some(200 * MS), ..Default::default() }
}

fn est() -> LoadFactor {
    LoadFactor::with_phase(&LoadFactorParams::default(), 0, 0)
}

fn dcpew_router(lf: Lf) -> Box<dyn RouterModule> {
    let mut r = DcpewRouter::with_estimator(est(), &DcpewRouterParams::default());
    r.set_lf(lf);
    Box::new(r)
}

/// A DPCP router whose LF is `lf`: DpcpRouter has no setter, so drive its estimator to the ρ
/// at the middle of `lf`'s interval.
fn dpcp_router(lf: Lf) -> Box<dyn RouterModule> {
    let lfp = LoadFactorParams { t_p: 0.1, t_q: 0.05, gamma: 1.0, ..Default::default() };
    let mut r = DpcpRouter::with_estimator(LoadFactor::with_phase(&lfp, 0, 0), &DpcpRouterParams::default());
    let port = PortView { capacity_bps: 8e6, limit_pkts: 100, limit_bytes: u64::MAX, ..Default::default() };
    r.on_tick(0, &port);
    let (lo, hi) = lf.rho_bounds();
    let mut p = Packet::tcp(0, Kind::Ack, ((lo + hi) / 2.0 * 100_000.0) as u32, 0, TcpHeader::default());
    r.on_arrival(0, &mut p, &port);
    r.on_tick(50 * MS, &port);
    r.on_tick(100 * MS, &port);
    assert_eq!(r.lf(), lf);
    Box::new(r)
}

/// Send `n` packets per flow (flows interleaved packet by packet) through g1 → r → g2 with a
/// tunnel from g1 to g2, ACK each at once; returns the windows.
fn through_tunnel<W: CongestionControl>(windows: &mut [W], routers: [Box<dyn RouterModule>; 3], n: u32) {
    let [mut g1, mut r, mut g2] = routers;
    let port = PortView { capacity_bps: 8e6, limit_pkts: 100, limit_bytes: u64::MAX, ..Default::default() };
    let mut t = Tunnel::new(1, 12_345);
    let mut rx: Vec<TcpReceiver> = (0..windows.len())
        .map(|f| {
            let mut c = FlowConfig::new(f as u32, 1040);
            c.isn = ISN;
            TcpReceiver::with_echo(&c, Box::new(crate::dpcp::DpcpEcho::new(2, ISN)))
        })
        .collect();
    for i in 0..n {
        for (f, w) in windows.iter_mut().enumerate() {
            let now = i as Time * MS;
            let mut h = TcpHeader { seq: ISN.wrapping_add(i * 1000), flags: flags::ACK, ..Default::default() };
            h.checksum = tcp_checksum(&h);
            let mut p = Packet::tcp(f as u32, Kind::Data, 1040, 1000, h);
            w.on_send(&mut p, &ctx(now));
            g1.before_encapsulation(now, &mut p, 1);
            t.encapsulate(&mut p);
            g1.after_encapsulation(now, &mut p, 1);
            g1.on_departure(now, &mut p, &port);
            r.on_departure(now, &mut p, &port);
            g2.before_decapsulation(now, &mut p, 1);
            assert!(decapsulate(&mut p, 1));
            g2.after_decapsulation(now, &mut p, 1);
            g2.on_departure(now, &mut p, &port);
            rx[f].on_packet(now, &p);
            let mut a = rx[f].poll_transmit(now).expect("an ACK per packet");
            w.on_wire_arrival(&mut a, &SenderCtx { cwnd: w.window(), ..ctx(now) });
            w.on_ack(&Ack { packet: &a, acked_bytes: 1000, reported_pkts: 1.0 }, &ctx(now));
        }
    }
}

fn dcpew_windows(k: usize, p: &DcpewParams) -> Vec<DcpewWindow> {
    (0..k)
        .map(|f| {
            let mut c = FlowConfig::new(f as u32, 1040);
            c.isn = ISN;
            DcpewWindow::new(&c, 1000, p)
        })
        .collect()
}

#[test]
fn dcpew_recovers_the_bottleneck_lf_through_the_tunnel_dpcp_cannot() {
    let low = Lf::lowest(2);
    for truth in [Lf::dpcp(0b11, 0b01), Lf::dpcp(0b10, 0b01), Lf::dpcp(0b01, 0b10)] {
        // One flow in the tunnel: the outer IDs alternate with its packets.
        let mut w = dcpew_windows(1, &DcpewParams::default());
        // The outer IDs start odd (12 345): packet 40, the last, is an outer LSP.
        through_tunnel(&mut w, [dcpew_router(low), dcpew_router(truth), dcpew_router(low)], 41);
        assert_eq!(w[0].decoder().lf(), truth, "DCP-EW decodes r's LF");
        assert_eq!(w[0].decoder().stats().fallbacks, 0);
        assert!(w[0].loss_stats().lsp_echoes >= 19);
        // DPCP: every tunnel packet reads as an MSP at r; the LSP echo repeats the MSP digit.
        let mut c = FlowConfig::new(0, 1040);
        c.isn = ISN;
        let mut d = vec![DpcpWindow::new(&c, 1000, &DpcpParams::default())];
        // DPCP's own alternation starts with an MSP: packet 39, the last, is an LSP.
        through_tunnel(&mut d, [dpcp_router(low), dpcp_router(truth), dpcp_router(low)], 40);
        let m = truth.digit(0);
        assert_eq!(d[0].decoder().lf(), Lf::dpcp(m, m), "DPCP reads {truth:?} as {m:02b} {m:02b}");
    }
}

#[test]
fn three_flows_share_the_tunnel_random_positions_still_decode() {
    // Three inner flows: each flow sees the tunnel's outer parity at its packets, a pseudo-
    // random position sequence (as random IDs). With the exception limit off the decoder keeps
    // chains; its MSP is always r's and every in-sequence LSP carries r's LSP.
    let truth = Lf::dpcp(0b10, 0b01);
    let p = DcpewParams { exception_limit: Some(0), ..Default::default() };
    let mut w = dcpew_windows(3, &p);
    through_tunnel(&mut w, [dcpew_router(Lf::lowest(2)), dcpew_router(truth), dcpew_router(Lf::lowest(2))], 60);
    for x in &w {
        assert_eq!(x.decoder().lf().digit(0), 0b10);
        assert!(x.loss_stats().lsp_echoes > 5, "{:?}", x.loss_stats());
        assert!(x.decoder().lf() == truth || x.decoder().lf() == Lf::dpcp(0b10, 0b11));
    }
}

#[test]
fn without_a_tunnel_positions_come_from_the_inner_id() {
    // Plain path (no tunnel hooks): the NM reads the inner ID; random IDs decode too.
    for mode in [IpIdMode::Increment, IpIdMode::Random] {
        let truth = Lf::dpcp(0b11, 0b10);
        let p = DcpewParams { ip_id: mode, ip_id_seed: 3, ..Default::default() };
        let mut w = dcpew_windows(1, &p)[0].clone();
        let mut r = dcpew_router(truth);
        let port = PortView::default();
        let mut c = FlowConfig::new(0, 1040);
        c.isn = ISN;
        let mut rx = TcpReceiver::with_echo(&c, Box::new(crate::dpcp::DpcpEcho::new(2, ISN)));
        let mut lsp_seen = false;
        for i in 0..64u32 {
            let mut h = TcpHeader { seq: ISN.wrapping_add(i * 1000), flags: flags::ACK, ..Default::default() };
            h.checksum = tcp_checksum(&h);
            let mut pk = Packet::tcp(0, Kind::Data, 1040, 1000, h);
            w.on_send(&mut pk, &ctx(0));
            r.on_departure(0, &mut pk, &port);
            let want = if pk.ip_id & 1 == 0 { 0b11 } else { 0b10 };
            assert_eq!(pk.ecn, want, "{mode:?}: the half the ID selects");
            rx.on_packet(0, &pk);
            let mut a = rx.poll_transmit(0).unwrap();
            w.on_wire_arrival(&mut a, &SenderCtx { cwnd: w.window(), ..ctx(0) });
            lsp_seen |= w.decoder().lf() == truth;
        }
        assert!(lsp_seen, "{mode:?}");
        assert_eq!(w.decoder().stats().fallbacks, 0, "{mode:?}");
    }
}

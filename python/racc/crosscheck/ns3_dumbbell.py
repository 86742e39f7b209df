"""One baselines case (``baselines.Case``) in ns-3: TcpCubic, TcpBbr or TcpDctcp on the same dumbbell.

ns-3 comes from the ``ns3`` wheel (``pip install ns3``; 3.44 measured), whose Python bindings are
cppyy: the simulation is a small C++ program compiled once per process (``_PROGRAM``), driven
from here. Importing the wheel takes tens of seconds; ``available()`` says whether it is there.

Matching (racc's setting -> ns-3's):

* wire packet 1500 -> ``SegmentSize`` 1460, ``Timestamp`` off (no 12-byte option, as the kernel
  runtime's hosts), so a data packet is 1500 IP bytes; the point-to-point links add a 2-byte PPP
  header on the wire (0.13 %, left).
* IW 10, min RTO 200 ms, SACK on, ``DelAckCount`` 1 (an ACK per segment), send and receive
  buffers far above the BDP (racc has no receiver window).
* Loss recovery is ns-3's default for every controller (PRR, RFC 6937, as Linux; racc's
  transport runs NewReno's with SACK).
* Queues: the bottleneck's egress queue disc is a FifoQueueDisc of the case's buffer in packets
  (DropTail), or for DCTCP a RedQueueDisc with ``QW`` 1 (the instantaneous queue) and
  ``MinTh`` = ``MaxTh`` = K + 1, ``UseEcn`` and no hard drop: RED marks an arrival that finds at
  least ``MaxTh`` waiting, racc's step module one that finds more than K. The device's own queue
  is one packet, so the queue disc holds the queue (no BQL). Every other device gets a FIFO of
  100 000 packets (ns-3 would otherwise install FqCoDel).
* BBR: ``EnablePacing`` on (TcpBbr needs it), ns-3's ``TcpBbr`` is BBR v1.
* Retransmissions: data segments sent below the highest sequence sent so far (the socket's
  ``Tx`` trace). PROBE_RTT episodes: entries of cwnd to 4 segments or fewer after the first
  PROBE_BW (the same rule is used on every engine's cwnd samples).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

from racc.crosscheck.baselines import HEADERS, PACKET, Case

_PROGRAM = r"""
#include <vector>
namespace racc_xc {
using namespace ns3;

struct FlowState {
  Ptr<PacketSink> sink;
  Ptr<BulkSendApplication> app;
  Ptr<TcpSocketBase> sock;
  uint32_t cwnd = 0;
  double pacing_bps = 0;
  uint64_t retrans = 0;
  uint32_t high_tx = 0;
  bool any_tx = false;
};

std::vector<FlowState> g_flows;
Ptr<QueueDisc> g_bneck;
// samples: one row per flow per interval, and one queue row per interval
std::vector<double> s_t, s_rx, s_cwnd, s_pacing, s_retrans;
std::vector<int> s_flow;
std::vector<double> q_t, q_pkts;
double g_interval = 0.05;
double g_stop = 10;

void OnCwnd(int i, uint32_t, uint32_t v) { g_flows[i].cwnd = v; }
void OnPacing(int i, DataRate, DataRate v) { g_flows[i].pacing_bps = (double) v.GetBitRate(); }
void OnTx(int i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
  uint32_t n = p->GetSize();
  if (n == 0) return;
  FlowState& f = g_flows[i];
  uint32_t seq = h.GetSequenceNumber().GetValue();
  if (f.any_tx && (int32_t)(seq - f.high_tx) < 0) { f.retrans++; return; }
  f.any_tx = true;
  f.high_tx = seq + n;
}

void Hook(int i) {
  FlowState& f = g_flows[i];
  Ptr<Socket> s = f.app->GetSocket();
  f.sock = DynamicCast<TcpSocketBase>(s);
  s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, i));
  s->TraceConnectWithoutContext("PacingRate", MakeBoundCallback(&OnPacing, i));
  s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, i));
}

void Sample() {
  double t = Simulator::Now().GetSeconds();
  for (size_t i = 0; i < g_flows.size(); i++) {
    FlowState& f = g_flows[i];
    if (!f.sock) continue;
    s_t.push_back(t); s_flow.push_back((int)i);
    s_rx.push_back((double) f.sink->GetTotalRx());
    s_cwnd.push_back((double) f.cwnd);
    s_pacing.push_back(f.pacing_bps);
    s_retrans.push_back((double) f.retrans);
  }
  q_t.push_back(t);
  q_pkts.push_back((double) g_bneck->GetNPackets());
  if (t + g_interval <= g_stop + 1e-9) Simulator::Schedule(Seconds(g_interval), &Sample);
}

struct Result { uint64_t drops = 0; uint64_t marks = 0; uint64_t sent = 0; };

Result Run(std::string cc, double rate_bps, std::vector<double> owd_s, std::vector<double> starts,
           double stop, double interval, uint32_t buffer, uint32_t k, uint32_t seg, uint32_t run) {
  g_flows.clear(); s_t.clear(); s_rx.clear(); s_cwnd.clear(); s_pacing.clear(); s_retrans.clear();
  s_flow.clear(); q_t.clear(); q_pkts.clear();
  g_interval = interval; g_stop = stop;
  RngSeedManager::SetSeed(1); RngSeedManager::SetRun(run);
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(cc));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(seg));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1u << 30));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1u << 30));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
  Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(cc == "ns3::TcpDctcp" ? "On" : "Off"));
  Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(cc == "ns3::TcpBbr"));
  size_t n = owd_s.size();
  NodeContainer src, dst, routers;
  src.Create(n); dst.Create(n); routers.Create(2);
  InternetStackHelper stack;
  stack.InstallAll();
  PointToPointHelper acc, bn;
  acc.SetDeviceAttribute("DataRate", DataRateValue(DataRate((uint64_t)(10 * rate_bps))));
  acc.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
  bn.SetDeviceAttribute("DataRate", DataRateValue(DataRate((uint64_t) rate_bps)));
  bn.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
  bn.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
  TrafficControlHelper big;
  big.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100000p"));
  TrafficControlHelper bq;
  if (cc == "ns3::TcpDctcp") {
    bq.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, buffer)),
                        "QW", DoubleValue(1.0), "MinTh", DoubleValue(k + 1), "MaxTh", DoubleValue(k + 1),
                        "UseEcn", BooleanValue(true), "UseHardDrop", BooleanValue(false),
                        "MeanPktSize", UintegerValue(1500));
  } else {
    bq.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, buffer)));
  }
  Ipv4AddressHelper addr;
  std::vector<Ipv4Address> dst_addr;
  NetDeviceContainer bd = bn.Install(routers.Get(0), routers.Get(1));
  QueueDiscContainer qd = bq.Install(bd.Get(0));
  big.Install(bd.Get(1));
  g_bneck = qd.Get(0);
  addr.SetBase("10.250.0.0", "255.255.255.0");
  addr.Assign(bd);
  for (size_t i = 0; i < n; i++) {
    acc.SetChannelAttribute("Delay", TimeValue(Seconds(owd_s[i])));
    NetDeviceContainer a = acc.Install(src.Get(i), routers.Get(0));
    big.Install(a);
    std::ostringstream b1; b1 << "10.1." << i << ".0";
    addr.SetBase(b1.str().c_str(), "255.255.255.0");
    addr.Assign(a);
    acc.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    NetDeviceContainer d = acc.Install(routers.Get(1), dst.Get(i));
    big.Install(d);
    std::ostringstream b2; b2 << "10.2." << i << ".0";
    addr.SetBase(b2.str().c_str(), "255.255.255.0");
    Ipv4InterfaceContainer di = addr.Assign(d);
    dst_addr.push_back(di.GetAddress(1));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  g_flows.resize(n);
  for (size_t i = 0; i < n; i++) {
    uint16_t port = 5001;
    PacketSinkHelper sinkh("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sa = sinkh.Install(dst.Get(i));
    sa.Start(Seconds(0));
    g_flows[i].sink = DynamicCast<PacketSink>(sa.Get(0));
    BulkSendHelper bs("ns3::TcpSocketFactory", InetSocketAddress(dst_addr[i], port));
    bs.SetAttribute("MaxBytes", UintegerValue(0));
    bs.SetAttribute("SendSize", UintegerValue(seg * 20));
    ApplicationContainer ba = bs.Install(src.Get(i));
    ba.Start(Seconds(starts[i]));
    g_flows[i].app = DynamicCast<BulkSendApplication>(ba.Get(0));
    Simulator::Schedule(Seconds(starts[i]) + NanoSeconds(1), &Hook, (int) i);
  }
  Simulator::Schedule(Seconds(interval), &Sample);
  Simulator::Stop(Seconds(stop) + NanoSeconds(1));
  Simulator::Run();
  Result r;
  QueueDisc::Stats st = g_bneck->GetStats();
  r.drops = st.nTotalDroppedPackets;
  r.marks = st.nTotalMarkedPackets;
  r.sent = st.nTotalSentPackets;
  Simulator::Destroy();
  g_bneck = nullptr;
  for (auto& f : g_flows) { f.sink = nullptr; f.app = nullptr; f.sock = nullptr; }
  return r;
}
}  // namespace racc_xc
"""

CC = {"cubic": "ns3::TcpCubic", "bbr": "ns3::TcpBbr", "dctcp": "ns3::TcpDctcp"}
_ns: Any = None


def available() -> str | None:
    """None if the ``ns3`` wheel can be imported here, else why not (one line)."""
    if importlib.util.find_spec("ns") is None:
        return "the ns3 Python package is not installed (pip install ns3; 3.44 measured)"
    return None


def version() -> str:
    try:
        from importlib.metadata import version as v

        return v("ns3")
    except Exception:  # noqa: BLE001 - a label only
        return "?"


def _load() -> Any:
    global _ns
    if _ns is None:
        from ns import ns  # slow: cppyy loads every ns-3 library

        ns.cppyy.cppdef(_PROGRAM)
        _ns = ns
    return _ns


@dataclass
class Ns3Run:
    """ns-3's samples for one case and seed, in the shapes ``baselines_measure`` reads."""

    time_s: list[float]
    flow: list[int]
    rx_bytes: list[float]
    cwnd_bytes: list[float]
    pacing_bps: list[float]
    retrans: list[float]
    queue_t: list[float]
    queue_pkts: list[float]
    drops: int
    marks: int
    sent: int


def run(case: Case, seed: int) -> Ns3Run:
    """Run ``case`` in ns-3 with ``seed``'s start times (``Case.starts``)."""
    ns = _load()
    g = ns.cppyy.gbl.racc_xc
    std = ns.cppyy.gbl.std
    owd = std.vector["double"]([r / 2e3 for r in case.rtts_ms])
    starts = std.vector["double"](case.starts(seed))
    r = g.Run(
        ns3_name(case.protocol),
        case.rate_mbps * 1e6,
        owd,
        starts,
        case.duration_s,
        case.interval_s(),
        case.buffer_pkts,
        case.k_pkts,
        PACKET - HEADERS,
        seed,
    )
    return Ns3Run(
        list(g.s_t),
        list(g.s_flow),
        list(g.s_rx),
        list(g.s_cwnd),
        list(g.s_pacing),
        list(g.s_retrans),
        list(g.q_t),
        list(g.q_pkts),
        int(r.drops),
        int(r.marks),
        int(r.sent),
    )


def ns3_name(protocol: str) -> str:
    return CC[protocol]

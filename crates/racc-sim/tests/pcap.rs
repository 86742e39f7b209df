//! `--pcap` in the simulator (issue 17 item 6): a capture of every port is a pcapng file that a
//! pcap library reads back, one interface per port named after it, with as many packets as the
//! port's counters say it sent, each one IPv4/UDP/racc headers that the wire layer parses into
//! the packet the port sent, at non-decreasing simulated times; capturing changes no result.

use pcap_file::pcapng::{Block, PcapNgReader};
use racc_proto::packet::{Direction, Kind};
use racc_proto::wire::datagram::{self, IpFields};
use racc_proto::wire::ip_packet::{host_addr, IP_UDP_LEN};
use racc_sim::scenario::from_toml;
use racc_sim::Simulator;

const SCENARIO: &str = r#"
name = "pcap"
duration = "2s"
seed = 3
packet_size = 1000
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { capacity = "10Mbps", delay = "10ms", buffer = "20pkts", router = "red", router_params = { action = "mark" } }
access = { capacity = "100Mbps", delay = "1ms" }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
count = 2
ecn = true
start_spread = "100ms"
"#;

fn sim() -> Simulator {
    Simulator::new(from_toml(SCENARIO, "pcap.toml").unwrap()).unwrap()
}

#[test]
fn a_capture_of_every_port_reads_back_with_the_ports_counts_and_headers() {
    let path = std::env::temp_dir().join(format!("racc-pcap-test-{}.pcapng", std::process::id()));
    let mut s = sim();
    s.capture(&path, None).unwrap();
    s.run();
    let (counts, err) = s.capture_status().unwrap();
    assert_eq!(err, None);
    let counts = counts.to_vec();
    let summary = s.port_summary();
    let hosts: Vec<[usize; 2]> = s.spec.flows.iter().map(|f| [f.src, f.dst]).collect();

    let mut r = PcapNgReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let mut names = Vec::new();
    let mut per_iface = vec![0u64; summary.len()];
    let mut last_t = vec![0u128; summary.len()];
    let (mut data_pkts, mut acks, mut ce, mut ect_data) = (0u64, 0u64, 0u64, 0u64);
    while let Some(b) = r.next_block() {
        match b.unwrap() {
            Block::InterfaceDescription(idb) => {
                let name = idb.options.iter().find_map(|o| match o {
                    pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption::IfName(n) => {
                        Some(n.to_string())
                    }
                    _ => None,
                });
                names.push(name.unwrap());
            }
            Block::EnhancedPacket(epb) => {
                let i = epb.interface_id as usize;
                per_iface[i] += 1;
                let t = epb.timestamp.as_nanos();
                assert!(t >= last_t[i], "interface {i}: time went back");
                last_t[i] = t;
                assert!(t <= 2_000_000_000);
                let d = &epb.data;
                // IPv4, no options, UDP, the original length its total length.
                assert_eq!((d[0], d[9]), (0x45, 17));
                assert_eq!(u16::from_be_bytes([d[2], d[3]]) as u32, epb.original_len);
                let (pkt, n) = datagram::parse(
                    &d[IP_UDP_LEN..],
                    IpFields { ecn: d[1] & 3, ip_id: u16::from_be_bytes([d[4], d[5]]) },
                )
                .unwrap();
                assert_eq!(d.len(), IP_UDP_LEN + n, "headers only are kept");
                // The shim carries the modelled size; the IP length is it, or the headers'.
                assert_eq!(epb.original_len as usize, racc_proto::wire::ip_packet::total_len(&pkt));
                // Addresses: the flow's hosts by node number, swapped on the return path.
                let (src, dst) = ([d[12], d[13], d[14], d[15]], [d[16], d[17], d[18], d[19]]);
                let [a, b] = hosts[pkt.flow as usize].map(host_addr);
                assert_eq!((src, dst), if pkt.dir == Direction::Forward { (a, b) } else { (b, a) });
                match pkt.kind {
                    Kind::Data => {
                        data_pkts += 1;
                        ect_data += (pkt.ecn != 0) as u64;
                    }
                    Kind::Ack => acks += 1,
                    _ => {}
                }
                ce += (pkt.ecn == 3) as u64;
            }
            _ => {}
        }
    }
    let _ = std::fs::remove_file(&path);
    assert_eq!(names, summary.iter().map(|p| p.name.clone()).collect::<Vec<_>>());
    for p in &summary {
        assert_eq!(per_iface[p.port], p.counters.tx_pkts, "{}", p.name);
        assert_eq!(counts[p.port], p.counters.tx_pkts, "{}", p.name);
    }
    println!("{} packets: {data_pkts} data, {acks} ACKs, {ce} CE-marked", per_iface.iter().sum::<u64>());
    assert!(data_pkts > 1000 && acks > 1000);
    // The ECN bits are the packet's: ECN-capable data (retransmissions are not ECT, RFC 3168
    // §6.1.5); what RED marked carries CE from there on.
    assert!(ect_data > data_pkts / 2, "{ect_data} of {data_pkts}");
    let marks = summary.iter().find(|p| p.name == "r0->r1").unwrap().counters.marks;
    assert!(ce >= marks, "marks {marks}, CE seen {ce}");
}

#[test]
fn capturing_changes_no_result() {
    let path = std::env::temp_dir().join(format!("racc-pcap-test2-{}.pcapng", std::process::id()));
    let mut a = sim();
    a.run();
    let mut b = sim();
    b.capture(&path, Some(&[4])).unwrap();
    b.run();
    let _ = std::fs::remove_file(&path);
    assert_eq!(a.goodput_bytes(), b.goodput_bytes());
    assert_eq!(a.port_series, b.port_series);
    assert_eq!(a.flow_series, b.flow_series);
    let counts = b.capture_status().unwrap().0.to_vec();
    assert_eq!(counts[4], b.port_summary()[4].counters.tx_pkts);
    assert_eq!(counts.iter().sum::<u64>(), counts[4]);
}

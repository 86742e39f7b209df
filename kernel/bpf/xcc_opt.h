/* The congestion header of XCC-Linux's framework as TCP options (docs/KERNEL-BPF.md, "The
 * congestion header"): racc-proto's `packet::CongHeader` shapes, on the wire as RFC 6994
 * experimental options (kind 253, a 16-bit ExID per shape, unregistered as RFC 6994 §4 allows).
 * The sender's sockops writes the forward header on data, the routers' tc programs rewrite its
 * feedback in place, the receiver's sockops echoes it on ACKs, the sender's sockops reads the echo
 * into socket storage for its controller. Fields big-endian, as every TCP field. */
#ifndef RACC_XCC_OPT_H
#define RACC_XCC_OPT_H

#define XCC_OPT_KIND 253

/* XCP forward header (racc `CongHeader::Xcp` less reverse_feedback): kind, len 16, ExID "xc",
 * H_rtt (µs, 0 before a sample), H_cwnd (wire bytes), H_feedback (Q8 wire bytes, signed;
 * XCC_FB_INF asks for as much as the routers allow). 16 bytes, a multiple of 4: no padding. */
#define XCP_OPT_EXID 0x7863
#define XCP_OPT_LEN 16
/* XCP echo on ACKs: kind, len 8, ExID "xe", reverse_feedback (Q8 bytes, signed: the sum over
 * the data an ACK covers, `HeaderEcho`; XCC_FB_INF when a packet of it met no XCP router). */
#define XCP_ECHO_EXID 0x7865
#define XCP_ECHO_LEN 8
/* "As much as allowed" (racc: +inf in the f32 feedback). */
#define XCC_FB_INF 0x7fffffff
/* Offset of H_feedback in the forward option: even, so the 32-bit field lies on 16-bit words of
 * the TCP checksum (bpf_l4_csum_replace's incremental update needs that). */
#define XCP_OPT_FB_OFF 12

struct xcp_opt {
	__u8 kind;
	__u8 len;
	__u16 exid;
	__u32 rtt_us;
	__u32 cwnd;
	__u32 feedback;
} __attribute__((packed));

struct xcp_echo_opt {
	__u8 kind;
	__u8 len;
	__u16 exid;
	__u32 feedback;
} __attribute__((packed));

/* RCP forward header (racc `CongHeader::Rcp`): kind, len 12, ExID "rp", rate (B/s of IP bytes;
 * RCP_NO_LIMIT asks for as much as the path allows, routers lower it to their R), H_rtt (µs).
 * 12 bytes, racc's RCP header size. */
#define RCP_OPT_EXID 0x7270
#define RCP_OPT_LEN 12
/* RCP echo on ACKs: kind, len 8, ExID "rq", the rate of the latest data packet (`HeaderEcho`). */
#define RCP_ECHO_EXID 0x7271
#define RCP_ECHO_LEN 8
#define RCP_OPT_RATE_OFF 4 /* even: on checksum words */
#define RCP_NO_LIMIT_ 0xffffffffU /* racc `rcp::NO_LIMIT` */

struct rcp_opt {
	__u8 kind;
	__u8 len;
	__u16 exid;
	__u32 rate;
	__u32 rtt_us;
} __attribute__((packed));

struct rcp_echo_opt {
	__u8 kind;
	__u8 len;
	__u16 exid;
	__u32 rate;
} __attribute__((packed));

/* JetMax forward header (racc `CongHeader::JetMax`, docs/PROTOCOLS.md §7): kind, len 20, ExID
 * "jm", H_rtt (µs), ipt (ns: the time this packet adds to its flow's announced presence),
 * cur_id (the router the sender names as its bottleneck, 0 none), fb_id (the router that set
 * the feedback, 0 none), feedback (B/s of IP bytes, JETMAX_NO_LIMIT for +inf). 20 bytes, racc's
 * JetMax header size. Routers rewrite the words at 12 (cur_id|fb_id) and 16 (feedback). */
#define JETMAX_OPT_EXID 0x6a6d
#define JETMAX_OPT_LEN 20
#define JETMAX_OPT_RW_OFF 12
#define JETMAX_NO_LIMIT 0xffffffffU
/* JetMax echo on ACKs: kind, len 12, ExID "jn", fb_id, 2 bytes zero, feedback of the latest data
 * packet (`HeaderEcho`). */
#define JETMAX_ECHO_EXID 0x6a6e
#define JETMAX_ECHO_LEN 12

struct jetmax_opt {
	__u8 kind;
	__u8 len;
	__u16 exid;
	__u32 rtt_us;
	__u32 ipt_ns;
	__u16 cur_id;
	__u16 fb_id;
	__u32 feedback;
} __attribute__((packed));

struct jetmax_echo_opt {
	__u8 kind;
	__u8 len;
	__u16 exid;
	__u16 fb_id;
	__u16 zero;
	__u32 feedback;
} __attribute__((packed));

/* The congestion-header routers' counters (a per-CPU array, summed by the loader; each
 * protocol's names in racc.kernel.xcc, in this order). */
enum xcc_router_counter {
	XRC_PACKETS,
	XRC_BYTES, /* IP bytes */
	XRC_DATA, /* packets with a valid forward header */
	XRC_WRITTEN, /* feedback lowered in place */
	XRC_NO_RTT, /* H_rtt = 0 (XCP: no share) */
	XRC_MALFORMED, /* our kind and ExID, a wrong length, or fields no sender writes */
	XRC_INTERVALS, /* control intervals closed */
	XRC_CSUM_FAIL, /* a rewrite refused by the helpers */
	XRC_GSO, /* GSO packets passed untouched (their bytes counted) */
	XRC_MAX,
};

/* The congestion-header hosts' counters (each protocol's names in racc.kernel.xcc). */
enum xcc_host_counter {
	XHC_ACKS, /* controller calls per ACK */
	XHC_APPLIED, /* echoes that reached the window or the rate */
	XHC_UNROUTED, /* echoes of "no limit": no router of the protocol on the path, nothing changes */
	XHC_ECHO_MALFORMED, /* our kind and echo ExID, wrong length: ignored */
	XHC_DATA_MALFORMED, /* receiver: a forward header of the wrong length: ignored */
	XHC_HDR_WRITTEN, /* sender: forward headers written */
	XHC_ECHO_WRITTEN, /* receiver: echoes written */
	XHC_ECHO_PARSED, /* sender: echoes read */
	XHC_LOSS, /* ssthresh calls */
	XHC_MAX,
};

#endif

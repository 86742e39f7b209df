/* What the DPCP/TPCP objects and their loader share: counter slots (the loader gets their
 * names from python/racc/kernel/bpf.py, in this order). The echo option is VCP's (common.h). */
#ifndef RACC_DPCP_COMMON_H
#define RACC_DPCP_COMMON_H

enum dpcp_router_counter {
	DRC_PACKETS, /* packets and bytes first: router_maps.h meters into slots 0 and 1 */
	DRC_BYTES,
	DRC_MARKED, /* ECN bits changed by Alg. 2 */
	DRC_LOWERED, /* of those: a digit lowered (the MSP rose, MPCP §3.3) */
	DRC_MSP, /* ECT data packets at position 0 */
	DRC_LATER, /* ECT data packets at a later position */
	DRC_OVER, /* ECT data packets leaving in a chain this port rates overloaded (MSP 11) */
	DRC_NOT_ECT, /* IPv4 packets left alone: Not-ECT */
	DRC_GSO, /* data skbs of several segments: one position for all (should stay 0) */
	DRC_FLOWS_EVICTED, /* a flow's flag reset after evict_after idle */
	DRC_MAX,
};

enum dpcp_host_counter {
	DHC_ACKS, /* new ACKs the controller saw */
	DHC_GROW, /* of those: MI/AI by the level (Table 1's low and high zones) */
	DHC_AI, /* AI for one RTT after the hold */
	DHC_MD, /* an MD or a refinement set the window */
	DHC_HELD, /* overload within the hold */
	DHC_BLEACHED, /* code 00 echoed */
	DHC_ECHO_ABSENT, /* a new ACK without a valid echo for it: window unchanged */
	DHC_ECHO_MALFORMED, /* our kind and ExID with a wrong length, position or spare bits: ignored */
	DHC_ECHO_WRITTEN, /* receiver side: options written */
	DHC_DATA_CODED, /* receiver side: data segments arriving with a non-zero code */
	DHC_SENT_ECT1, /* sender side: data packets given 01 */
	DHC_LOSS, /* ssthresh calls: TCP's halving */
	DHC_EXCEPTIONS, /* the decoder's exceptions (MPCP §3.4) */
	DHC_FALLBACKS, /* switches to VCP mode */
	DHC_RESUMES,
	DHC_REFINEMENTS, /* an MD refined by a later digit */
	DHC_ECHO_LSP, /* echoes of a later position */
	DHC_CONGESTION_LOSSES, /* DCP-EW: a fast retransmit with CF set */
	DHC_ERROR_LOSSES, /* DCP-EW: CF clear, cwnd kept */
	DHC_LOSS_MDS, /* DCP-EW: a congestion loss that cut the window */
	DHC_MAX,
};

#endif

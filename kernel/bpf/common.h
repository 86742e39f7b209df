/* What the BPF objects and their loader share: counter slots and the echo option's format. */
#ifndef RACC_BPF_COMMON_H
#define RACC_BPF_COMMON_H

/* The echo option (docs/KERNEL-BPF.md): RFC 6994 experimental kind 253 with a 16-bit ExID,
 * then one byte, the code: kind, length 5, ExID, code (8 bytes on the wire with padding). */
#define ECHO_OPT_KIND 253
#define ECHO_OPT_LEN 5
#define ECHO_OPT_EXID 0x7263 /* "rc", unregistered (RFC 6994 §4 allows experiments without one) */

/* The router's counters (a per-CPU array, summed by the loader). */
enum router_counter {
	RC_PACKETS, /* packets and bytes first: router_maps.h meters into slots 0 and 1 */
	RC_BYTES,
	RC_MARKED, /* a code raised */
	RC_CODES_LOW, /* packets leaving with 01, 10, 11 */
	RC_CODES_HIGH,
	RC_CODES_OVERLOAD,
	RC_NOT_ECT, /* IPv4 packets left alone: Not-ECT */
	RC_MAX,
};

/* The hosts' counters. */
enum host_counter {
	HC_ACKS, /* new ACKs the controller saw */
	HC_MI, /* of those: the law applied by code */
	HC_AI,
	HC_MD, /* multiplicative decreases (A5) */
	HC_HELD, /* code 11 within an MD hold */
	HC_BLEACHED, /* code 00 echoed */
	HC_ECHO_ABSENT, /* a new ACK without a valid echo for it: window unchanged */
	HC_ECHO_MALFORMED, /* our kind and ExID with a wrong length or a code > 3: ignored */
	HC_ECHO_WRITTEN, /* receiver side: options written */
	HC_DATA_CODED, /* receiver side: data packets arriving with a non-zero code */
	HC_SENT_ECT1, /* sender side: data packets given 01 */
	HC_LOSS, /* ssthresh calls (loss or ECN-Echo): TCP's halving */
	HC_MAX,
};

#endif

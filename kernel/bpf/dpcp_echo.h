/* The DPCP/TPCP receiver's echo (MPCP §3.2, §3.3), the kernel twin of racc-proto's
 * `dpcp/echo.rs` (`DpcpEcho::on_data`, `take`): it reassembles the chains that arrive and
 * echoes one (code, position) per ACK, walking one chain at a time so that delayed ACKs still
 * give the sender whole chains in sequence. Also the position rule of the kernel path and the
 * echo byte. docs/KERNEL-BPF.md ("DPCP and TPCP").
 *
 * Position on kernel TCP [kernel]: a data segment's place in its chain is its index in the
 * sequence space, ⌊seq / len⌋ mod n, len its payload length. Consecutive full segments of a
 * flow (seq = s0 + k·len) get consecutive positions, a retransmission its original one, and
 * the router and the receiver compute it from the packet alone, as MPCP §3.2's seq/ack order
 * is read from the packet alone. Kernel TCP owns seq and ack, so Alg. 1's swap cannot be
 * imposed; a short segment (or the 2^32 wrap) only breaks one chain, an exception the decoder
 * counts (MPCP §3.4). */
#ifndef RACC_DPCP_ECHO_H
#define RACC_DPCP_ECHO_H

#ifndef RACC_INLINE
#define RACC_INLINE static inline __attribute__((always_inline))
#endif

#define DPCP_ECHO_MAX 3

/* The echo byte in the option (kind 253, ExID, one byte; common.h): bits 0–1 the code, bits
 * 2–3 the position (racc's reserved-bit echo carries the same, `DpcpEcho::fill_ack`). */
#define DPCP_ECHO_BYTE(code, pos) ((__u8)(((code) & 3) | (((pos) & 3) << 2)))

RACC_INLINE __u32 dpcp_position(__u32 seq, __u32 len, __u32 n)
{
	return len && n ? (seq / len) % n : 0;
}

struct dpcp_echo {
	__u8 n;
	__u8 last_code; /* the last data packet: its code and position */
	__u8 last_pos;
	__u8 newest_len; /* the newest chain, contiguous from its MSP */
	__u8 newest[DPCP_ECHO_MAX];
	__u8 newest_echoed;
	__u8 echoing_len; /* the chain being echoed */
	__u8 echoing[DPCP_ECHO_MAX];
	__u8 tracking; /* echoing follows newest as it grows */
	__u8 next; /* the position the sender expects next */
	__u8 msp_max; /* the largest MSP code since the last ACK */
};

RACC_INLINE void dpcp_echo_init(struct dpcp_echo *e, __u32 n)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->n = n;
}

/* `DpcpEcho::on_data`: a data packet of code `code` at position `pos` arrived. */
RACC_INLINE void dpcp_echo_on_data(struct dpcp_echo *e, __u32 code, __u32 pos)
{
	e->last_code = code;
	e->last_pos = pos;
	if (pos == 0) {
		e->newest[0] = code;
		e->newest_len = 1;
		e->newest_echoed = 0;
		e->tracking = 0;
		if (code > e->msp_max)
			e->msp_max = code;
	} else if (e->newest_len > 0 && e->newest_len == pos && pos < DPCP_ECHO_MAX) {
		e->newest[pos] = code;
		e->newest_len++;
		if (e->tracking) {
			e->echoing_len = e->newest_len;
			e->echoing[0] = e->newest[0];
			e->echoing[1] = e->newest[1];
			e->echoing[2] = e->newest[2];
		}
	} else {
		e->newest_len = 0;
		e->tracking = 0;
	}
}

/* `DpcpEcho::take`: the (code, position) this ACK echoes, as DPCP_ECHO_BYTE. */
RACC_INLINE __u8 dpcp_echo_take(struct dpcp_echo *e)
{
	__u32 code, pos, n = e->n ? e->n : 2;

	if (e->next != 0 && e->echoing_len > e->next && e->next < DPCP_ECHO_MAX) {
		/* 1: the next position of the chain being echoed */
		code = e->echoing[e->next];
		pos = e->next;
	} else if (e->newest_len > 0 && !e->newest_echoed) {
		/* 2: the newest chain's MSP, raised to the largest MSP since the last ACK */
		code = e->newest[0] > e->msp_max ? e->newest[0] : e->msp_max;
		pos = 0;
		e->echoing_len = e->newest_len;
		e->echoing[0] = e->newest[0];
		e->echoing[1] = e->newest[1];
		e->echoing[2] = e->newest[2];
		e->tracking = 1;
		e->newest_echoed = 1;
	} else {
		/* 3: the last packet */
		code = e->last_code;
		pos = e->last_pos;
		e->echoing_len = 0;
		e->tracking = 0;
	}
	e->next = (pos + 1) % n;
	e->msp_max = 0;
	return DPCP_ECHO_BYTE(code, pos);
}

#endif

// SPDX-License-Identifier: GPL-2.0
/* TCP/DCP-EW's end hosts (DCP-EW §III): DPCP's programs (dpcp_host.bpf.c) registered as
 * `racc_dcpew`, pairs told apart by the IP ID's LSB (Linux gives a connected TCP socket's
 * segments consecutive IDs, the "incrementing" source of DCP-EW §III.B, read passively) and
 * the loss differentiation of DCP-EW §III.D in `ssthresh` (dcpew_law.h). */
#define RACC_CC racc_dcpew
#define RACC_DCPEW 1
#include "dpcp_host.bpf.c"

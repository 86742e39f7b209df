// SPDX-License-Identifier: GPL-2.0
/* TCP/TPCP's end hosts (MPCP §5): DPCP's programs (dpcp_host.bpf.c) registered as `racc_tpcp`;
 * the chain length, 3, comes with the configuration. */
#define RACC_CC racc_tpcp
#include "dpcp_host.bpf.c"

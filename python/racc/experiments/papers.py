"""The papers racc reproduces, by the short key used in experiment sources ("MPCP §4.1") and
throughout racc (docs/PROTOCOLS.md lists them with the equations racc takes from each)."""

from __future__ import annotations

PAPERS = {
    "MPCP": "MPCP: Multi Packet Congestion-control Protocol (Li, Yousefi'zadeh, CCR 2009)",
    "VCP-DCCP": "Performance Analysis of VCP Controller on DCCP Traffic (Chen, Yang, Hong)",
    "QFCP": "QFCP: Quick Flow Control Protocol",
    "DCP-EW": "DCP-EW: Distributed Congestion-control Protocol for Encrypted Wireless Networks (Li, Yousefi'zadeh)",
    "XCC-Linux": "Explicit Congestion Control in one Linux framework (slides: XCP, JetMax, RCP, PIQI-RCP)",
}


def title(source: str) -> str:
    """The title of the paper an experiment's ``source`` ("MPCP §4.1 (Fig. 2)") names, or ""."""
    key = source.split(" ", 1)[0]
    return PAPERS.get(key, "")

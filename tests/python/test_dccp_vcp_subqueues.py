"""dccp-vcp-subqueues (VCP-DCCP §4.4) at reduced scale: DCCP/VCP and TCP/RED flows through the
`vcp-red` router's two sub-queues. Each claim of the two sub-queue cases is asserted; the
one-queue comparison's claim keeps its cause."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import needs_core

pytestmark = needs_core


@pytest.fixture(scope="module")
def rep(quick_reproduction):
    return quick_reproduction("dccp-vcp-subqueues")


SUB_QUEUE_CLAIMS = [
    "subqueues: VCP traffic's rate (A1 on its share)",
    "subqueues: TCP traffic's rate (RED on its share)",
    "subqueues: VCP's sub-queue is smaller than RED's",
    "subqueues: no VCP drop after start-up",
    "subqueues: RED regulates TCP by loss",
    "share-0.3: VCP traffic's rate (A1 on its share)",
    "share-0.3: TCP traffic's rate (RED on its share)",
]


@pytest.mark.parametrize("claim", SUB_QUEUE_CLAIMS)
def test_sub_queue_claim_holds(rep, claim):
    hits = [c for c in rep.claims if c.claim == claim]
    assert len(hits) == 1, [c.claim for c in rep.claims]
    assert hits[0].verdict == "consistent", hits[0]


def test_each_sub_queue_is_classed_and_split_by_its_share(rep):
    """Every TCP byte goes through RED's sub-queue and DCCP/VCP's data through VCP's (the module's
    books against the per-group counts of the same port); the DCCP/VCP bytes in RED's sub-queue are
    its senders' acks of ACKs (Not-ECT, DCCP's own), under 2 % of them. The split follows the
    weight: VCP's share of the link is below the 0.5 case's with 0.3."""
    rates = {}
    for case in ("subqueues", "share-0.3"):
        res = rep.results[case]
        links = res.links.filter(pl.col("name") == "r0->r1")
        groups = res.group_links.filter(pl.col("name") == "r0->r1").group_by("group").agg(pl.col("tx_bytes").sum())
        by = dict(zip(groups["group"].cast(pl.Utf8), groups["tx_bytes"]))
        vcp_q, red_q = int(links["vcp_tx_bytes"].max()), int(links["red_tx_bytes"].max())
        assert vcp_q + red_q == by["vcp"] + by["tcp"], case
        assert 0 <= by["vcp"] - vcp_q < 0.02 * by["vcp"], (case, vcp_q, by)
        rates[case] = by["vcp"] / (by["vcp"] + by["tcp"])
    assert rates["share-0.3"] < rates["subqueues"] - 0.1, rates


def test_the_shared_queue_claim_differs_with_its_cause(rep):
    c = next(c for c in rep.claims if c.claim == "VCP and TCP/RED cannot share one queue")
    if c.verdict == "differs":
        assert c.cause is not None and c.cause.kind == "racc" and "one-queue" in c.cause.evidence
    shared = next(c for c in rep.claims if c.claim == "one-queue: the queue VCP shares with TCP")
    assert shared.verdict == "measured"

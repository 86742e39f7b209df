"""Cross-checks of racc against another simulator: ``racc crosscheck ns2 SCENARIO``.

The seeds' results come from ns-2 (and Linux); where racc and ns-2.35 model the same thing they
should agree. This package writes racc's resolved scenario as an ns-2 script (``tcl``), runs
``ns`` (``ns``), reads ns-2's own counters back into racc's table shapes (``counters``), runs racc
on the same seeds and compares the two over a window (``compare``), then prints and saves the
table (``report``, ``save``); ``run`` drives it, ``support`` refuses what ns-2 cannot express
(racc's load-factor routers vcp/dpcp/tpcp/dcpew, their protocols, XCP settings that ns-2.35
compiles in otherwise, Gilbert-Elliott loss, IPsec tunnels, Eifel undo, the Linux RTO rule,
routes ns-2 would choose differently), naming each part by its scenario key before anything
runs. ns-2.35 is the Debian/Ubuntu package ``ns2``; nothing else in racc needs it.

Matching pitfalls, and what the script does about each (racc key -> ns-2 variable):

* ``packet_size`` is the wire size in racc; ns-2's ``packetSize_`` is the payload, to which it
  adds ``tcpip_base_hdr_size_`` (40): packetSize_ = packet_size - 40. ACKs and SYNs are 40 bytes
  on both sides. A finite flow sends ceil(size / packetSize_) full packets in ns-2.
* Buffers: ns-2's DropTail refuses an arrival when length + 1 >= ``queue-limit``, so it holds
  limit - 1 waiting packets; racc's buffer counts waiting packets: queue-limit = buffer + 1.
  RED checks the limit before it enqueues and holds ``queue-limit`` packets: queue-limit = buffer.
  Byte buffers: DropTail with ``queue_in_bytes_`` and ``mean_pktsize_`` 1, limit = bytes + 1.
  ``1bdp`` buffers are resolved by racc's engine first (its ``port_info``).
* RED: ``thresh_``/``maxthresh_``/``q_weight_`` = min_th/max_th/w_q, ``linterm_`` = 1/max_p
  (ns-2's defaults 0/0/-1 auto-configure other values); ``wait_`` false (racc uses Floyd &
  Jacobson's count; ns-2's default ``wait_`` spaces drops further); ``gentle_`` as racc;
  ``bytes_`` and ``queue_in_bytes_`` false in packet mode (ns-2's defaults are byte mode);
  ``mean_pktsize_`` = racc's mean packet size (ns-2's 500 would change the idle decay);
  marking: ``setbit_`` true with ``mark_p_`` 2 so every selected ECT packet is marked, as racc
  does (ns-2's ``mark_p_`` 0.1 drops instead once p reaches it).
* ``syn_`` = handshake (a 40-byte SYN first; with ``delay_growth_`` the window is 1 until its
  ACK, then ``windowInit_``); ``windowInit_`` = racc's IW in packets (initial_window, else
  RFC 5681 by SMSS; ns-2's default is 2); ``initial_ssthresh`` is set after the agent's reset,
  which otherwise sets ``ssthresh_`` = ``window_``.
* ``window_`` is the receiver's advertised window (default 20 packets), which racc does not
  have: it is made 10^6 packets so that it never binds.
* RTO: ``minrto_`` = min_rto with ``rfc2988_``; ``rtxcur_init_`` = initial_rto (ns-2's default
  is 3 s); ``maxrto_`` = max_rto; ``tcpTick_`` = clock_granularity (ns-2's default 10 ms rounds
  every RTT sample to 10 ms); ``timestamps_`` true with ``ts_option_size_`` 0 so that every ACK
  gives an RTT sample, as racc's echoed timestamps do, without adding 10 bytes to each packet.
  (XCP agents turn ``timestamps_`` on by default and would add it too.)
* NewReno: ``exit_recovery_fix_`` 1 (a full ACK sets cwnd = min(ssthresh, flight + 1), RFC
  6582's option (1) that racc implements; ns-2's default 0 sets cwnd = ssthresh);
  ``partial_window_deflation_`` 1; ``newreno_changes1_`` = partial_ack_timer ("first": 1);
  ``singledup_`` = limited_transmit; ``numdupacks_`` = dupthresh.
* XCP (racc's "xcp" flows and router module): ``Agent/TCP/Reno/XCP`` with
  ``Agent/TCPSink/XCPSink`` over ``Queue/XCP``. ns-2.35 defines ``XCP_HDR_LEN`` 20 but never
  adds it to a packet; racc's XCP packets carry 20 header bytes on top of IPv4 + TCP, so XCP
  groups get ``tcpip_base_hdr_size_`` 60 and ``packetSize_`` = packet_size - 60 (racc's XCP
  MSS), and XCPSink's ACKs are 60 bytes: the routers see racc's wire sizes (the SYN is 60 in
  ns-2, 40 in racc). ``windowInit_`` = initial_window, else 1 (racc's XCP start). Queue/XCP
  wraps a DropTail-based XCP queue (``vq_(0)``, limit = buffer + 1 as DropTail, or bytes) and
  two RED queues for non-XCP packets, served round-robin, so non-XCP flows through an XCP port
  are refused; the controllers' capacity is not read from the link: ``set-link-capacity``.
  The QueueMonitor sits on the link around the wrapper, which passes the link's drop head to
  its inner queues, so arrivals, departures and drops are all counted. α, β, γ and the first
  control interval are compiled into ns-2 (0.4, 0.226, 0.1, 50 ms): other values are refused,
  and so are racc's ``xcp_budget = "granted"`` (ns-2 bills as ``"ns235"``), ``desired_rate``,
  SACK, delayed ACKs and ECN for XCP flows. Known ns-2.35 differences that remain: its
  persistent queue is the minimum of ``byteLength()`` taken *before* each dequeue, so it counts
  the departing packet and reads one packet while nothing waits, which holds utilisation about
  β·s/(α·d·C) below racc's; it converts feedback to packets by the payload size
  (``cwnd_ += fb·srtt/packetSize_``; racc by the wire size), 6 % more per feedback at 1000
  bytes; with no RTT sample yet in an interval it divides the positive budget by 1 s
  (``sum_inv_throughput_ = 1``), so a flow's first packet gets a share one RTT before racc's
  does; loss recovery is Reno's, not NewReno's (only matters when XCP loses packets).
* Delayed ACKs: ``Agent/TCPSink/DelAck`` (100 ms, racc's timer); SACK: ``Agent/TCP/Sack1``
  with ``Agent/TCPSink/Sack1`` (ns-2's own SACK recovery, not RFC 6675); ECN: ``ecn_`` 1.
* Bernoulli loss: an ``ErrorModel`` per packet after the link (lost packets still take the
  link), with its own drop target so that losses are not counted as queue drops.
* Randomness: ns-2 gets racc's start times and flow sizes; RED's and the loss model's draws come
  from ns-2's own generator, seeded with racc's seed + 1.
* ns-2 is given racc's sample times: it writes QueueMonitor counters (arrivals, departures,
  drops, CE-marked departures, the queue integral) and each running agent's ``ack_``,
  ``nrexmitpack_``, ``nrexmit_``, ``cwnd_``, ``srtt_`` at each, so no packet trace is needed.
"""

from __future__ import annotations

__all__ = ["crosscheck_ns2"]


def crosscheck_ns2(*args, **kwargs):
    """See :func:`racc.crosscheck.run.crosscheck_ns2`."""
    from racc.crosscheck.run import crosscheck_ns2 as _run

    return _run(*args, **kwargs)

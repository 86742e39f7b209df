"""ns-2 cross-check of racc's shared medium (``topology.media``, docs/SIMULATOR.md "Shared
media") on a WLAN scenario: ``tcl`` writes the scenario as an ns-2.35 wired-cum-wireless script
over Mac/802_11, ``run`` runs it and racc on the same scenario and compares each direction's
throughput and the 1 s Jain's index. ns-2.35 is the Debian package ``ns2``.
"""

"""Paper experiments: ``racc reproduce NAME`` (see :mod:`racc.experiments.base`), one module per
experiment, named after it."""

from racc.experiments import (  # noqa: F401  (register their experiments)
    dccp_vcp_subqueues,
    dccp_vcp_t3,
    dcpew_dumbbell_loss,
    dcpew_ipsec,
    dcpew_parking_lot,
    mpcp_dumbbell,
    mpcp_loss_sweep,
    mpcp_parking_lot,
    mpcp_queue,
    mpcp_vcp_scenarios,
    qfcp_fct,
    qfcp_lossy,
    qfcp_wlan_fairness,
    xcc_abrupt,
    xcc_mice,
    xcc_multilink,
    xcc_rtt,
    xcc_scalability,
    xcc_single,
    xcc_xcp_maxmin,
    xcp_maxmin_n,
)
from racc.experiments.base import Case, Claim, Experiment, Reproduction, get, names, reproduce

__all__ = ["Case", "Claim", "Experiment", "Reproduction", "get", "names", "reproduce"]

"""Paper experiments: ``racc reproduce NAME`` (see :mod:`racc.experiments.base`)."""

from racc.experiments import dccp_vcp, dcpew, mpcp  # noqa: F401  (register their experiments)
from racc.experiments.base import Case, Claim, Experiment, Reproduction, get, names, reproduce

__all__ = ["Case", "Claim", "Experiment", "Reproduction", "get", "names", "reproduce"]

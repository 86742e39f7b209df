//! What a checked scenario's settings cannot do: warnings told to the user before the run (the
//! scenario is valid, but a setting in it provably does nothing), and the settings router
//! modules derive from their ports (RED's automatic thresholds), for the run's summary.

use crate::plan::{link_port_plans, PortPlan};
use crate::scenario::buffers::port_rtts;
use crate::scenario::spec::Spec;
use crate::scenario::ScenarioError;
use racc_proto::loss::LossSpec;

/// A warning about one scenario key.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioWarning {
    /// The scenario key the warning is about (`topology.bottleneck.router_params`).
    pub key: String,
    pub reason: String,
}

/// The settings one port's router module derived from the port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortSettings {
    pub port: String,
    pub settings: Vec<(&'static str, f64)>,
}

/// The warnings of a checked scenario, in scenario order: router settings no port can act on,
/// losses that leave nothing to measure. (A sample interval longer than the run, or a flow
/// starting after its end, is refused by the check itself.)
pub fn warnings(spec: &Spec) -> Result<Vec<ScenarioWarning>, ScenarioError> {
    let mut out = Vec::new();
    each_port(spec, |plan, _p, name, identity| {
        for reason in plan.router_factory.warnings(identity) {
            out.push(ScenarioWarning { key: format!("{}.router_params", plan.key), reason });
        }
        if matches!(plan.loss, LossSpec::Bernoulli { p } if *p >= 1.0) {
            out.push(ScenarioWarning {
                key: format!("{}.loss", plan.key),
                reason: format!("every packet leaving port {name} is lost: nothing crosses it to be measured"),
            });
        }
    })?;
    Ok(out)
}

/// The settings each port's router module derives from its port, where it derives any.
pub fn port_settings(spec: &Spec) -> Result<Vec<PortSettings>, ScenarioError> {
    let mut out = Vec::new();
    each_port(spec, |plan, _p, name, identity| {
        let settings = plan.router_factory.settings(identity);
        if !settings.is_empty() {
            out.push(PortSettings { port: name.to_string(), settings });
        }
    })?;
    Ok(out)
}

/// Calls `f` with every link port's plan, number, name and identity (buffer limits resolved).
fn each_port(
    spec: &Spec,
    mut f: impl FnMut(&PortPlan<'_>, usize, &str, &racc_proto::registry::PortIdentity<'_>),
) -> Result<(), ScenarioError> {
    let (rtt_sum, rtt_n) = port_rtts(spec);
    for (p, name, plan) in link_port_plans(spec) {
        let limits = plan.limits(spec, p, &name, &rtt_sum, &rtt_n)?;
        f(&plan, p, &name, &plan.identity(spec, p, &name, limits));
    }
    Ok(())
}

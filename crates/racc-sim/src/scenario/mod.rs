//! Scenario files: parsing (serde, with the failing key's path), checking, and resolution
//! into the [`Spec`] the engine runs. Every error names the file, the key and the reason,
//! and is raised before anything runs.

pub(crate) mod buffers;
mod build;
mod consistency;
mod ctx;
mod error;
pub mod estimate;
pub mod fat_tree;
mod flows;
mod host_options;
pub mod limits;
mod links;
mod media;
pub mod raw;
mod record;
mod routes;
mod sizes;
pub mod spec;
mod topology;
mod trace;
mod tunnels;
pub mod units;
mod web;

pub use error::ScenarioError;
use racc_proto::registry::Registry;
pub use spec::{
    BufferSpec, DcfSpec, FlowSpec, LinkSpec, MediumSpec, NodeSpec, PortKind, PortMap, RouterScope, SourceSpec, Spec,
    TunnelSpec,
};

/// Parse and check a scenario written in TOML, with the standard protocols.
pub fn from_toml(text: &str, source: &str) -> Result<Spec, ScenarioError> {
    from_toml_with(text, source, Registry::standard())
}

/// Parse and check a scenario written in TOML, with the protocols of `registry`.
pub fn from_toml_with(text: &str, source: &str, registry: &Registry) -> Result<Spec, ScenarioError> {
    let de = toml::Deserializer::parse(text).map_err(|e| ScenarioError {
        source: source.into(),
        key: String::new(),
        reason: format!("not valid TOML{}: {}", line_of(text, e.span()), e.message().trim()),
    })?;
    let raw = serde_path_to_error::deserialize(de).map_err(|e| {
        let key = key_of(e.path());
        let inner = e.into_inner();
        let reason = format!("{}{}", inner.message().trim(), line_of(text, inner.span()));
        missing_field_key(ScenarioError { source: source.into(), key, reason })
    })?;
    build::build(raw, source, registry)
}

/// Check a scenario already in its raw form (built in code rather than read from a file), with
/// the standard protocols: the same checks as a file gets, without a parser.
pub fn from_raw(raw: raw::RawScenario, source: &str) -> Result<Spec, ScenarioError> {
    build::build(raw, source, Registry::standard())
}

/// " (line N)" for a byte span of `text`, or "" when the parser gave none.
fn line_of(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(r) => format!(" (line {})", text[..r.start.min(text.len())].matches('\n').count() + 1),
        None => String::new(),
    }
}

/// Parse and check a scenario given as JSON (the Python front end parses TOML itself so
/// that it can apply `--set` overrides, then hands the tree over as JSON).
pub fn from_json(text: &str, source: &str) -> Result<Spec, ScenarioError> {
    from_json_with(text, source, Registry::standard())
}

/// Parse and check a scenario given as JSON, with the protocols of `registry`.
pub fn from_json_with(text: &str, source: &str, registry: &Registry) -> Result<Spec, ScenarioError> {
    from_json_parts(text, source, registry, Vec::new())
}

/// Parse and check a scenario given as JSON whose trace entries' rows come separately, as
/// `(traffic index, rows)` (the front end reads trace files into columns and hands them over
/// as they are, rather than as JSON numbers).
pub fn from_json_parts(
    text: &str,
    source: &str,
    registry: &Registry,
    arrivals: Vec<(usize, raw::RawArrivals)>,
) -> Result<Spec, ScenarioError> {
    let mut raw = parse_json(text, source)?;
    for (i, a) in arrivals {
        let t = raw.traffic.get_mut(i).ok_or_else(|| ScenarioError {
            source: source.into(),
            key: format!("traffic[{i}].arrivals"),
            reason: "no such traffic entry".into(),
        })?;
        if t.arrivals.is_some() {
            return Err(ScenarioError {
                source: source.into(),
                key: format!("traffic[{i}].arrivals"),
                reason: "given twice (in the scenario and from its file)".into(),
            });
        }
        t.arrivals = Some(a);
    }
    build::build(raw, source, registry)
}

fn parse_json(text: &str, source: &str) -> Result<raw::RawScenario, ScenarioError> {
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let key = key_of(e.path());
        let mut reason = e.into_inner().to_string();
        // serde_json appends " at line X column Y" of the converted text, not of the
        // user's file: the key path is the useful location.
        if let Some(i) = reason.find(" at line ") {
            reason.truncate(i);
        }
        missing_field_key(ScenarioError { source: source.into(), key, reason })
    })
}

/// serde reports a missing field at its parent table; name the field itself as the key.
fn missing_field_key(mut e: ScenarioError) -> ScenarioError {
    if let Some(rest) = e.reason.strip_prefix("missing field `") {
        if let Some(end) = rest.find('`') {
            let field = &rest[..end];
            e.key = if e.key.is_empty() { field.to_string() } else { format!("{}.{field}", e.key) };
            e.reason = format!("missing: `{field}` is required{}", &rest[end + 1..]);
        }
    }
    e
}

fn key_of(path: &serde_path_to_error::Path) -> String {
    let p = path.to_string();
    if p == "." {
        String::new()
    } else {
        p
    }
}

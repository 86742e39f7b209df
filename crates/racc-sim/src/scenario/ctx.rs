//! What every step of checking a scenario needs (`build.rs`).

use super::error::ScenarioError;
use racc_proto::registry::Registry;

/// What every step needs: the file the errors name, and the registry that knows the protocols
/// and router modules.
pub(super) struct Ctx<'a> {
    pub(super) source: &'a str,
    pub(super) registry: &'a Registry,
}

impl Ctx<'_> {
    pub(super) fn err(&self, key: impl Into<String>, reason: impl Into<String>) -> ScenarioError {
        ScenarioError { source: self.source.into(), key: key.into(), reason: reason.into() }
    }
}

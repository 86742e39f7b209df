//! The one error a scenario is refused with.

/// A refused scenario: `source` is the file (or "<string>"), `key` the dotted path of the
/// offending setting (empty when the file as a whole is wrong).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub source: String,
    pub key: String,
    pub reason: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.source, self.reason)
        } else {
            write!(f, "{}: key `{}`: {}", self.source, self.key, self.reason)
        }
    }
}

impl std::error::Error for ScenarioError {}

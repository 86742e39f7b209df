//! Protocol and router-module parameters arrive as a JSON-like table (from a scenario's TOML)
//! and are deserialised into each component's own typed struct. Unknown keys and wrong types
//! are refused with the key's path, so the scenario layer can name the key in its error.

use serde::de::DeserializeOwned;

/// A parameter that could not be accepted: `key` is its dotted path inside the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    pub key: String,
    pub reason: String,
}

impl ParamError {
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> ParamError {
        ParamError { key: key.into(), reason: reason.into() }
    }
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "{}: {}", self.key, self.reason)
        }
    }
}

impl std::error::Error for ParamError {}

/// Deserialise a parameter table into `T` (which should use `#[serde(deny_unknown_fields)]`
/// and `#[serde(default)]`). A missing table (`Null`) gives the defaults.
pub fn parse<T: DeserializeOwned + Default>(v: &serde_json::Value) -> Result<T, ParamError> {
    if v.is_null() {
        return Ok(T::default());
    }
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let key = if path == "." { String::new() } else { path };
        ParamError::new(key, e.into_inner().to_string())
    })
}

/// Refuse a value that must be finite and strictly positive.
pub fn positive(key: &str, v: f64) -> Result<(), ParamError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ParamError::new(key, format!("must be a finite number > 0, got {v}")))
    }
}

/// Refuse a probability outside [0, 1].
pub fn probability(key: &str, v: f64) -> Result<(), ParamError> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(ParamError::new(key, format!("must be a probability in [0, 1], got {v}")))
    }
}

/// Declares a `params` table that holds a shared sub-table's fields at its top level, followed
/// by the table's own fields, each with its default. serde cannot `flatten` a sub-table into a
/// table that refuses unknown keys, so the shared fields are written into each table here, once;
/// they default as `$shared::default()` does, and `$getter()` reads them back as one `$shared`.
/// The VCP family uses it for the window laws (`vcp_family_params!`) and the load-factor
/// estimator (`load_factor_router_params!`).
#[macro_export]
macro_rules! params_with_shared {
    (
        shared $shared:path, $(#[$gmeta:meta])* fn $getter:ident {
            $( $(#[$smeta:meta])* $sfield:ident : $sty:ty, )*
        }
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty = $default:expr, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(serde::Deserialize, Clone, Debug, PartialEq)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            $( $(#[$smeta])* pub $sfield: $sty, )*
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> $name {
                let shared = <$shared>::default();
                $name {
                    $( $sfield: shared.$sfield, )*
                    $( $field: $default, )*
                }
            }
        }

        impl $name {
            $(#[$gmeta])*
            pub fn $getter(&self) -> $shared {
                $shared { $( $sfield: self.$sfield, )* }
            }
        }
    };
}

//! Option definitions (name, type, default, help) and their validation. The same
//! definitions drive the Python CLI (through `catalog()`), so a name, a default or
//! a help text lives in one place only.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use crate::error::{EngineError, Result};

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum OptKind {
    Int {
        min: i64,
        max: i64,
    },
    Float {
        min: f64,
        max: f64,
    },
    Bool,
    Str {
        choices: &'static [&'static str],
    },
    /// A comma-separated list, kept as text (e.g. `--percentile 50,95,99`).
    List,
}

#[derive(Debug, Clone, Serialize)]
pub struct OptDef {
    /// sysbench's name with underscores (`table_size`); the CLI accepts dashes too.
    pub name: &'static str,
    #[serde(flatten)]
    pub kind: OptKind,
    pub default: Json,
    pub help: &'static str,
}

impl OptDef {
    pub fn int(name: &'static str, default: i64, min: i64, max: i64, help: &'static str) -> Self {
        Self { name, kind: OptKind::Int { min, max }, default: default.into(), help }
    }
    pub fn float(name: &'static str, default: f64, min: f64, max: f64, help: &'static str) -> Self {
        Self { name, kind: OptKind::Float { min, max }, default: default.into(), help }
    }
    pub fn bool(name: &'static str, default: bool, help: &'static str) -> Self {
        Self { name, kind: OptKind::Bool, default: default.into(), help }
    }
    pub fn choice(
        name: &'static str,
        default: &'static str,
        choices: &'static [&'static str],
        help: &'static str,
    ) -> Self {
        Self { name, kind: OptKind::Str { choices }, default: default.into(), help }
    }
    pub fn list(name: &'static str, default: &'static str, help: &'static str) -> Self {
        Self { name, kind: OptKind::List, default: default.into(), help }
    }

    /// Converts a given value (JSON native or CLI text) to this option's type.
    fn coerce(&self, given: &Json) -> Result<Json> {
        let bad = |what: &str| {
            EngineError::config(format!("--{} must be {what}, got '{}'", self.name.replace('_', "-"), show(given)))
        };
        match &self.kind {
            OptKind::Int { min, max } => {
                let v = match given {
                    Json::Number(n) => n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
                    Json::String(s) => s.trim().parse::<i64>().ok(),
                    _ => None,
                };
                let v = v.ok_or_else(|| bad(&format!("an integer from {min} to {max}")))?;
                if v < *min || v > *max {
                    return Err(bad(&format!("an integer from {min} to {max}")));
                }
                Ok(v.into())
            }
            OptKind::Float { min, max } => {
                let v = match given {
                    Json::Number(n) => n.as_f64(),
                    Json::String(s) => s.trim().parse::<f64>().ok(),
                    _ => None,
                };
                let v = v.filter(|f| f.is_finite()).ok_or_else(|| bad(&format!("a number from {min} to {max}")))?;
                if v < *min || v > *max {
                    return Err(bad(&format!("a number from {min} to {max}")));
                }
                Ok(v.into())
            }
            OptKind::Bool => match given {
                Json::Bool(b) => Ok((*b).into()),
                Json::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                    "on" | "true" | "yes" | "1" | "" => Ok(true.into()),
                    "off" | "false" | "no" | "0" => Ok(false.into()),
                    _ => Err(bad("on or off")),
                },
                Json::Number(n) if n.as_i64() == Some(0) || n.as_i64() == Some(1) => Ok((n.as_i64() == Some(1)).into()),
                _ => Err(bad("on or off")),
            },
            OptKind::Str { choices } => {
                let s = match given {
                    Json::String(s) => s.clone(),
                    other => show(other),
                };
                if choices.is_empty() || choices.contains(&s.as_str()) {
                    Ok(s.into())
                } else {
                    Err(bad(&format!("one of {}", choices.join(", "))))
                }
            }
            OptKind::List => match given {
                Json::String(s) => Ok(s.clone().into()),
                Json::Array(a) => Ok(a.iter().map(show).collect::<Vec<_>>().join(",").into()),
                other => Ok(show(other).into()),
            },
        }
    }
}

fn show(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Normalises a user-given option name: dashes and underscores are interchangeable.
pub fn normalise(name: &str) -> String {
    name.trim_start_matches('-').replace('-', "_")
}

/// Validated option values, every option present (defaults filled in).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Options(BTreeMap<String, Json>);

impl Options {
    /// Validates `given` against `defs`; `context` names the workload for messages.
    pub fn parse(defs: &[OptDef], given: &serde_json::Map<String, Json>, context: &str) -> Result<Self> {
        let mut values: BTreeMap<String, Json> = defs.iter().map(|d| (d.name.to_string(), d.default.clone())).collect();
        for (raw, v) in given {
            let name = normalise(raw);
            let def = defs.iter().find(|d| d.name == name).ok_or_else(|| {
                EngineError::config(format!(
                    "unknown option --{} for {context}; see `oltplab run {context} --help` for the options it takes",
                    name.replace('_', "-")
                ))
            })?;
            values.insert(name, def.coerce(v)?);
        }
        Ok(Self(values))
    }

    fn get(&self, name: &str) -> &Json {
        self.0.get(name).unwrap_or_else(|| panic!("option {name} is not defined"))
    }

    pub fn int(&self, name: &str) -> i64 {
        self.get(name).as_i64().unwrap_or_else(|| panic!("option {name} is not an integer"))
    }

    pub fn uint(&self, name: &str) -> u64 {
        self.int(name).max(0) as u64
    }

    pub fn float(&self, name: &str) -> f64 {
        self.get(name).as_f64().unwrap_or_else(|| panic!("option {name} is not a number"))
    }

    pub fn flag(&self, name: &str) -> bool {
        self.get(name).as_bool().unwrap_or_else(|| panic!("option {name} is not a boolean"))
    }

    pub fn str(&self, name: &str) -> &str {
        self.get(name).as_str().unwrap_or_else(|| panic!("option {name} is not text"))
    }

    /// Sets a value the workload forces (as `oltp_point_select` forces `point_selects=1`).
    pub fn force(&mut self, name: &str, value: impl Into<Json>) {
        self.0.insert(name.to_string(), value.into());
    }

    pub fn as_map(&self) -> &BTreeMap<String, Json> {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defs() -> Vec<OptDef> {
        vec![
            OptDef::int("table_size", 10000, 0, i64::from(i32::MAX), "rows"),
            OptDef::bool("skip_trx", false, "no BEGIN"),
            OptDef::choice("rand_type", "special", &["uniform", "special"], "dist"),
        ]
    }

    #[test]
    fn dashes_and_strings_are_accepted() {
        let given = json!({"table-size": "500", "--skip-trx": "on"});
        let o = Options::parse(&defs(), given.as_object().unwrap(), "w").unwrap();
        assert_eq!(o.int("table_size"), 500);
        assert!(o.flag("skip_trx"));
        assert_eq!(o.str("rand_type"), "special");
    }

    #[test]
    fn errors_name_the_option_and_the_fix() {
        let e = Options::parse(&defs(), json!({"table_size": -1}).as_object().unwrap(), "w").unwrap_err();
        assert!(e.to_string().contains("--table-size must be an integer from 0"), "{e}");
        let e = Options::parse(&defs(), json!({"bogus": 1}).as_object().unwrap(), "w").unwrap_err();
        assert!(e.to_string().contains("unknown option --bogus for w"), "{e}");
        let e = Options::parse(&defs(), json!({"rand_type": "x"}).as_object().unwrap(), "w").unwrap_err();
        assert!(e.to_string().contains("one of uniform, special"), "{e}");
    }
}

//! sysbench's options as a script sees them: the script's own (`sysbench.cmdline.options`),
//! checked and converted as sysbench 1.0.20's `set_option` does, listed as its `help` lists them,
//! and exported into `sysbench.opt` with every general option sysbench has.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::host::OptValue;
use crate::error::{EngineError, Result};

/// sysbench's option types (`sb_arg_type_t`), as `sysbench.cmdline.ARG_*` numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgType {
    Bool,
    Int,
    Size,
    Double,
    String,
    List,
    File,
}

impl ArgType {
    pub fn from_code(code: i64) -> Option<Self> {
        Some(match code {
            1 => Self::Bool,
            2 => Self::Int,
            3 => Self::Size,
            4 => Self::Double,
            5 => Self::String,
            6 => Self::List,
            7 => Self::File,
            _ => return None,
        })
    }

    /// How `help` shows the value (`sb_options.c`'s `opt_formats`).
    fn format(self) -> &'static str {
        match self {
            Self::Bool => "[=on|off]",
            Self::Int | Self::Double => "=N",
            Self::Size => "=SIZE",
            Self::String => "=STRING",
            Self::List => "=[LIST,...]",
            Self::File => "=FILENAME",
        }
    }
}

/// One option a script declares.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ScriptOption {
    pub name: String,
    pub description: String,
    /// The default as text (`on`, `10000`, `innodb`); None when the script gives none.
    pub default: Option<String>,
    #[serde(rename = "type")]
    pub kind: ArgType,
}

/// sysbench's general, random-number, log and database options (`sysbench --help`), with their
/// types and defaults: exported into `sysbench.opt` whether or not they were given.
const GENERAL: &[(&str, ArgType, &str)] = &[
    ("threads", ArgType::Int, "1"),
    ("events", ArgType::Int, "0"),
    ("time", ArgType::Int, "10"),
    ("forced_shutdown", ArgType::String, "off"),
    ("thread_stack_size", ArgType::Size, "64K"),
    ("rate", ArgType::Int, "0"),
    ("report_interval", ArgType::Int, "0"),
    ("report_checkpoints", ArgType::List, ""),
    ("debug", ArgType::Bool, "off"),
    ("validate", ArgType::Bool, "off"),
    ("help", ArgType::Bool, "off"),
    ("version", ArgType::Bool, "off"),
    ("tx_rate", ArgType::Int, "0"),
    ("max_requests", ArgType::Int, "0"),
    ("max_time", ArgType::Int, "0"),
    ("num_threads", ArgType::Int, "1"),
    ("rand_type", ArgType::String, "special"),
    ("rand_spec_iter", ArgType::Int, "12"),
    ("rand_spec_pct", ArgType::Int, "1"),
    ("rand_spec_res", ArgType::Int, "75"),
    ("rand_seed", ArgType::Int, "0"),
    ("rand_pareto_h", ArgType::Double, "0.2"),
    ("verbosity", ArgType::Int, "3"),
    ("percentile", ArgType::Int, "95"),
    ("histogram", ArgType::Bool, "off"),
    ("db_driver", ArgType::String, "mysql"),
    ("db_ps_mode", ArgType::String, "auto"),
    ("db_debug", ArgType::Bool, "off"),
    ("mysql_host", ArgType::List, "localhost"),
    ("mysql_port", ArgType::List, "3306"),
    ("mysql_socket", ArgType::List, ""),
    ("mysql_user", ArgType::String, "sbtest"),
    ("mysql_password", ArgType::String, ""),
    ("mysql_db", ArgType::String, "sbtest"),
    ("mysql_ssl", ArgType::Bool, "off"),
    ("mysql_ssl_cipher", ArgType::String, ""),
    ("mysql_compression", ArgType::Bool, "off"),
    ("mysql_debug", ArgType::Bool, "off"),
    ("mysql_ignore_errors", ArgType::List, "1213,1020,1205"),
    ("mysql_dry_run", ArgType::Bool, "off"),
    ("pgsql_host", ArgType::String, "localhost"),
    ("pgsql_port", ArgType::Int, "5432"),
    ("pgsql_user", ArgType::String, "sbtest"),
    ("pgsql_password", ArgType::String, ""),
    ("pgsql_db", ArgType::String, "sbtest"),
];

/// Whether sysbench itself has an option of this name (underscores).
pub fn is_general(name: &str) -> bool {
    GENERAL.iter().any(|(n, ..)| *n == name)
}

/// The values `sysbench.opt` holds: every general option, then the script's, each given value
/// checked as sysbench checks it. `given` maps names (underscores) to the value typed (None: the
/// bare `--name` of a boolean). A script that declares no options takes any option, as a string.
/// `argv`: the command line, so that a refused option is named as it was typed.
pub fn export(
    declared: Option<&[ScriptOption]>,
    given: &BTreeMap<String, Option<String>>,
    argv: &[String],
) -> Result<Vec<(String, OptValue)>> {
    let mut out = Vec::new();
    for (name, kind, default) in GENERAL {
        // The engine checked these; some take more than a C int here (`--report-interval=0.5`).
        let kind = if *kind == ArgType::Int { ArgType::Double } else { *kind };
        let value = given.get(*name).and_then(Option::as_deref);
        out.push(((*name).to_owned(), value_of(name, kind, value, Some(default), argv)?));
    }
    let mut known: std::collections::BTreeSet<&str> = GENERAL.iter().map(|(n, ..)| *n).collect();
    for o in declared.unwrap_or_default() {
        // A bare `--name` of an option that is not a boolean sets it empty, as in sysbench.
        let value = given.get(&o.name).map(|v| v.clone().unwrap_or_else(|| bare(o.kind)));
        out.push((o.name.clone(), value_of(&o.name, o.kind, value.as_deref(), o.default.as_deref(), argv)?));
        known.insert(&o.name);
    }
    for (name, value) in given {
        if known.contains(name.as_str()) {
            continue;
        }
        if declared.is_some() {
            return Err(invalid_option(name, value.as_deref(), argv));
        }
        out.push((name.clone(), OptValue::Text(value.clone().unwrap_or_default())));
    }
    Ok(out)
}

/// The value of a bare `--name`: only booleans have one.
fn bare(kind: ArgType) -> String {
    if kind == ArgType::Bool { "on" } else { "" }.to_owned()
}

/// sysbench's refusal of an option it does not know or a value its type or validator refuses,
/// naming the option as typed in `argv` (dashes or underscores).
pub fn invalid_option(name: &str, value: Option<&str>, argv: &[String]) -> EngineError {
    let typed = argv.iter().rev().find(|a| {
        a.strip_prefix("--").is_some_and(|a| a.split('=').next().unwrap_or_default().replace('-', "_") == name)
    });
    let value = value.map(|v| format!("={v}")).unwrap_or_default();
    let shown = typed.cloned().unwrap_or_else(|| format!("--{name}{value}"));
    EngineError::config(format!("invalid option: {shown}"))
}

/// `value` (or the default) as sysbench stores and exports an option of type `kind`.
fn value_of(
    name: &str,
    kind: ArgType,
    value: Option<&str>,
    default: Option<&str>,
    argv: &[String],
) -> Result<OptValue> {
    let text = value.or(default).unwrap_or("");
    Ok(match kind {
        ArgType::Bool => match text {
            "" | "on" | "true" | "1" => OptValue::Bool(!text.is_empty() || value.is_some()),
            "off" | "false" | "0" => OptValue::Bool(false),
            other => return Err(invalid_option(name, Some(other), argv)),
        },
        ArgType::Int => OptValue::Number(int(name, text)?),
        ArgType::Double => OptValue::Number(leading_number(text)),
        ArgType::Size => OptValue::Number(size(text)),
        ArgType::String | ArgType::File => OptValue::Text(text.to_owned()),
        ArgType::List => OptValue::List(text.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect()),
    })
}

/// sysbench's `sb_opt_to_int`: the whole text a decimal C int (empty: 0), else refused.
fn int(name: &str, text: &str) -> Result<f64> {
    if text.is_empty() {
        return Ok(0.0);
    }
    text.trim_start()
        .parse::<i32>()
        .map(f64::from)
        .map_err(|_| EngineError::config(format!("Invalid value for the '{name}' option: '{text}'")))
}

/// C's `atof`: the longest numeric prefix, 0 when there is none.
fn leading_number(text: &str) -> f64 {
    let t = text.trim_start();
    (1..=t.len()).rev().filter(|&n| t.is_char_boundary(n)).find_map(|n| t[..n].parse::<f64>().ok()).unwrap_or(0.0)
}

/// sysbench's sizes: a number with an optional K, M, G or T suffix (powers of 1024).
fn size(text: &str) -> f64 {
    let t = text.trim();
    let (digits, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
    let factor = match unit.chars().next().map(|c| c.to_ascii_uppercase()) {
        Some('K') => 1024.0,
        Some('M') => 1024.0 * 1024.0,
        Some('G') => 1024.0 * 1024.0 * 1024.0,
        Some('T') => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => 1.0,
    };
    leading_number(digits) * factor
}

/// `sysbench SCRIPT help` without a `help()` of the script's: its options, sorted, as
/// `sb_print_options` lays them out, then an empty line.
pub fn help_text(options: &[ScriptOption]) -> String {
    let mut sorted: Vec<&ScriptOption> = options.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let width = sorted.iter().map(|o| o.name.len() + o.kind.format().len()).max().unwrap_or(0);
    let mut out = String::new();
    for o in sorted {
        let pad = width - o.name.len() + 1;
        let _ = write!(out, "  --{}{:<pad$}{}", o.name, o.kind.format(), o.description);
        if let Some(d) = &o.default {
            let _ = write!(out, " [{d}]");
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(name: &str, kind: ArgType, default: Option<&str>) -> ScriptOption {
        ScriptOption { name: name.into(), description: format!("{name} help"), default: default.map(Into::into), kind }
    }

    fn given(pairs: &[(&str, Option<&str>)]) -> BTreeMap<String, Option<String>> {
        pairs.iter().map(|(n, v)| ((*n).to_owned(), v.map(str::to_owned))).collect()
    }

    fn get(values: &[(String, OptValue)], name: &str) -> OptValue {
        values.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).expect(name)
    }

    #[test]
    fn values_are_converted_as_sysbench_converts_them() {
        let declared = [opt("tables", ArgType::Double, Some("1")), opt("skip_trx", ArgType::Bool, Some("off"))];
        let v = export(Some(&declared), &given(&[("tables", Some("2.5x")), ("skip_trx", None)]), &[]).unwrap();
        assert_eq!(get(&v, "tables"), OptValue::Number(2.5));
        assert_eq!(get(&v, "skip_trx"), OptValue::Bool(true));
        assert_eq!(get(&v, "threads"), OptValue::Number(1.0));
        assert_eq!(get(&v, "mysql_ignore_errors"), OptValue::List(vec!["1213".into(), "1020".into(), "1205".into()]));
        let v = export(Some(&declared), &given(&[("tables", Some("abc"))]), &[]).unwrap();
        assert_eq!(get(&v, "tables"), OptValue::Number(0.0));
    }

    #[test]
    fn bad_booleans_and_unknown_options_are_refused_as_sysbench_refuses_them() {
        let declared = [opt("skip_trx", ArgType::Bool, Some("off"))];
        let e = export(Some(&declared), &given(&[("skip_trx", Some("maybe"))]), &[]).unwrap_err();
        assert_eq!(e.to_string(), "invalid option: --skip_trx=maybe");
        let e = export(Some(&declared), &given(&[("nosuch", Some("1"))]), &[]).unwrap_err();
        assert_eq!(e.to_string(), "invalid option: --nosuch=1");
        let argv = ["sysbench".to_owned(), "--no-such=1".to_owned()];
        let e = export(Some(&declared), &given(&[("no_such", Some("1"))]), &argv).unwrap_err();
        assert_eq!(e.to_string(), "invalid option: --no-such=1");
        // A script without options of its own takes anything, as a string.
        let v = export(None, &given(&[("nosuch", Some("1"))]), &[]).unwrap();
        assert_eq!(get(&v, "nosuch"), OptValue::Text("1".into()));
    }

    #[test]
    fn ints_are_whole_c_ints_as_sysbench_reads_them() {
        let declared = [opt("n", ArgType::Int, Some("3"))];
        assert_eq!(
            get(&export(Some(&declared), &given(&[("n", Some("-7"))]), &[]).unwrap(), "n"),
            OptValue::Number(-7.0)
        );
        assert_eq!(get(&export(Some(&declared), &given(&[]), &[]).unwrap(), "n"), OptValue::Number(3.0));
        for bad in ["x", "2.5", "99999999999"] {
            let e = export(Some(&declared), &given(&[("n", Some(bad))]), &[]).unwrap_err();
            assert_eq!(e.to_string(), format!("Invalid value for the 'n' option: '{bad}'"));
        }
    }

    #[test]
    fn help_is_laid_out_as_sysbench_lays_it_out() {
        let text = help_text(&[opt("tables", ArgType::Double, Some("1")), opt("auto_inc", ArgType::Bool, Some("on"))]);
        assert_eq!(text, "  --auto_inc[=on|off] auto_inc help [on]\n  --tables=N          tables help [1]\n\n");
    }

    #[test]
    fn sizes_take_suffixes() {
        assert_eq!(size("64K").to_bits(), 65536.0_f64.to_bits());
        assert_eq!(size("2M").to_bits(), (2.0_f64 * 1024.0 * 1024.0).to_bits());
        assert_eq!(size("7").to_bits(), 7.0_f64.to_bits());
    }
}

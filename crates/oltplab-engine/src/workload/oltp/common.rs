//! What `oltp_common.lua` defines: the scripts, their options (names, defaults
//! and help texts of sysbench 1.0.20, plus master's `create_table_options` and
//! `reconnect`) and the statement texts of `stmt_defs`.

use crate::options::{OptDef, Options};

/// The ten scripts built on `oltp_common.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    ReadOnly,
    ReadWrite,
    WriteOnly,
    PointSelect,
    UpdateIndex,
    UpdateNonIndex,
    Insert,
    Delete,
    RandomPoints,
    RandomRanges,
}

impl Script {
    pub const ALL: [Script; 10] = [
        Script::ReadOnly,
        Script::ReadWrite,
        Script::WriteOnly,
        Script::PointSelect,
        Script::UpdateIndex,
        Script::UpdateNonIndex,
        Script::Insert,
        Script::Delete,
        Script::RandomPoints,
        Script::RandomRanges,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Script::ReadOnly => "oltp_read_only",
            Script::ReadWrite => "oltp_read_write",
            Script::WriteOnly => "oltp_write_only",
            Script::PointSelect => "oltp_point_select",
            Script::UpdateIndex => "oltp_update_index",
            Script::UpdateNonIndex => "oltp_update_non_index",
            Script::Insert => "oltp_insert",
            Script::Delete => "oltp_delete",
            Script::RandomPoints => "select_random_points",
            Script::RandomRanges => "select_random_ranges",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn description(self) -> &'static str {
        match self {
            Script::ReadOnly => "Read-Only OLTP: point selects and 4 kinds of range selects in a transaction",
            Script::ReadWrite => {
                "Read/Write OLTP: point and range selects, index and non-index updates, delete+insert in a transaction"
            }
            Script::WriteOnly => "Write-Only OLTP: index and non-index updates and delete+insert in a transaction",
            Script::PointSelect => "OLTP Point Select: one primary-key SELECT per event",
            Script::UpdateIndex => "Update-Index OLTP: UPDATE of the indexed column k by primary key, autocommit",
            Script::UpdateNonIndex => {
                "Update-Non-Index OLTP: UPDATE of the non-indexed column c by primary key, autocommit"
            }
            Script::Insert => "Insert-Only OLTP: one single-row INSERT per event, text protocol",
            Script::Delete => "Delete-Only OLTP: one DELETE by primary key per event (the tables shrink)",
            Script::RandomPoints => "SELECT ... WHERE k IN (random points) on sbtest1, each thread in its own k slice",
            Script::RandomRanges => "SELECT count(k) ... WHERE k BETWEEN ranges OR ... on sbtest1, per-thread k slices",
        }
    }

    /// The transactional scripts that write.
    pub fn writes(self) -> bool {
        matches!(self, Script::ReadWrite | Script::WriteOnly)
    }

    /// The scripts that run their event inside BEGIN/COMMIT (unless --skip-trx).
    pub fn transactional(self) -> bool {
        matches!(self, Script::ReadOnly | Script::ReadWrite | Script::WriteOnly)
    }
}

/// Statement kinds: sysbench's `stmt_defs` keys plus the scripts' own statements.
/// Their labels name the per-kind latency histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Begin,
    Commit,
    PointSelects,
    SimpleRanges,
    SumRanges,
    OrderRanges,
    DistinctRanges,
    IndexUpdates,
    NonIndexUpdates,
    Deletes,
    Inserts,
    RandomPoints,
    RandomRanges,
}

impl Kind {
    pub const COUNT: usize = 13;
    pub const RANGES: [Kind; 4] = [Kind::SimpleRanges, Kind::SumRanges, Kind::OrderRanges, Kind::DistinctRanges];

    pub fn label(self) -> &'static str {
        match self {
            Kind::Begin => "begin",
            Kind::Commit => "commit",
            Kind::PointSelects => "point_selects",
            Kind::SimpleRanges => "simple_ranges",
            Kind::SumRanges => "sum_ranges",
            Kind::OrderRanges => "order_ranges",
            Kind::DistinctRanges => "distinct_ranges",
            Kind::IndexUpdates => "index_updates",
            Kind::NonIndexUpdates => "non_index_updates",
            Kind::Deletes => "deletes",
            Kind::Inserts => "inserts",
            Kind::RandomPoints => "random_points",
            Kind::RandomRanges => "random_ranges",
        }
    }

    /// Prepared once per table (sysbench's `prepare_for_each_table`)?
    pub fn per_table(self) -> bool {
        !matches!(self, Kind::Begin | Kind::Commit | Kind::RandomPoints | Kind::RandomRanges)
    }

    /// The statement text for table `t` (`stmt_defs` of 1.0.20, verbatim).
    pub fn sql(self, t: u32, o: &OltpOptions) -> String {
        match self {
            Kind::Begin => "BEGIN".into(),
            Kind::Commit => "COMMIT".into(),
            Kind::PointSelects => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Kind::SimpleRanges => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Kind::SumRanges => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Kind::OrderRanges => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
            Kind::DistinctRanges => format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
            Kind::IndexUpdates => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Kind::NonIndexUpdates => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Kind::Deletes => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Kind::Inserts => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
            // select_random_*.lua format these over several lines; one line is the same statement.
            Kind::RandomPoints => {
                let points = vec!["?"; o.random_points as usize].join(", ");
                format!("SELECT id, k, c, pad FROM sbtest1 WHERE k IN ({points})")
            }
            Kind::RandomRanges => {
                let ranges = vec!["k BETWEEN ? AND ?"; o.number_of_ranges as usize].join(" OR ");
                format!("SELECT count(k) FROM sbtest1 WHERE {ranges}")
            }
        }
    }
}

/// The parsed options of one script.
#[derive(Debug, Clone)]
#[allow(clippy::struct_excessive_bools)] // sysbench's on/off options, one field each
pub struct OltpOptions {
    pub tables: u32,
    pub table_size: u32,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub auto_inc: bool,
    pub skip_trx: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    pub mysql_storage_engine: String,
    pub create_table_options: String,
    /// Reconnect after every N events (0: never).
    pub reconnect: u64,
    pub random_points: u32,
    pub number_of_ranges: u32,
    pub delta: u32,
}

impl OltpOptions {
    pub fn from_options(script: Script, o: &Options) -> Self {
        let n = |name: &str| o.uint(name) as u32;
        Self {
            tables: n("tables"),
            table_size: n("table_size"),
            range_size: n("range_size"),
            // oltp_point_select forces point_selects=1, as its prepare_statements() does.
            point_selects: if script == Script::PointSelect { 1 } else { n("point_selects") },
            simple_ranges: n("simple_ranges"),
            sum_ranges: n("sum_ranges"),
            order_ranges: n("order_ranges"),
            distinct_ranges: n("distinct_ranges"),
            index_updates: n("index_updates"),
            non_index_updates: n("non_index_updates"),
            delete_inserts: n("delete_inserts"),
            range_selects: o.flag("range_selects"),
            auto_inc: o.flag("auto_inc"),
            skip_trx: o.flag("skip_trx"),
            secondary: o.flag("secondary"),
            create_secondary: o.flag("create_secondary"),
            mysql_storage_engine: o.str("mysql_storage_engine").to_string(),
            create_table_options: o.str("create_table_options").to_string(),
            reconnect: o.uint("reconnect"),
            random_points: if script == Script::RandomPoints { n("random_points") } else { 0 },
            number_of_ranges: if script == Script::RandomRanges { n("number_of_ranges") } else { 0 },
            delta: if script == Script::RandomRanges { n("delta") } else { 0 },
        }
    }

    /// How many statements of a range kind run per event.
    pub fn range_count(&self, kind: Kind) -> u32 {
        match kind {
            Kind::SimpleRanges => self.simple_ranges,
            Kind::SumRanges => self.sum_ranges,
            Kind::OrderRanges => self.order_ranges,
            Kind::DistinctRanges => self.distinct_ranges,
            _ => 0,
        }
    }
}

const MAX_I32: i64 = i32::MAX as i64;

/// The options of `script`: `oltp_common`'s for all, plus the script's own.
pub fn defs(script: Script) -> Vec<OptDef> {
    let count = |name, default, help| OptDef::int(name, default, 0, MAX_I32, help);
    let mut defs = vec![
        count("table_size", 10_000, "Number of rows per table"),
        count("range_size", 100, "Range size for range SELECT queries"),
        OptDef::int("tables", 1, 1, 1_000_000, "Number of tables"),
        count("point_selects", 10, "Number of point SELECT queries per transaction"),
        count("simple_ranges", 1, "Number of simple range SELECT queries per transaction"),
        count("sum_ranges", 1, "Number of SELECT SUM() queries per transaction"),
        count("order_ranges", 1, "Number of SELECT ORDER BY queries per transaction"),
        count("distinct_ranges", 1, "Number of SELECT DISTINCT queries per transaction"),
        count("index_updates", 1, "Number of UPDATE index queries per transaction"),
        count("non_index_updates", 1, "Number of UPDATE non-index queries per transaction"),
        count("delete_inserts", 1, "Number of DELETE/INSERT combinations per transaction"),
        OptDef::bool("range_selects", true, "Enable/disable all range SELECT queries"),
        OptDef::bool(
            "auto_inc",
            true,
            "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, \
             use client-generated IDs",
        ),
        OptDef::choice("create_table_options", "", &[], "Extra CREATE TABLE options"),
        OptDef::bool(
            "skip_trx",
            false,
            "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode",
        ),
        OptDef::bool("secondary", false, "Use a secondary index in place of the PRIMARY KEY"),
        OptDef::bool("create_secondary", true, "Create a secondary index in addition to the PRIMARY KEY"),
        OptDef::int("reconnect", 0, 0, i64::MAX, "Reconnect after every N events. The default (0) is to not reconnect"),
        OptDef::choice("mysql_storage_engine", "innodb", &[], "Storage engine, if MySQL is used"),
        // Accepted for sysbench command lines; it has no effect in 1.0.20 either.
        OptDef::choice(
            "pgsql_variant",
            "",
            &[],
            "accepted for sysbench command lines and ignored: it changes nothing (in sysbench 1.0.20 \
             neither, although its help says it disables create_secondary and delete_inserts)",
        ),
    ];
    match script {
        Script::RandomPoints => defs.push(OptDef::int(
            "random_points",
            10,
            1,
            32_766, // SQLite's default limit of bound parameters
            "Number of random points in the IN() clause in generated SELECTs",
        )),
        Script::RandomRanges => {
            defs.push(OptDef::int("number_of_ranges", 10, 1, 16_383, "Number of random BETWEEN ranges per SELECT"));
            defs.push(count("delta", 5, "Size of BETWEEN ranges"));
        }
        _ => {}
    }
    defs
}

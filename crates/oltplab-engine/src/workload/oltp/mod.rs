//! The sysbench OLTP family: the eight `oltp_*.lua` scripts and the two
//! `select_random_*.lua` scripts, all built on `oltp_common.lua`'s schema,
//! options and statements.

mod common;
mod events;
mod prepare;
#[cfg(test)]
mod sqlite_tests;
#[cfg(test)]
mod tests;

pub use common::{defs, Kind, OltpOptions, Script};

use crate::db::{Dialect, StmtId};
use crate::error::{EngineError, Result};
use crate::options::Options;
use crate::rand::{Distribution, Rng, UniqueSeq};

pub struct Oltp {
    script: Script,
    o: OltpOptions,
    dist: Distribution,
    /// Statement kinds this script uses, in the order of `kinds()`.
    kinds: Vec<Kind>,
    /// First [`StmtId`] of each kind (indexed by `Kind as usize`); per-table kinds follow table order.
    base: [usize; Kind::COUNT],
    statements: usize,
    /// `sysbench.rand.unique()`, shared by all workers (`oltp_insert` with --auto-inc=off).
    unique: UniqueSeq,
}

/// Per-connection state: events done, for `--reconnect`.
#[derive(Debug, Default)]
pub struct OltpState {
    events: u64,
    reconnect_due: bool,
}

impl Oltp {
    pub fn new(script: Script, opts: &Options, threads: usize) -> Result<Self> {
        let o = OltpOptions::from_options(script, opts);
        if matches!(script, Script::RandomPoints | Script::RandomRanges) && o.tables != 1 {
            return Err(EngineError::config(format!(
                "{} reads table sbtest1 only and does not support --tables > 1 (as in sysbench); drop --tables={}",
                script.name(),
                o.tables
            )));
        }
        if threads == 0 {
            return Err(EngineError::config("--threads must be at least 1"));
        }
        let dist = Distribution::from_options(opts)?;
        let kinds = used_kinds(script, &o);
        let mut base = [usize::MAX; Kind::COUNT];
        let mut statements = 0;
        // oltp_insert sends text queries (con:query), so it prepares nothing.
        if script != Script::Insert {
            for &k in &kinds {
                base[k as usize] = statements;
                statements += if k.per_table() { o.tables as usize } else { 1 };
            }
        }
        let unique = UniqueSeq::new(opts.uint("rand_seed"));
        Ok(Self { script, o, dist, kinds, base, statements, unique })
    }

    pub fn script(&self) -> Script {
        self.script
    }

    pub fn options(&self) -> &OltpOptions {
        &self.o
    }

    pub fn kinds(&self) -> Vec<&'static str> {
        self.kinds.iter().map(|k| k.label()).collect()
    }

    /// The statements each connection prepares: per table × per kind, as `prepare_for_each_table`.
    pub fn statements(&self, dialect: Dialect) -> Vec<(String, usize)> {
        let mut out = Vec::with_capacity(self.statements);
        if self.script == Script::Insert {
            return out;
        }
        for (index, &k) in self.kinds.iter().enumerate() {
            let tables = if k.per_table() { self.o.tables } else { 1 };
            out.extend((1..=tables).map(|t| (self.sql(k, t, dialect), index)));
        }
        out
    }

    /// The statement text; one dialect difference: SQLite's plain BEGIN defers the write lock, so
    /// concurrent read-write transactions would fail with `SQLITE_BUSY` at their first write and be
    /// retried again and again; BEGIN IMMEDIATE makes them queue for the lock instead, as row locks
    /// make them queue on a server.
    fn sql(&self, k: Kind, t: u32, dialect: Dialect) -> String {
        if k == Kind::Begin && dialect == Dialect::Sqlite && self.script.writes() {
            return "BEGIN IMMEDIATE".into();
        }
        k.sql(t, &self.o)
    }

    pub fn worker_state(&self) -> OltpState {
        OltpState::default()
    }

    /// Tables to create (and to check before a run).
    pub fn tables(&self) -> usize {
        self.o.tables as usize
    }

    fn stmt(&self, kind: Kind, table: u32) -> StmtId {
        debug_assert!(self.base[kind as usize] != usize::MAX, "{kind:?} is not prepared");
        StmtId(self.base[kind as usize] + table as usize - 1)
    }

    /// Index of `kind` in `kinds()`, for text queries that have no statement id.
    fn kind_index(&self, kind: Kind) -> usize {
        self.kinds.iter().position(|&k| k == kind).unwrap_or(0)
    }

    /// `get_table_num()`: one uniform table per statement group.
    fn table(&self, rng: &mut Rng) -> u32 {
        rng.uniform(1, self.o.tables)
    }

    /// `get_id()`: an id from the `--rand-type` distribution.
    fn id(&self, rng: &mut Rng) -> u32 {
        self.dist.sample(rng, 1, self.o.table_size)
    }
}

/// The kinds each script prepares, as its `prepare_statements()`.
fn used_kinds(script: Script, o: &OltpOptions) -> Vec<Kind> {
    let mut kinds = Vec::new();
    if script.transactional() && !o.skip_trx {
        kinds.extend([Kind::Begin, Kind::Commit]);
    }
    let reads = matches!(script, Script::ReadOnly | Script::ReadWrite);
    if reads || script == Script::PointSelect {
        kinds.push(Kind::PointSelects);
    }
    if reads && o.range_selects {
        kinds.extend(Kind::RANGES);
    }
    match script {
        Script::ReadWrite | Script::WriteOnly => {
            kinds.extend([Kind::IndexUpdates, Kind::NonIndexUpdates, Kind::Deletes, Kind::Inserts]);
        }
        Script::UpdateIndex => kinds.push(Kind::IndexUpdates),
        Script::UpdateNonIndex => kinds.push(Kind::NonIndexUpdates),
        Script::Insert => kinds.push(Kind::Inserts),
        Script::Delete => kinds.push(Kind::Deletes),
        Script::RandomPoints => kinds.push(Kind::RandomPoints),
        Script::RandomRanges => kinds.push(Kind::RandomRanges),
        Script::ReadOnly | Script::PointSelect => {}
    }
    kinds
}

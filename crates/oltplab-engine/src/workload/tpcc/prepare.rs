//! prepare, the check before a run, and cleanup. prepare is idempotent: a complete load of the
//! same shape is kept; a half-done one (no completion mark in `tpcc_meta`) is dropped and
//! loaded again, never used.

use crate::db::{Dialect, Fetch, Value};
use crate::driver::Conn;
use crate::error::{EngineError, Result};
use crate::rand::Rng;
use crate::workload::tables::run_ddl;
use crate::workload::PrepareEvent;

use super::load::{load_items, load_stock, load_warehouse, Progress};
use super::random::C_LAST_LOAD;
use super::schema::{
    analyze_tables, create_tables, drop_tables, foreign_keys, indexes_with_tables, secondary_indexes, META,
};
use super::{Tpcc, NAME};

/// What `tpcc_meta` says about the database.
#[derive(Debug, PartialEq, Eq)]
enum Loaded {
    Nothing,
    /// Warehouses per set, when every set 1..=sets is marked complete.
    Complete(u32),
    Incomplete,
}

impl Tpcc {
    fn prepare_cmd(&self) -> String {
        format!("oltplab prepare tpcc --tables {} --scale {}", self.sets, self.warehouses)
    }

    async fn loaded(&self, conn: &mut Conn) -> Loaded {
        let Ok(r) = conn.query(&format!("SELECT table_set, warehouses, complete FROM {META}"), Fetch::Rows).await
        else {
            return Loaded::Nothing;
        };
        let int = |v: &Value| super::random::int(v);
        let complete: Vec<(i64, i64)> =
            r.rows.iter().filter(|row| int(&row[2]) == 1).map(|row| (int(&row[0]), int(&row[1]))).collect();
        let all_sets = (1..=i64::from(self.sets)).all(|t| complete.iter().any(|&(set, _)| set == t));
        match complete.first() {
            Some(&(_, w)) if all_sets && complete.iter().all(|&(_, x)| x == w) => Loaded::Complete(w as u32),
            _ if r.rows.is_empty() => Loaded::Nothing,
            _ => Loaded::Incomplete,
        }
    }

    /// Before the parallel load: returns false when a complete load of this shape is there already.
    pub async fn prepare_begin(&self, conn: &mut Conn, progress: Progress<'_>) -> Result<bool> {
        if self.use_fk && conn.dialect() == Dialect::Sqlite {
            return Err(EngineError::config(
                "--use-fk needs ALTER TABLE ... ADD CONSTRAINT, which SQLite lacks; drop --use-fk for SQLite",
            ));
        }
        match self.loaded(conn).await {
            Loaded::Complete(w) if w == self.warehouses => {
                progress(PrepareEvent::Message(format!(
                    "TPC-C data of {} table set(s) x {w} warehouse(s) are already loaded; nothing to do",
                    self.sets
                )));
                return Ok(false);
            }
            Loaded::Complete(w) => {
                return Err(EngineError::config(format!(
                    "the database holds a complete TPC-C load of {w} warehouse(s) per table set, not {}; run \
                     `oltplab cleanup tpcc` with the same --db first, or pass --scale {w}",
                    self.warehouses
                )));
            }
            Loaded::Incomplete => progress(PrepareEvent::Message(
                "Found an incomplete TPC-C load (an interrupted prepare?): dropping it and loading again".into(),
            )),
            Loaded::Nothing => {}
        }
        self.drop_all(conn, &mut |_| {}).await?;
        run_ddl(
            conn,
            &format!("CREATE TABLE {META} (table_set INTEGER NOT NULL PRIMARY KEY, warehouses INTEGER, c_last_load INTEGER, complete INTEGER)"),
            NAME,
        )
        .await?;
        for t in 1..=self.sets {
            progress(PrepareEvent::Message(format!("Creating tables of table set {t}...")));
            let mut ddl = create_tables(conn.dialect(), t);
            if indexes_with_tables(conn.dialect()) {
                ddl.extend(secondary_indexes(t));
            }
            for sql in ddl {
                run_ddl(conn, &sql, NAME).await?;
            }
            let mark = format!("INSERT INTO {META} VALUES ({t}, {}, {C_LAST_LOAD}, 0)", self.warehouses);
            run_ddl(conn, &mark, NAME).await?;
        }
        Ok(true)
    }

    /// Units of parallel load, per table set: each warehouse's districts (with the warehouse
    /// row) and its stock, of about the same size, then the items.
    pub fn prepare_units(&self) -> usize {
        self.sets as usize * (2 * self.warehouses as usize + 1)
    }

    pub async fn prepare_unit(
        &self,
        conn: &mut Conn,
        unit: usize,
        rng: &mut Rng,
        progress: Progress<'_>,
    ) -> Result<()> {
        let per_set = 2 * self.warehouses as usize + 1;
        let set = ((unit - 1) / per_set) as u32 + 1;
        let in_set = (unit - 1) % per_set;
        let w = (in_set / 2) as u32 + 1;
        if in_set == per_set - 1 {
            load_items(conn, set, rng, progress).await
        } else if in_set % 2 == 0 {
            load_warehouse(conn, set, w, rng, progress).await
        } else {
            load_stock(conn, set, w, rng, progress).await
        }
    }

    /// After the load: secondary indexes (where not made with the tables), foreign keys,
    /// statistics, and the completion mark.
    pub async fn prepare_end(&self, conn: &mut Conn, progress: Progress<'_>) -> Result<()> {
        for t in 1..=self.sets {
            if !indexes_with_tables(conn.dialect()) {
                progress(PrepareEvent::Message(format!("Creating secondary indexes of table set {t}...")));
                for sql in secondary_indexes(t) {
                    run_ddl(conn, &sql, NAME).await?;
                }
            }
            if self.use_fk {
                progress(PrepareEvent::Message(format!("Adding foreign keys of table set {t}...")));
                for sql in foreign_keys(t) {
                    run_ddl(conn, &sql, NAME).await?;
                }
            }
        }
        // Fresh statistics, so the first run's plans are the steady ones. InnoDB recomputes
        // its own only in the background, some seconds after a bulk load: a lab that snapshots
        // the data at once kept the statistics of the empty tables (stock: 2 rows), and
        // MariaDB then joined New-Order's stock update by scanning all of stock (6 tps on
        // 4 warehouses instead of hundreds).
        if conn.dialect() == Dialect::Mysql {
            for t in 1..=self.sets {
                run_ddl(conn, &analyze_tables(t), NAME).await?;
            }
        } else {
            run_ddl(conn, "ANALYZE", NAME).await?;
        }
        run_ddl(conn, &format!("UPDATE {META} SET complete = 1"), NAME).await
    }

    /// Before a run: a complete load with at least the warehouses asked for.
    pub async fn check(&self, conn: &mut Conn) -> Result<()> {
        match self.loaded(conn).await {
            Loaded::Complete(w) if w >= self.warehouses => Ok(()),
            Loaded::Complete(w) => Err(EngineError::config(format!(
                "the database holds {w} warehouse(s) per table set, fewer than the {} asked for; pass --scale {w} \
                 or load more with `oltplab cleanup tpcc` and `{}`",
                self.warehouses,
                self.prepare_cmd()
            ))),
            Loaded::Incomplete => Err(EngineError::NotPrepared(format!(
                "the TPC-C load is incomplete (an interrupted prepare?); run `{}` with the same --db again",
                self.prepare_cmd()
            ))),
            Loaded::Nothing => Err(EngineError::NotPrepared(format!(
                "no TPC-C data in the database; run `{}` with the same --db first",
                self.prepare_cmd()
            ))),
        }
    }

    async fn drop_all(&self, conn: &mut Conn, progress: Progress<'_>) -> Result<()> {
        for t in 1..=self.sets {
            progress(PrepareEvent::Message(format!("Dropping tables of table set {t}...")));
            for sql in drop_tables(conn.dialect(), t) {
                conn.query(&sql, Fetch::Discard)
                    .await
                    .map_err(|e| EngineError::Driver(format!("'{sql}' failed: {e}")))?;
            }
        }
        conn.query(&format!("DROP TABLE IF EXISTS {META}"), Fetch::Discard)
            .await
            .map_err(|e| EngineError::Driver(format!("cannot drop {META}: {e}")))?;
        Ok(())
    }

    pub async fn cleanup(&self, conn: &mut Conn, progress: Progress<'_>) -> Result<()> {
        self.drop_all(conn, progress).await
    }
}

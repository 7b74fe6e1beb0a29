//! `create_table()` of `oltp_common.lua`: DDL per dialect, the bulk load
//! with k from `--rand-type`, the secondary index after the load; plus the
//! check before a run and `cleanup()`.

use std::fmt::Write as _;

use super::{Oltp, Script};
use crate::db::{Dialect, Value};
use crate::driver::Conn;
use crate::error::{EngineError, Result};
use crate::rand::{rand_string_into, Rng, C_TEMPLATE, PAD_TEMPLATE};
use crate::workload::tables::{check_tables, drop_tables, run_ddl, RowChunk};
use crate::workload::PrepareEvent;

type Progress<'a> = &'a mut (dyn FnMut(PrepareEvent) + Send);

impl Oltp {
    /// The statements that create table `t`, as close to sysbench's template as
    /// the dialect allows.
    pub fn create_table_sql(&self, dialect: Dialect, t: usize) -> Result<Vec<String>> {
        let o = &self.o;
        let (id_def, engine) = match dialect {
            Dialect::Mysql if o.auto_inc => ("INTEGER NOT NULL AUTO_INCREMENT", o.mysql_storage_engine.as_str()),
            Dialect::Mysql => ("INTEGER NOT NULL", o.mysql_storage_engine.as_str()),
            Dialect::Postgres if o.auto_inc => ("SERIAL", ""),
            // SQLite: an INTEGER PRIMARY KEY is the rowid, which numbers rows itself (its AUTO_INCREMENT).
            Dialect::Postgres | Dialect::Sqlite => ("INTEGER NOT NULL", ""),
        };
        // --secondary: MySQL's inline `KEY xid (id)`; elsewhere the same index as a statement of its own
        // (sysbench sends the MySQL syntax to PostgreSQL too, which rejects it).
        let id_index = match (o.secondary, dialect) {
            (false, _) => Some("PRIMARY KEY"),
            (true, Dialect::Mysql) => Some("KEY xid"),
            (true, Dialect::Sqlite) if o.auto_inc => {
                return Err(EngineError::config(
                    "--secondary with --auto-inc needs an auto-numbered id that is not the primary key, which \
                     SQLite does not have; add --auto-inc=off",
                ))
            }
            (true, _) => None,
        };
        let mut ddl = format!(
            "CREATE TABLE sbtest{t}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
             c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL"
        );
        if let Some(index) = id_index {
            let _ = write!(ddl, ",\n  {index} (id)");
        }
        let engine_def = if engine.is_empty() { String::new() } else { format!("/*! ENGINE = {engine} */") };
        let _ = write!(ddl, "\n) {engine_def} {}", o.create_table_options);
        let mut out = vec![ddl];
        if id_index.is_none() {
            out.push(format!("CREATE INDEX xid_{t} ON sbtest{t}(id)"));
        }
        Ok(out)
    }

    /// Creates and loads table `t` (1-based), as sysbench's `create_table()`.
    pub async fn prepare_unit(&self, conn: &mut Conn, t: usize, rng: &mut Rng, progress: Progress<'_>) -> Result<()> {
        let name = self.script.name();
        let ddl = self.create_table_sql(conn.dialect(), t)?;
        progress(PrepareEvent::Message(format!("Creating table 'sbtest{t}'...")));
        for sql in &ddl {
            run_ddl(conn, sql, name).await?;
        }
        // oltp_insert without --auto-inc loads nothing: its unique ids could collide with 1..N.
        let rows = if self.script == Script::Insert && !self.o.auto_inc { 0 } else { self.o.table_size };
        if rows > 0 {
            progress(PrepareEvent::Message(format!("Inserting {rows} records into 'sbtest{t}'")));
            self.load(conn, t, rows, rng, progress).await?;
        }
        if self.o.create_secondary {
            progress(PrepareEvent::Message(format!("Creating a secondary index on 'sbtest{t}'...")));
            run_ddl(conn, &format!("CREATE INDEX k_{t} ON sbtest{t}(k)"), name).await?;
        }
        Ok(())
    }

    /// Rows 1..=rows through [`Conn::bulk_load`] (LOAD DATA, COPY or multi-row INSERTs, each
    /// chunk its own autocommit transaction), in chunks of sysbench's 512 KiB INSERTs.
    async fn load(&self, conn: &mut Conn, t: usize, rows: u32, rng: &mut Rng, progress: Progress<'_>) -> Result<()> {
        // MySQL numbers sysbench's --auto-inc rows 1..N (one connection per table, consecutive
        // multi-row INSERTs); sending those ids lets the load use LOAD DATA, whose own
        // numbering would leave gaps, at about half the server's CPU of INSERTs. The
        // AUTO_INCREMENT counter ends at N + 1 either way. PostgreSQL's sequence and SQLite's
        // rowid are left to number the rows themselves.
        let auto_inc = self.o.auto_inc && conn.dialect() != Dialect::Mysql;
        let columns: &[&str] = if auto_inc { &["k", "c", "pad"] } else { &["id", "k", "c", "pad"] };
        let table = format!("sbtest{t}");
        let mut chunk = RowChunk::new(&format!("INSERT INTO {table}({}) VALUES", columns.join(", ")));
        let mut done = 0;
        for i in 1..=rows {
            let (mut c, mut pad) = (String::with_capacity(120), String::with_capacity(60));
            // sysbench draws c and pad first, then k.
            rand_string_into(rng, C_TEMPLATE, &mut c);
            rand_string_into(rng, PAD_TEMPLATE, &mut pad);
            let k = Value::Int(self.id(rng).into());
            let row = if auto_inc {
                vec![k, Value::Text(c), Value::Text(pad)]
            } else {
                vec![Value::Int(i.into()), k, Value::Text(c), Value::Text(pad)]
            };
            if chunk.needs_flush_before(&row) {
                done += load_chunk(conn, &table, columns, &mut chunk).await?;
                progress(PrepareEvent::Rows { table: t, done, total: rows.into() });
            }
            chunk.push(row);
        }
        done += load_chunk(conn, &table, columns, &mut chunk).await?;
        progress(PrepareEvent::Rows { table: t, done, total: rows.into() });
        Ok(())
    }

    /// Before a run: every table exists.
    pub async fn check(&self, conn: &mut Conn) -> Result<()> {
        let cmd = format!(
            "oltplab prepare {} --tables {} --table-size {}",
            self.script.name(),
            self.o.tables,
            self.o.table_size
        );
        check_tables(conn, self.tables(), &cmd).await
    }

    pub async fn cleanup(&self, conn: &mut Conn, progress: Progress<'_>) -> Result<()> {
        drop_tables(conn, self.tables(), progress).await
    }
}

/// Loads the chunk's rows; returns how many.
async fn load_chunk(conn: &mut Conn, table: &str, columns: &[&str], chunk: &mut RowChunk) -> Result<u64> {
    if chunk.rows().is_empty() {
        return Ok(0);
    }
    let loaded = conn
        .bulk_load(table, columns, chunk.rows())
        .await
        .map_err(|e| EngineError::Driver(format!("loading table {table} failed: {e}")))?;
    chunk.clear();
    Ok(loaded)
}

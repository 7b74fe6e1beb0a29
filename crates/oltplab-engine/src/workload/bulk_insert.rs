//! `bulk_insert.lua`: each thread appends rows `(n,n)` to a multi-row INSERT into
//! its own table `sbtest<thread+1>`, sent whenever the next row would pass
//! 512 KiB and at the end of the run. An event is one row, not one statement.

use super::tables::{drop_tables, run_ddl, BulkBuffer};
use super::{EventCtx, PrepareEvent, WorkerInfo};
use crate::db::{DbResult, Fetch};
use crate::driver::Conn;
use crate::error::{EngineError, Result};

/// Statement kind index of the INSERTs (the only kind).
const BULK_INSERTS: usize = 0;

pub struct BulkInsert {
    threads: usize,
}

/// One connection's pending INSERT.
#[derive(Debug)]
pub struct BulkState {
    bulk: BulkBuffer,
    /// The next row's id and k (sysbench's `cursize + 1`).
    next: u64,
}

impl BulkInsert {
    pub fn new(threads: usize) -> Result<Self> {
        if threads == 0 {
            return Err(EngineError::config("--threads must be at least 1"));
        }
        Ok(Self { threads })
    }

    pub fn kinds(&self) -> Vec<&'static str> {
        vec!["bulk_inserts"]
    }

    pub fn worker_state(&self, worker: WorkerInfo) -> BulkState {
        let table = worker.id + 1;
        BulkState { bulk: BulkBuffer::new(&format!("INSERT INTO sbtest{table} VALUES")), next: 1 }
    }

    pub async fn event(&self, ctx: &mut EventCtx<'_>, state: &mut BulkState) -> DbResult<()> {
        let n = state.next;
        let row = format!("({n},{n})");
        if state.bulk.needs_flush_before(row.len()) {
            // On an error the rows stay buffered, so the retried event sends them again.
            flush(ctx, state).await?;
        }
        state.bulk.push(&row);
        state.next += 1;
        Ok(())
    }

    /// End of run (sysbench's `thread_done`): send what is left.
    pub async fn finish(&self, ctx: &mut EventCtx<'_>, state: &mut BulkState) -> DbResult<()> {
        flush(ctx, state).await
    }

    /// One table per thread.
    pub fn tables(&self) -> usize {
        self.threads
    }

    pub async fn prepare_unit(
        &self,
        conn: &mut Conn,
        t: usize,
        progress: &mut (dyn FnMut(PrepareEvent) + Send),
    ) -> Result<()> {
        progress(PrepareEvent::Message(format!("Creating table 'sbtest{t}'...")));
        let ddl = format!(
            "CREATE TABLE IF NOT EXISTS sbtest{t} (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, \
             PRIMARY KEY (id))"
        );
        run_ddl(conn, &ddl, "bulk_insert").await
    }

    /// Every thread's table exists and is empty: rows left by an earlier run
    /// would make every INSERT a duplicate key (ids restart at 1).
    pub async fn check(&self, conn: &mut Conn) -> Result<()> {
        let threads = self.threads;
        let redo = format!(
            "run `oltplab cleanup bulk_insert --threads {threads}` and `oltplab prepare bulk_insert --threads \
             {threads}` with the same --db first"
        );
        for t in 1..=threads {
            match conn.query(&format!("SELECT id FROM sbtest{t} LIMIT 1"), Fetch::Rows).await {
                Err(e) => {
                    return Err(EngineError::NotPrepared(format!(
                        "table sbtest{t} is missing in the database ({e}); run `oltplab prepare bulk_insert \
                         --threads {threads}` with the same --db first"
                    )))
                }
                Ok(r) if r.row_count > 0 => {
                    return Err(EngineError::NotPrepared(format!(
                        "table sbtest{t} already holds rows from an earlier bulk_insert run; {redo}"
                    )))
                }
                Ok(_) => {}
            }
        }
        Ok(())
    }

    pub async fn cleanup(&self, conn: &mut Conn, progress: &mut (dyn FnMut(PrepareEvent) + Send)) -> Result<()> {
        drop_tables(conn, self.threads, progress).await
    }
}

async fn flush(ctx: &mut EventCtx<'_>, state: &mut BulkState) -> DbResult<()> {
    if state.bulk.rows() > 0 {
        ctx.query(BULK_INSERTS, state.bulk.sql()).await?;
        state.bulk.clear();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{Target, TargetOptions};
    use crate::rand::Rng;
    use crate::workload::tables::BULK_PACKET_SIZE_BYTES;

    #[tokio::test]
    async fn rows_are_buffered_and_flushed_at_512_kib_and_at_the_end() {
        let Target::Fake(fake) = Target::parse("fake://", &TargetOptions::default()).unwrap() else { panic!() };
        let log = fake.log.clone();
        let mut conn = Conn::open(&Target::Fake(fake)).await.unwrap();
        let mut rng = Rng::seeded(1);
        let w = BulkInsert::new(2).unwrap();
        let worker = WorkerInfo { id: 1, count: 2 };
        let mut state = w.worker_state(worker);
        let kinds = [BULK_INSERTS];
        let events = 100_000;
        let mut ctx = EventCtx::new(&mut conn, &mut rng, worker, &kinds);
        for _ in 0..events {
            w.event(&mut ctx, &mut state).await.unwrap();
        }
        let sent_during_run = log.lock().unwrap().len();
        w.finish(&mut ctx, &mut state).await.unwrap();
        assert_eq!(ctx.tally.writes, log.lock().unwrap().len() as u64);
        let log = log.lock().unwrap();
        // About 1.4 MB of rows: two full packets during the run, the rest at the end.
        assert_eq!((sent_during_run, log.len()), (2, 3));
        assert!(log.iter().all(|s| s.starts_with("INSERT INTO sbtest2 VALUES(") && s.len() < BULK_PACKET_SIZE_BYTES));
        assert!(log[0].len() > BULK_PACKET_SIZE_BYTES - 20);
        assert!(log[0].starts_with("INSERT INTO sbtest2 VALUES(1,1),(2,2),"));
        let rows: usize = log.iter().map(|s| s.matches("),(").count() + 1).sum();
        assert_eq!(rows, events);
        assert!(log[2].ends_with(&format!("({events},{events})")));
    }
}

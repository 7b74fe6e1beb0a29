//! TPC-C: the spec's nine tables under sysbench-tpcc's names, its population (clause 4.3), its
//! five transactions (clauses 2.4–2.8) dealt from a shuffled deck to terminals with fixed home
//! warehouses, optional keying and think times (clause 5.2.5), per-type results and tpmC
//! (TPC-C-like and unaudited), and the consistency conditions of clause 3.3.2.

pub mod consistency;
mod load;
mod new_order;
mod prepare;
pub mod random;
mod schema;
mod statements;
mod summary;
mod terminal;
mod transactions;

use std::time::Duration;

use crate::db::{DbResult, Dialect};
use crate::error::{EngineError, Result};
use crate::options::{OptDef, Options};
use crate::rand::Rng;
use crate::workload::{EventCtx, WorkerInfo};

use random::CRun;
use terminal::{draw_input, keying, think, Deck, Home, Input, TxType};
use transactions::Outcome;

pub const NAME: &str = "tpcc";
pub const DESCRIPTION: &str = "TPC-C-like (unaudited): the spec's five transactions, 45/43/4/4/4 deck, home \
                               warehouses per terminal, sysbench-tpcc's table names";

/// Histogram kinds: one per transaction type (whole-transaction latency, from the first
/// attempt), then counters kept as histograms so that they follow the warm-up and the
/// intervals exactly as the latencies do, then every statement.
const KINDS: [&str; 13] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
    "new_order_rollback",
    "new_order_error",
    "payment_error",
    "order_status_error",
    "delivery_error",
    "stock_level_error",
    "delivery_skipped_district",
    "statement",
];
const ROLLBACK_KIND: usize = 5;
const ERROR_KIND: usize = 6;
const SKIPPED_KIND: usize = 11;
const SQL_KIND: usize = 12;

pub fn defs() -> Vec<OptDef> {
    vec![
        OptDef::int(
            "tables",
            1,
            1,
            1000,
            "Number of table sets (sysbench-tpcc's --tables: warehouse1, warehouse2, ...)",
        ),
        OptDef::int("scale", 1, 1, 100_000, "Warehouses per table set (sysbench-tpcc's --scale)"),
        OptDef::int("warehouses", 0, 0, 100_000, "Warehouses per table set; overrides --scale when set"),
        OptDef::bool("use_fk", false, "Add the spec's foreign keys after the load (not on SQLite)"),
        OptDef::choice(
            "trx_level",
            "default",
            &["default", "RR", "RC", "SER"],
            "Isolation level: the server's default (MariaDB REPEATABLE READ, PostgreSQL READ COMMITTED), RR, RC or \
             SER; SQLite is always serializable",
        ),
        OptDef::list("weights", "45,43,4,4,4", "Deck of new_order,payment,order_status,delivery,stock_level cards"),
        OptDef::choice(
            "think_time",
            "off",
            &["off", "spec"],
            "spec: keying and think times of clause 5.2.5 (at most 12.86 tpmC per warehouse); off: back to back",
        ),
    ]
}

pub struct Tpcc {
    sets: u32,
    warehouses: u32,
    use_fk: bool,
    think_time: bool,
    weights: [u32; 5],
    c_run: CRun,
    /// PostgreSQL's BEGIN with the isolation level of `--trx-level`.
    pg_begin: &'static str,
    /// MariaDB/MySQL: the session's isolation level, set once per connection.
    mysql_isolation: Option<&'static str>,
}

/// What one terminal keeps between transactions.
#[derive(Debug)]
pub struct TpccState {
    home: Home,
    deck: Deck,
    /// The type drawn before the keying time (with think times).
    next: Option<TxType>,
    /// A transaction that failed (deadlock, serialization failure, lost connection): the executor
    /// rolled it back, and it runs again with the same inputs.
    pending: Option<(TxType, Input)>,
    think_due: Duration,
    session_ready: bool,
}

impl Tpcc {
    pub fn new(opts: &Options, threads: usize) -> Result<Self> {
        if threads == 0 {
            return Err(EngineError::config("--threads must be at least 1"));
        }
        let warehouses = match opts.int("warehouses") {
            0 => opts.int("scale"),
            w => w,
        } as u32;
        let level = opts.str("trx_level");
        let (pg_begin, mysql_isolation) = match level {
            "RR" => ("BEGIN ISOLATION LEVEL REPEATABLE READ", Some("REPEATABLE READ")),
            "RC" => ("BEGIN ISOLATION LEVEL READ COMMITTED", Some("READ COMMITTED")),
            "SER" => ("BEGIN ISOLATION LEVEL SERIALIZABLE", Some("SERIALIZABLE")),
            _ => ("BEGIN", None),
        };
        // One C_RUN for all terminals of the run, from the run's seed.
        let c_run = CRun::draw(&mut Rng::for_stream(opts.uint("rand_seed"), u64::from(u32::MAX)));
        Ok(Self {
            sets: opts.int("tables") as u32,
            warehouses,
            use_fk: opts.flag("use_fk"),
            think_time: opts.str("think_time") == "spec",
            weights: terminal::parse_weights(opts.str("weights"))?,
            c_run,
            pg_begin,
            mysql_isolation,
        })
    }

    pub fn kinds(&self) -> Vec<&'static str> {
        KINDS.to_vec()
    }

    pub fn statements(&self, dialect: Dialect) -> Vec<(String, usize)> {
        statements::all(dialect, self.sets).into_iter().map(|sql| (sql, SQL_KIND)).collect()
    }

    pub fn worker_state(&self, worker: WorkerInfo) -> TpccState {
        TpccState {
            home: Home::of(worker.id, self.sets, self.warehouses),
            deck: Deck::new(self.weights),
            next: None,
            pending: None,
            think_due: Duration::ZERO,
            session_ready: false,
        }
    }

    /// With `--think-time=spec`: the wait before the next transaction (the previous one's think
    /// time and this one's keying time), outside its response time.
    pub fn pause(&self, state: &mut TpccState, rng: &mut Rng) -> Option<Duration> {
        if !self.think_time {
            return None;
        }
        let ty = state.deck.draw(rng);
        state.next = Some(ty);
        Some(std::mem::take(&mut state.think_due) + keying(ty))
    }

    pub async fn event(&self, ctx: &mut EventCtx<'_>, st: &mut TpccState) -> DbResult<()> {
        let (ty, input) = if let Some((ty, input)) = st.pending.take() {
            // The previous attempt failed and was rolled back: one error of this type.
            ctx.stmt_latencies_ns.push((ERROR_KIND + ty as usize, ctx.clock.elapsed_ns()));
            st.session_ready = false;
            (ty, input)
        } else {
            let ty = st.next.take().unwrap_or_else(|| st.deck.draw(ctx.rng));
            (ty, draw_input(ty, st.home, self.warehouses, &self.c_run, ctx.rng))
        };
        if !st.session_ready {
            if let (Some(level), Dialect::Mysql) = (self.mysql_isolation, ctx.conn.dialect()) {
                let sql = format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}");
                if let Err(e) = ctx.query(SQL_KIND, &sql).await {
                    st.pending = Some((ty, input));
                    return Err(e);
                }
            }
            st.session_ready = true;
        }
        let outcome = match self.transaction(ctx, st.home, &input).await {
            Ok(outcome) => outcome,
            Err(e) => {
                st.pending = Some((ty, input));
                return Err(e);
            }
        };
        let latency_ns = ctx.clock.elapsed_ns();
        ctx.stmt_latencies_ns.push((ty as usize, latency_ns));
        match outcome {
            Outcome::RolledBack => ctx.stmt_latencies_ns.push((ROLLBACK_KIND, latency_ns)),
            Outcome::Delivered { skipped } => {
                ctx.stmt_latencies_ns.extend((0..skipped).map(|_| (SKIPPED_KIND, latency_ns)));
            }
            Outcome::Committed => {}
        }
        if self.think_time {
            st.think_due = think(ty, ctx.rng);
        }
        Ok(())
    }

    pub fn summary(&self, kinds: &[crate::stats::Histogram], measured_s: f64) -> crate::result::TpccSummary {
        summary::summary(self, kinds, measured_s)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::workload::Workload;

    fn tpcc(given: &serde_json::Value) -> Tpcc {
        let opts = Options::parse(&Workload::defs(NAME).unwrap(), given.as_object().unwrap(), NAME).unwrap();
        Tpcc::new(&opts, 8).unwrap()
    }

    #[test]
    fn think_times_wait_outside_the_transaction_only_when_asked() {
        let mut rng = Rng::seeded(1);
        let off = tpcc(&json!({"scale": 2}));
        let mut state = off.worker_state(WorkerInfo { id: 3, count: 8 });
        assert_eq!(off.pause(&mut state, &mut rng), None);
        assert_eq!(state.home, Home { set: 1, w: 2, d: 2 });

        let spec = tpcc(&json!({"scale": 2, "think_time": "spec"}));
        let mut state = spec.worker_state(WorkerInfo { id: 0, count: 8 });
        let first = spec.pause(&mut state, &mut rng).unwrap();
        let ty = state.next.unwrap();
        assert_eq!(first, keying(ty)); // nothing to think about before the first transaction
        state.next = None;
        state.think_due = Duration::from_secs(7);
        let second = spec.pause(&mut state, &mut rng).unwrap();
        assert_eq!(second, Duration::from_secs(7) + keying(state.next.unwrap()));
    }

    #[test]
    fn warehouses_override_scale_and_weights_are_checked() {
        assert_eq!(tpcc(&json!({"scale": 3})).warehouses, 3);
        assert_eq!(tpcc(&json!({"scale": 3, "warehouses": 5})).warehouses, 5);
        let opts =
            Options::parse(&Workload::defs(NAME).unwrap(), json!({"weights": "1,2,3"}).as_object().unwrap(), NAME)
                .unwrap();
        assert!(Tpcc::new(&opts, 1).is_err());
    }

    #[test]
    fn one_c_run_per_seed_shared_by_all_terminals() {
        let a = tpcc(&json!({"rand_seed": 42}));
        let b = tpcc(&json!({"rand_seed": 42}));
        assert_eq!(a.c_run, b.c_run);
        assert!(random::c_last_delta_ok(a.c_run.c_last));
    }
}

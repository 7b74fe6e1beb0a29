//! prepare and cleanup: the parallel load (each of `--threads` loaders takes the next unit,
//! a table or a TPC-C warehouse part, when it is done with one) and the serial drop. All of it
//! runs on engine threads (the loaders spread over them), so the workload's futures need not be
//! `Send`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use futures_util::stream::{FuturesUnordered, StreamExt as _};

use super::connect::open_one;
use super::engine_threads::{on_a_thread, EngineThreads, Spawner};
use super::progress::{Progress, Sink};
use super::runtime::engine_threads;
use super::spec::{PrepareStep, Resolved, Spec};
use super::stop::Stop;
use crate::driver::Conn;
use crate::error::{EngineError, Result};
use crate::options::Options;
use crate::rand::Rng;
use crate::result::PrepareResult;
use crate::workload::tpcc::consistency::Report;
use crate::workload::{unfinished_prepare, PrepareEvent, Workload};

pub async fn prepare(spec: &Spec, sink: &Sink, stop: Stop) -> Result<PrepareResult> {
    let resolved = spec.resolve()?;
    let engine = EngineThreads::start(engine_threads(resolved.load.threads))?;
    let (spec, sink, spawner) = (spec.clone(), sink.clone(), engine.spawner().clone());
    let prepared = engine.spawner().spawn(0, "prepare", move || prepare_here(spec, resolved, sink, stop, spawner));
    let out = prepared.join().await;
    drop(engine);
    out?
}

/// The prepare, on the first engine thread; its loaders on all of them.
async fn prepare_here(
    spec: Spec,
    resolved: Resolved,
    sink: Sink,
    stop: Stop,
    engine: Spawner,
) -> Result<PrepareResult> {
    let Resolved { workload, load, target, options } = resolved;
    let sink = &sink;
    let started = Instant::now();
    let mut probe = open_one(&target, &[]).await?;
    let server_version = probe.server_info().await.map(|i| i.version).unwrap_or_default();
    // TPC-C keeps its own record of a finished load (tpcc_meta), and keeps a finished one.
    let marked = !matches!(workload, Workload::Tpcc(_));
    if let Some(step) = spec.prepare_step {
        // A distributed prepare's first and last steps, run by one client before any client
        // loads its units and after all did: the marker, and TPC-C's schema and indexes. `begin`
        // answers in `tables` how many units need loading (0: TPC-C's load is already there).
        let mut progress = |e: PrepareEvent| sink.send(to_progress(e));
        let mut tables = 0;
        match step {
            PrepareStep::Begin => {
                if marked {
                    begin_marker(&mut probe, &workload, &options, sink).await?;
                }
                if workload.prepare_begin(&mut probe, &mut progress).await? {
                    tables = workload.prepare_units();
                }
            }
            PrepareStep::End => {
                workload.prepare_end(&mut probe, &mut progress).await?;
                if marked {
                    unfinished_prepare::end(&mut probe).await?;
                }
            }
        }
        probe.close().await;
        return Ok(PrepareResult {
            workload: workload.name().to_string(),
            options,
            driver: target.driver_name().to_string(),
            server_version,
            tables,
            duration_s: started.elapsed().as_secs_f64(),
        });
    }
    // A distributed client loads only its share, beside others: the marker and TPC-C's schema
    // are the driver's steps (prepare_step), as one client cannot tell another's tables from
    // leftovers.
    let whole = spec.units.is_none();
    if whole && marked {
        begin_marker(&mut probe, &workload, &options, sink).await?;
    }
    let load_needed = !whole || workload.prepare_begin(&mut probe, &mut |e| sink.send(to_progress(e))).await?;
    let units =
        if load_needed { units_to_prepare(spec.units.as_deref(), workload.prepare_units())? } else { Vec::new() };
    let workers = load.threads.min(units.len());
    let workload = Arc::new(workload);
    // Each loader takes the next unit when it is done with one, so units of unequal size
    // (TPC-C's) do not leave loaders idle while one works through a list dealt in advance.
    let (units, next_unit) = (Arc::new(units), Arc::new(AtomicUsize::new(0)));
    let mut loaders: FuturesUnordered<_> = (0..workers)
        .map(|i| {
            let (workload, target, sink) = (workload.clone(), target.clone(), sink.clone());
            let (units, next_unit) = (units.clone(), next_unit.clone());
            let load_units = move || async move {
                let mut conn = open_one(&target, &[]).await?;
                let mut progress = |e: PrepareEvent| sink.send(to_progress(e));
                while let Some(&table) = units.get(next_unit.fetch_add(1, Ordering::Relaxed)) {
                    // One stream per table: the data do not depend on --threads.
                    let mut rng = Rng::for_stream(load.rand_seed, 1_000_000 + table as u64);
                    workload.prepare_unit(&mut conn, table, &mut rng, &mut progress).await?;
                }
                conn.close().await;
                Ok::<(), EngineError>(())
            };
            engine.spawn(i, "a prepare task", load_units).join()
        })
        .collect();
    let mut user_stop = stop.clone();
    loop {
        tokio::select! {
            joined = loaders.next() => match joined {
                None => break,
                Some(Ok(Ok(()))) => {}
                // The other loaders are dropped with the engine threads.
                Some(Ok(Err(e)) | Err(e)) => return Err(e),
            },
            () = user_stop.stopped() => {
                return Err(EngineError::Interrupted("during prepare; the data are incomplete, run prepare again".into()));
            }
        }
    }
    if load_needed && whole {
        workload.prepare_end(&mut probe, &mut |e| sink.send(to_progress(e))).await?;
    }
    if whole && marked {
        unfinished_prepare::end(&mut probe).await?;
    }
    probe.close().await;
    Ok(PrepareResult {
        workload: workload.name().to_string(),
        options,
        driver: target.driver_name().to_string(),
        server_version,
        tables: units.len(),
        duration_s: started.elapsed().as_secs_f64(),
    })
}

/// Undoes an unfinished prepare (or refuses finished tables), then marks this one as started.
async fn begin_marker(conn: &mut Conn, workload: &Workload, options: &Options, sink: &Sink) -> Result<()> {
    undo_unfinished_or_refuse_existing(conn, workload, sink).await?;
    let options_json = serde_json::to_string(options).map_err(|e| EngineError::Internal(e.to_string()))?;
    unfinished_prepare::begin(conn, workload.name(), &options_json).await
}

/// Before loading: an unfinished prepare's tables are dropped (it loaded an unknown share of
/// them), so that prepare can always be run again; a finished one's are kept, and refused as
/// sysbench's prepare refuses them.
async fn undo_unfinished_or_refuse_existing(conn: &mut Conn, workload: &Workload, sink: &Sink) -> Result<()> {
    let mut progress = |e: PrepareEvent| sink.send(to_progress(e));
    let Some((name, options_json)) = unfinished_prepare::find(conn).await? else {
        if workload.check(conn).await.is_ok() {
            return Err(EngineError::NotPrepared(format!(
                "the tables of {} already exist; run `oltplab cleanup {}` with the same --db and options first",
                workload.name(),
                workload.name()
            )));
        }
        return Ok(());
    };
    progress(PrepareEvent::Message(
        "An earlier prepare did not finish: dropping its tables to load them again".to_string(),
    ));
    // The unfinished prepare's own workload and options say which tables it made.
    let given: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&options_json).unwrap_or_default();
    let mut defs = super::spec::LoadShape::defs();
    defs.extend(Workload::defs(&name).unwrap_or_default());
    let earlier = Options::parse(&defs, &given, &name).and_then(|o| Workload::new(&name, &o, 1));
    match earlier {
        Ok(earlier) => earlier.cleanup(conn, &mut progress).await?,
        Err(_) => workload.cleanup(conn, &mut progress).await?,
    }
    unfinished_prepare::end(conn).await
}

/// The units (tables) to build: all of them, or a distributed client's share of them.
fn units_to_prepare(given: Option<&[usize]>, tables: usize) -> Result<Vec<usize>> {
    let Some(units) = given else { return Ok((1..=tables).collect()) };
    match units.iter().find(|&&u| u == 0 || u > tables) {
        Some(bad) => Err(EngineError::config(format!(
            "prepare unit {bad} is out of range: this workload has units 1 to {tables}"
        ))),
        None => Ok(units.to_vec()),
    }
}

pub async fn cleanup(spec: &Spec, sink: &Sink) -> Result<PrepareResult> {
    let resolved = spec.resolve()?;
    let sink = sink.clone();
    on_a_thread("cleanup", move || cleanup_here(resolved, sink)).await
}

async fn cleanup_here(resolved: Resolved, sink: Sink) -> Result<PrepareResult> {
    let Resolved { workload, target, options, .. } = resolved;
    let started = Instant::now();
    let mut conn = open_one(&target, &[]).await?;
    let server_version = conn.server_info().await.map(|i| i.version).unwrap_or_default();
    let mut progress = |e: PrepareEvent| sink.send(to_progress(e));
    workload.cleanup(&mut conn, &mut progress).await?;
    unfinished_prepare::end(&mut conn).await?;
    conn.close().await;
    Ok(PrepareResult {
        workload: workload.name().to_string(),
        options,
        driver: target.driver_name().to_string(),
        server_version,
        tables: workload.prepare_units(),
        duration_s: started.elapsed().as_secs_f64(),
    })
}

fn to_progress(e: PrepareEvent) -> Progress {
    match e {
        PrepareEvent::Message(text) => Progress::Message { text },
        PrepareEvent::Rows { table, done, total } => Progress::Rows { table, done, total },
    }
}

/// `oltplab check tpcc`: the consistency conditions of clause 3.3.2 on the workload's table sets.
pub async fn check(spec: &Spec) -> Result<Report> {
    let Resolved { workload, target, .. } = spec.resolve()?;
    let Workload::Tpcc(tpcc) = workload else {
        return Err(EngineError::config(format!("check supports tpcc only, not {}", workload.name())));
    };
    on_a_thread("check", move || async move {
        let mut conn = open_one(&target, &[]).await?;
        let report = tpcc.consistency(&mut conn, target.driver_name()).await;
        conn.close().await;
        report
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::units_to_prepare;

    #[test]
    fn a_client_builds_its_share_of_the_units_or_all_of_them() {
        assert_eq!(units_to_prepare(None, 3).unwrap(), vec![1, 2, 3]);
        assert_eq!(units_to_prepare(Some(&[2, 4]), 4).unwrap(), vec![2, 4]);
        let err = units_to_prepare(Some(&[1, 5]), 4).unwrap_err().to_string();
        assert!(err.contains("prepare unit 5 is out of range"), "{err}");
        assert!(units_to_prepare(Some(&[0]), 4).is_err());
    }
}

//! prepare and cleanup: sysbench's parallel table load (worker `t` builds tables
//! t+1, t+1+threads, ...) and the serial drop.

use std::time::Instant;

use tokio::task::JoinSet;

use super::connect::open_one;
use super::progress::{Progress, Sink};
use super::spec::{Resolved, Spec};
use super::stop::Stop;
use crate::error::{EngineError, Result};
use crate::rand::Rng;
use crate::result::PrepareResult;
use crate::workload::PrepareEvent;

pub async fn prepare(spec: &Spec, sink: &Sink, stop: Stop) -> Result<PrepareResult> {
    let Resolved { workload, load, target, options } = spec.resolve()?;
    let started = Instant::now();
    let mut probe = open_one(&target, &[]).await?;
    let server_version = probe.server_info().await.map(|i| i.version).unwrap_or_default();
    let load_needed = workload.prepare_begin(&mut probe, &mut |e| sink.send(to_progress(e))).await?;
    let tables = if load_needed { workload.prepare_units() } else { 0 };
    let workers = load.threads.min(tables);
    let workload = std::sync::Arc::new(workload);
    let mut tasks = JoinSet::new();
    for t in 0..workers {
        let (workload, target, sink) = (workload.clone(), target.clone(), sink.clone());
        tasks.spawn(async move {
            let mut conn = open_one(&target, &[]).await?;
            let mut progress = |e: PrepareEvent| sink.send(to_progress(e));
            for table in (t + 1..=tables).step_by(workers) {
                // One stream per table: the data do not depend on --threads.
                let mut rng = Rng::for_stream(load.rand_seed, 1_000_000 + table as u64);
                workload.prepare_unit(&mut conn, table, &mut rng, &mut progress).await?;
            }
            conn.close().await;
            Ok::<(), EngineError>(())
        });
    }
    let mut user_stop = stop.clone();
    loop {
        tokio::select! {
            joined = tasks.join_next() => match joined {
                None => break,
                Some(Ok(Ok(()))) => {}
                Some(Ok(Err(e))) => return Err(e),
                Some(Err(e)) => return Err(EngineError::Internal(format!("prepare task failed: {e}"))),
            },
            () = user_stop.stopped() => {
                tasks.abort_all();
                return Err(EngineError::Interrupted("during prepare; the data are incomplete, run prepare again".into()));
            }
        }
    }
    if load_needed {
        workload.prepare_end(&mut probe, &mut |e| sink.send(to_progress(e))).await?;
    }
    probe.close().await;
    Ok(PrepareResult {
        workload: workload.name().to_string(),
        options,
        driver: target.driver_name().to_string(),
        server_version,
        tables,
        duration_s: started.elapsed().as_secs_f64(),
    })
}

pub async fn cleanup(spec: &Spec, sink: &Sink) -> Result<PrepareResult> {
    let Resolved { workload, target, options, .. } = spec.resolve()?;
    let started = Instant::now();
    let mut conn = open_one(&target, &[]).await?;
    let server_version = conn.server_info().await.map(|i| i.version).unwrap_or_default();
    let mut progress = |e: PrepareEvent| sink.send(to_progress(e));
    workload.cleanup(&mut conn, &mut progress).await?;
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
pub async fn check(spec: &Spec) -> Result<crate::workload::tpcc::consistency::Report> {
    let Resolved { workload, target, .. } = spec.resolve()?;
    let crate::workload::Workload::Tpcc(tpcc) = &workload else {
        return Err(EngineError::config(format!("check supports tpcc only, not {}", workload.name())));
    };
    let mut conn = open_one(&target, &[]).await?;
    let report = tpcc.consistency(&mut conn, target.driver_name()).await;
    conn.close().await;
    report
}

//! One sysbench event per script: the `event()` bodies and the `execute_*()`
//! helpers of `oltp_common.lua`, drawing random values in the same order.

use super::{Kind, Oltp, OltpState, Script};
use crate::db::{DbResult, Dialect, Value};
use crate::rand::{rand_string, C_TEMPLATE, PAD_TEMPLATE};
use crate::workload::EventCtx;

impl Oltp {
    pub async fn event(&self, ctx: &mut EventCtx<'_>, state: &mut OltpState) -> DbResult<()> {
        let o = &self.o;
        // master's check_reconnect(), every --reconnect events; done at the start of the next event so
        // that a failed reconnect makes the executor reconnect without running this event twice.
        if state.reconnect_due {
            state.reconnect_due = false;
            // Boxed out of line: a reconnect's future (about 4 KB, the driver's whole connect)
            // would otherwise be part of every connection's task, in memory all run long, and
            // of this function's frame (`boxed.rs`).
            crate::boxed::boxed(|| ctx.conn.reconnect()).await?;
            // In the event's latency, not in its first statement's.
            ctx.clock.restart();
        }
        let trx = self.script.transactional() && !o.skip_trx;
        if trx {
            ctx.exec(self.stmt(Kind::Begin, 1), &[]).await?;
        }
        match self.script {
            Script::ReadOnly | Script::ReadWrite | Script::WriteOnly => {
                if self.script != Script::WriteOnly {
                    self.by_id(ctx, Kind::PointSelects, o.point_selects).await?;
                    if o.range_selects {
                        for kind in Kind::RANGES {
                            self.ranges(ctx, kind).await?;
                        }
                    }
                }
                if self.script != Script::ReadOnly {
                    self.by_id(ctx, Kind::IndexUpdates, o.index_updates).await?;
                    self.non_index_updates(ctx).await?;
                    self.delete_inserts(ctx).await?;
                }
            }
            Script::PointSelect => self.by_id(ctx, Kind::PointSelects, o.point_selects).await?,
            Script::UpdateIndex => self.by_id(ctx, Kind::IndexUpdates, o.index_updates).await?,
            Script::UpdateNonIndex => self.non_index_updates(ctx).await?,
            // oltp_delete: exactly one DELETE, whatever --delete-inserts says.
            Script::Delete => self.by_id(ctx, Kind::Deletes, 1).await?,
            Script::Insert => self.insert(ctx).await?,
            Script::RandomPoints => self.random_points(ctx).await?,
            Script::RandomRanges => self.random_ranges(ctx).await?,
        }
        if trx {
            ctx.exec(self.stmt(Kind::Commit, 1), &[]).await?;
        }
        state.events += 1;
        state.reconnect_due = o.reconnect > 0 && state.events % o.reconnect == 0;
        Ok(())
    }

    /// `count` statements of `kind` on one random table, each with a fresh id
    /// (point selects, index updates, `oltp_delete`).
    async fn by_id(&self, ctx: &mut EventCtx<'_>, kind: Kind, count: u32) -> DbResult<()> {
        let t = self.table(ctx.rng);
        for _ in 0..count {
            let id = self.id(ctx.rng);
            ctx.exec(self.stmt(kind, t), &[Value::Int(id.into())]).await?;
        }
        Ok(())
    }

    /// `execute_range()`: `BETWEEN id AND id+range_size-1`, not clamped to the table.
    async fn ranges(&self, ctx: &mut EventCtx<'_>, kind: Kind) -> DbResult<()> {
        let t = self.table(ctx.rng);
        let end_offset = i64::from(self.o.range_size) - 1;
        for _ in 0..self.o.range_count(kind) {
            let id = i64::from(self.id(ctx.rng));
            ctx.exec(self.stmt(kind, t), &[Value::Int(id), Value::Int(id + end_offset)]).await?;
        }
        Ok(())
    }

    async fn non_index_updates(&self, ctx: &mut EventCtx<'_>) -> DbResult<()> {
        let t = self.table(ctx.rng);
        for _ in 0..self.o.non_index_updates {
            // sysbench binds c before drawing the id.
            let c = rand_string(ctx.rng, C_TEMPLATE);
            let id = self.id(ctx.rng);
            ctx.exec(self.stmt(Kind::NonIndexUpdates, t), &[Value::Text(c), Value::Int(id.into())]).await?;
        }
        Ok(())
    }

    /// DELETE an id and INSERT it again with a fresh k (same distribution), c and pad.
    async fn delete_inserts(&self, ctx: &mut EventCtx<'_>) -> DbResult<()> {
        let t = self.table(ctx.rng);
        for _ in 0..self.o.delete_inserts {
            let id = i64::from(self.id(ctx.rng));
            let k = i64::from(self.id(ctx.rng));
            let c = rand_string(ctx.rng, C_TEMPLATE);
            let pad = rand_string(ctx.rng, PAD_TEMPLATE);
            ctx.exec(self.stmt(Kind::Deletes, t), &[Value::Int(id)]).await?;
            let row = [Value::Int(id), Value::Int(k), Value::Text(c), Value::Text(pad)];
            ctx.exec(self.stmt(Kind::Inserts, t), &row).await?;
        }
        Ok(())
    }

    /// `oltp_insert`: one text INSERT. With --auto-inc the server assigns the id
    /// (from id 0 on `MySQL`, from a column list without id elsewhere); without
    /// it the id comes from the shared unique sequence, shifted into INT's range.
    async fn insert(&self, ctx: &mut EventCtx<'_>) -> DbResult<()> {
        let t = self.table(ctx.rng);
        let k = self.id(ctx.rng);
        let c = rand_string(ctx.rng, C_TEMPLATE);
        let pad = rand_string(ctx.rng, PAD_TEMPLATE);
        let sql = if self.o.auto_inc && ctx.conn.dialect() != Dialect::Mysql {
            format!("INSERT INTO sbtest{t} (k, c, pad) VALUES ({k}, '{c}', '{pad}')")
        } else {
            let id = if self.o.auto_inc { 0 } else { i64::from(self.unique.next()) - 2_147_483_648 };
            format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({id}, {k}, '{c}', '{pad}')")
        };
        ctx.query(self.kind_index(Kind::Inserts), &sql).await?;
        Ok(())
    }

    /// This worker's k slice: `[rlen * tid, rlen * tid + rlen]` with `rlen = table_size / threads`
    /// as a Lua number, truncated to `uint32_t` when passed to `sb_rand`.
    fn k_slice(&self, ctx: &EventCtx<'_>) -> (u32, u32) {
        let threads = ctx.worker.count.max(1);
        let rlen = f64::from(self.o.table_size) / threads as f64;
        let rmin = rlen * (ctx.worker.id % threads) as f64;
        (rmin as u32, (rmin + rlen) as u32)
    }

    async fn random_points(&self, ctx: &mut EventCtx<'_>) -> DbResult<()> {
        let (lo, hi) = self.k_slice(ctx);
        let params: Vec<Value> =
            (0..self.o.random_points).map(|_| Value::Int(self.dist.sample(ctx.rng, lo, hi).into())).collect();
        ctx.exec(self.stmt(Kind::RandomPoints, 1), &params).await?;
        Ok(())
    }

    async fn random_ranges(&self, ctx: &mut EventCtx<'_>) -> DbResult<()> {
        let (lo, hi) = self.k_slice(ctx);
        let mut params = Vec::with_capacity(2 * self.o.number_of_ranges as usize);
        for _ in 0..self.o.number_of_ranges {
            let v = i64::from(self.dist.sample(ctx.rng, lo, hi));
            params.extend([Value::Int(v), Value::Int(v + i64::from(self.o.delta))]);
        }
        ctx.exec(self.stmt(Kind::RandomRanges, 1), &params).await?;
        Ok(())
    }
}

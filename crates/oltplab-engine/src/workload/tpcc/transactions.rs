//! The five transaction profiles of clauses 2.4.2, 2.5.2, 2.6.2, 2.7.4 and 2.8.2, each between
//! an explicit BEGIN and COMMIT (New-Order's intended 1% ends in ROLLBACK instead).

use crate::db::{DbError, DbResult, Dialect, QueryResult, Value};
use crate::workload::EventCtx;

use super::random::{int, money, money_value, number, text};
use super::statements::{id, Sql};
use super::terminal::{Customer, Home, Input};
use super::{Tpcc, SQL_KIND};

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    /// New-Order's intended rollback (an unused item id).
    RolledBack,
    /// Delivery: districts that had no new order to deliver.
    Delivered {
        skipped: u32,
    },
}

pub(super) fn int_value(v: u32) -> Value {
    Value::Int(v.into())
}

pub(super) fn cents(v: &Value) -> i64 {
    (number(v) * 100.0).round() as i64
}

/// The first row of a read that the data guarantee (a missing one means a broken database).
pub(super) fn first_row(r: QueryResult, what: &str) -> DbResult<Vec<Value>> {
    r.rows.into_iter().next().ok_or_else(|| {
        DbError::fatal("TPCC", format!("{what} not found: the TPC-C data are incomplete; run `oltplab check tpcc`"))
    })
}

impl Tpcc {
    pub(super) async fn begin(&self, ctx: &mut EventCtx<'_>, writes: bool) -> DbResult<()> {
        let sql = match (ctx.conn.dialect(), writes) {
            // SQLite's plain BEGIN would fail at the first write when another writer holds the
            // lock; BEGIN IMMEDIATE queues for it, as row locks queue on a server.
            (Dialect::Sqlite, true) => "BEGIN IMMEDIATE",
            (Dialect::Postgres, _) => self.pg_begin,
            _ => "BEGIN",
        };
        ctx.query(SQL_KIND, sql).await.map(|_| ())
    }

    pub(super) async fn commit(ctx: &mut EventCtx<'_>) -> DbResult<()> {
        ctx.query(SQL_KIND, "COMMIT").await.map(|_| ())
    }

    pub(super) async fn transaction(&self, ctx: &mut EventCtx<'_>, home: Home, input: &Input) -> DbResult<Outcome> {
        match input {
            Input::NewOrder { d, c_id, lines, .. } => self.new_order(ctx, home, *d, *c_id, lines).await,
            Input::Payment { d, c_w, c_d, customer, amount_cents } => {
                self.payment(ctx, home, *d, (*c_w, *c_d), customer, *amount_cents).await
            }
            Input::OrderStatus { d, customer } => self.order_status(ctx, home, *d, customer).await,
            Input::Delivery { carrier } => self.delivery(ctx, home, *carrier).await,
            Input::StockLevel { threshold } => self.stock_level(ctx, home, *threshold).await,
        }
    }

    /// The customer's id: given, or the middle one (⌈n/2⌉ in `C_FIRST` order) of those with the name.
    async fn customer_id(&self, ctx: &mut EventCtx<'_>, t: u32, c_w: u32, c_d: u32, who: &Customer) -> DbResult<u32> {
        match who {
            Customer::Id(given) => Ok(*given),
            Customer::Last(name) => {
                let params = [int_value(c_w), int_value(c_d), Value::Text(name.clone())];
                let rows = ctx.exec_rows(id(Sql::CustomerByName, t), &params).await?.rows;
                if rows.is_empty() {
                    return Err(DbError::fatal(
                        "TPCC",
                        format!(
                            "no customer named {name} in district {c_d} of warehouse {c_w}: the data are incomplete"
                        ),
                    ));
                }
                Ok(int(&rows[(rows.len() - 1) / 2][0]) as u32)
            }
        }
    }

    /// Clause 2.5.2.2.
    async fn payment(
        &self,
        ctx: &mut EventCtx<'_>,
        home: Home,
        d: u32,
        (c_w, c_d): (u32, u32),
        customer: &Customer,
        amount_cents: i64,
    ) -> DbResult<Outcome> {
        let (t, w) = (home.set, home.w);
        let amount = money_value(amount_cents);
        self.begin(ctx, true).await?;
        ctx.exec(id(Sql::PayWarehouse, t), &[amount.clone(), int_value(w)]).await?;
        let wh = first_row(ctx.exec_rows(id(Sql::PayWarehouseRead, t), &[int_value(w)]).await?, "warehouse")?;
        ctx.exec(id(Sql::PayDistrict, t), &[amount.clone(), int_value(w), int_value(d)]).await?;
        let district =
            first_row(ctx.exec_rows(id(Sql::PayDistrictRead, t), &[int_value(w), int_value(d)]).await?, "district")?;
        let paying_id = self.customer_id(ctx, t, c_w, c_d, customer).await?;
        let key = [int_value(c_w), int_value(c_d), int_value(paying_id)];
        let customer_row = first_row(ctx.exec_rows(id(Sql::PayCustomer, t), &key).await?, "customer")?;
        if text(&customer_row[10]) == "BC" {
            let data = first_row(ctx.exec_rows(id(Sql::PayCustomerData, t), &key).await?, "customer")?;
            let mut new_data = format!("{paying_id} {c_d} {c_w} {d} {w} {} | {}", money(amount_cents), text(&data[0]));
            new_data.truncate(500);
            let params =
                [amount.clone(), amount.clone(), Value::Text(new_data), key[0].clone(), key[1].clone(), key[2].clone()];
            ctx.exec(id(Sql::PayCustomerUpdateData, t), &params).await?;
        } else {
            let params = [amount.clone(), amount.clone(), key[0].clone(), key[1].clone(), key[2].clone()];
            ctx.exec(id(Sql::PayCustomerUpdate, t), &params).await?;
        }
        let mut h_data = format!("{}    {}", text(&wh[0]), text(&district[0]));
        h_data.truncate(24);
        let history = [
            int_value(c_d),
            int_value(c_w),
            int_value(paying_id),
            int_value(d),
            int_value(w),
            amount,
            Value::Text(h_data),
        ];
        ctx.exec(id(Sql::PayHistory, t), &history).await?;
        Self::commit(ctx).await?;
        Ok(Outcome::Committed)
    }

    /// Clause 2.6.2.2 (read-only).
    async fn order_status(&self, ctx: &mut EventCtx<'_>, home: Home, d: u32, customer: &Customer) -> DbResult<Outcome> {
        let (t, w) = (home.set, home.w);
        self.begin(ctx, false).await?;
        let c_id = self.customer_id(ctx, t, w, d, customer).await?;
        let key = [int_value(w), int_value(d), int_value(c_id)];
        ctx.exec(id(Sql::OsCustomer, t), &key).await?;
        let order = ctx.exec_rows(id(Sql::OsOrder, t), &key).await?;
        if let Some(order) = order.rows.first() {
            ctx.exec(id(Sql::OsLines, t), &[int_value(w), int_value(d), order[0].clone()]).await?;
        }
        Self::commit(ctx).await?;
        Ok(Outcome::Committed)
    }

    /// Clause 2.7.4: all ten districts in one database transaction (what every common kit does;
    /// the deferred execution of 2.7.2 is not modelled: the terminal waits for it).
    async fn delivery(&self, ctx: &mut EventCtx<'_>, home: Home, carrier: u32) -> DbResult<Outcome> {
        let (t, w) = (home.set, home.w);
        let mut skipped = 0;
        self.begin(ctx, true).await?;
        for d in 1..=super::load::DISTRICTS {
            let oldest = ctx.exec_rows(id(Sql::DlvNewOrder, t), &[int_value(w), int_value(d)]).await?;
            let Some(no_o_id) = oldest.first_int() else {
                skipped += 1;
                continue;
            };
            let key = [int_value(w), int_value(d), Value::Int(no_o_id)];
            // Another delivery may have taken it between the read and the lock (PostgreSQL's
            // READ COMMITTED re-check returns no row then): skip, as for an empty district.
            if ctx.exec(id(Sql::DlvDelete, t), &key).await?.row_count == 0 {
                skipped += 1;
                continue;
            }
            let order = first_row(ctx.exec_rows(id(Sql::DlvOrder, t), &key).await?, "order")?;
            let c_id = int(&order[0]);
            let carrier_params = [int_value(carrier), key[0].clone(), key[1].clone(), key[2].clone()];
            ctx.exec(id(Sql::DlvCarrier, t), &carrier_params).await?;
            ctx.exec(id(Sql::DlvLines, t), &key).await?;
            let sum = first_row(ctx.exec_rows(id(Sql::DlvAmount, t), &key).await?, "order lines")?;
            let customer = [money_value(cents(&sum[0])), int_value(w), int_value(d), Value::Int(c_id)];
            ctx.exec(id(Sql::DlvCustomer, t), &customer).await?;
        }
        Self::commit(ctx).await?;
        Ok(Outcome::Delivered { skipped })
    }

    /// Clause 2.8.2.2 (read-only), on the terminal's own district.
    async fn stock_level(&self, ctx: &mut EventCtx<'_>, home: Home, threshold: u32) -> DbResult<Outcome> {
        let (t, w, d) = (home.set, home.w, home.d);
        self.begin(ctx, false).await?;
        let next = ctx.exec_rows(id(Sql::SlNextOrder, t), &[int_value(w), int_value(d)]).await?;
        let next = first_row(next, "district").map(|r| int(&r[0]))?;
        let params =
            [int_value(w), int_value(d), Value::Int(next), Value::Int(next - 20), int_value(w), int_value(threshold)];
        ctx.exec(id(Sql::SlCount, t), &params).await?;
        Self::commit(ctx).await?;
        Ok(Outcome::Committed)
    }
}

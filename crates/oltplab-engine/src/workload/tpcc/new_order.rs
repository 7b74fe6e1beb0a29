//! New-Order (clause 2.4.2.2) in 11 statements whatever the order's size: the header's reads
//! and writes, then all the lines at once (their items, their stock rows locked, one stock
//! update and one order-line insert; see [`Batch`]).

use crate::db::{DbError, DbResult, Value};
use crate::workload::EventCtx;

use super::random::{int, money_value, text};
use super::statements::{batch, id, Batch, Sql, LINE_COLUMNS, MAX_LINES, STOCK_UPDATE_COLUMNS};
use super::terminal::{Home, Line};
use super::transactions::{cents, first_row, int_value, Outcome};
use super::{Tpcc, SQL_KIND};

/// What an order does to one stock row (an item ordered twice from one warehouse is one row).
struct StockChange {
    i_id: u32,
    w: u32,
    quantity: i64,
    ytd: i64,
    orders: i64,
    remote: i64,
    dist_info: String,
}

impl StockChange {
    fn row(&self) -> [Value; STOCK_UPDATE_COLUMNS] {
        let ints = [i64::from(self.i_id), i64::from(self.w), self.quantity, self.ytd, self.orders, self.remote];
        ints.map(Value::Int)
    }
}

/// `rows` followed by copies of `filler` up to [`MAX_LINES`] rows: the batched writes take a
/// fixed number of rows, and the filler's match no stock row (item 0) or insert nothing
/// (line number 0).
fn padded<const N: usize>(rows: impl IntoIterator<Item = [Value; N]>, filler: &[Value; N]) -> Vec<Value> {
    let mut out: Vec<Value> = rows.into_iter().flatten().collect();
    while out.len() < N * MAX_LINES {
        out.extend(filler.iter().cloned());
    }
    out
}

impl Tpcc {
    pub(super) async fn new_order(
        &self,
        ctx: &mut EventCtx<'_>,
        home: Home,
        d: u32,
        c_id: u32,
        lines: &[Line],
    ) -> DbResult<Outcome> {
        let (t, w) = (home.set, home.w);
        self.begin(ctx, true).await?;
        // W_TAX, D_TAX, C_DISCOUNT and the brand-generic flag only make the order total shown
        // on the terminal's screen, which nothing stores: they are read, as the profile says,
        // and not computed with.
        let key = [int_value(w), int_value(d), int_value(c_id)];
        first_row(ctx.exec_rows(id(Sql::NoCustomerWarehouse, t), &key).await?, "customer")?;
        let district = first_row(ctx.exec_rows(id(Sql::NoDistrict, t), &key[..2]).await?, "district")?;
        let o_id = int(&district[1]);
        ctx.exec(id(Sql::NoDistrictNext, t), &key[..2]).await?;
        let all_local = lines.iter().all(|l| l.supply_w == w);
        let line_count = int_value(lines.len() as u32);
        let order = [
            Value::Int(o_id),
            key[1].clone(),
            key[0].clone(),
            key[2].clone(),
            line_count,
            Value::Int(i64::from(all_local)),
        ];
        ctx.exec(id(Sql::NoOrder, t), &order).await?;
        // NEW-ORDER's (no_o_id, no_d_id, no_w_id) are the order's first three.
        ctx.exec(id(Sql::NoNewOrder, t), &order[..3]).await?;

        let prices = self.item_prices_cents(ctx, t, lines).await?;
        let mut stock = self.locked_stock(ctx, t, d, lines).await?;
        let mut order_lines = Vec::with_capacity(lines.len());
        let mut unused_item = false;
        for (number, line) in (1u32..).zip(lines) {
            let Some(&(_, price_cents)) = prices.iter().find(|(i_id, _)| *i_id == line.i_id) else {
                // "Item number is not valid" (the last line): the order rolls back once the
                // other lines are processed; this line's stock and order line are the steps
                // clause 2.4.2.3 lets it skip.
                unused_item = true;
                continue;
            };
            let Some(row) = stock.iter_mut().find(|s| (s.i_id, s.w) == (line.i_id, line.supply_w)) else {
                return Err(DbError::fatal(
                    "TPCC",
                    "stock row not found: the TPC-C data are incomplete; run `oltplab check tpcc`".to_string(),
                ));
            };
            // A second line of the same stock row takes its quantity from what the first left.
            let qty = i64::from(line.qty);
            row.quantity = if row.quantity >= qty + 10 { row.quantity - qty } else { row.quantity - qty + 91 };
            row.ytd += qty;
            row.orders += 1;
            row.remote += i64::from(line.supply_w != w);
            order_lines.push([
                Value::Int(o_id),
                int_value(d),
                int_value(w),
                int_value(number),
                int_value(line.i_id),
                int_value(line.supply_w),
                Value::Int(qty),
                money_value(qty * price_cents),
                Value::Text(row.dist_info.clone()),
            ]);
        }
        stock.retain(|s| s.orders > 0);
        let no_stock = [0; STOCK_UPDATE_COLUMNS].map(Value::Int);
        ctx.exec(batch(Batch::StockUpdate, t), &padded(stock.iter().map(StockChange::row), &no_stock)).await?;
        // A line that inserts nothing (number 0), with an amount and a text where the real ones have them.
        let mut no_line: [Value; LINE_COLUMNS] = [0; LINE_COLUMNS].map(Value::Int);
        (no_line[7], no_line[8]) = (money_value(0), Value::Text(String::new()));
        ctx.exec(batch(Batch::Lines, t), &padded(order_lines, &no_line)).await?;
        if unused_item {
            ctx.query(SQL_KIND, "ROLLBACK").await?;
            return Ok(Outcome::RolledBack);
        }
        Self::commit(ctx).await?;
        Ok(Outcome::Committed)
    }

    /// Every line's item in one read (an unused id has no row): item id and price in cents.
    async fn item_prices_cents(&self, ctx: &mut EventCtx<'_>, t: u32, lines: &[Line]) -> DbResult<Vec<(u32, i64)>> {
        let ids = padded(lines.iter().map(|l| [int_value(l.i_id)]), &[int_value(lines[0].i_id)]);
        let items = ctx.exec_rows(batch(Batch::Items, t), &ids).await?;
        Ok(items.rows.iter().map(|r| (int(&r[0]) as u32, cents(&r[1]))).collect())
    }

    /// Every line's stock row, locked, in one read, with `S_DIST_xx` of district `d`.
    async fn locked_stock(&self, ctx: &mut EventCtx<'_>, t: u32, d: u32, lines: &[Line]) -> DbResult<Vec<StockChange>> {
        let key = |l: &Line| [int_value(l.i_id), int_value(l.supply_w)];
        let keys = padded(lines.iter().map(key), &key(&lines[0]));
        let rows = ctx.exec_rows(batch(Batch::Stocks, t), &keys).await?.rows;
        let dist_column = 3 + d as usize;
        Ok(rows
            .iter()
            .map(|r| StockChange {
                i_id: int(&r[0]) as u32,
                w: int(&r[1]) as u32,
                quantity: int(&r[2]),
                ytd: 0,
                orders: 0,
                remote: 0,
                dist_info: text(&r[dist_column]).to_owned(),
            })
            .collect())
    }
}

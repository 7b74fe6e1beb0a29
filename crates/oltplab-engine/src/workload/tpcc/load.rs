//! The initial population of clause 4.3: items once per table set, then each warehouse with
//! its stock, districts, customers, history, orders, order lines and new orders, through
//! [`Conn::bulk_load_text`] (COPY on PostgreSQL, LOAD DATA on MariaDB, multi-row INSERTs on SQLite),
//! in chunks of sysbench's 512 KiB.

use crate::driver::{Conn, TabRows};
use crate::error::{EngineError, Result};
use crate::rand::Rng;
use crate::workload::tables::BULK_PACKET_SIZE_BYTES;
use crate::workload::PrepareEvent;

use super::random::{
    astring, data_with_original, last_name_into, money_into, now_timestamp, nstring, nurand, rate, state, zip,
    C_LAST_LOAD,
};

pub type Progress<'a> = &'a mut (dyn FnMut(PrepareEvent) + Send);

pub const ITEMS: u32 = 100_000;
pub const DISTRICTS: u32 = 10;
pub const CUSTOMERS: u32 = 3_000;
/// Orders 1..=2100 of each district are delivered at load; 2101..=3000 are new orders.
pub const FIRST_NEW_ORDER: u32 = 2_101;

/// One table's rows on their way to the server, written as text and cut into bulk loads.
struct TableLoad {
    table: String,
    columns: &'static [&'static str],
    rows: TabRows,
    loaded: u64,
}

impl TableLoad {
    fn new(base: &str, t: u32, columns: &'static [&'static str]) -> Self {
        Self { table: format!("{base}{t}"), columns, rows: TabRows::new(), loaded: 0 }
    }

    /// The row being written; [`TableLoad::end_row`] ends it.
    fn row(&mut self) -> &mut TabRows {
        &mut self.rows
    }

    async fn end_row(&mut self, conn: &mut Conn) -> Result<()> {
        self.rows.end_row();
        if self.rows.as_str().len() >= BULK_PACKET_SIZE_BYTES {
            self.flush(conn).await?;
        }
        Ok(())
    }

    async fn flush(&mut self, conn: &mut Conn) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        self.loaded += conn
            .bulk_load_text(&self.table, self.columns, &self.rows)
            .await
            .map_err(|e| EngineError::Driver(format!("loading table {} failed: {e}", self.table)))?;
        self.rows.clear();
        Ok(())
    }
}

/// ITEM: 100,000 rows, 10% with "ORIGINAL" in `I_DATA`.
pub async fn load_items(conn: &mut Conn, t: u32, rng: &mut Rng, progress: Progress<'_>) -> Result<()> {
    progress(PrepareEvent::Message(format!("Loading {ITEMS} items into 'item{t}'...")));
    let mut item = TableLoad::new("item", t, &["i_id", "i_im_id", "i_name", "i_price", "i_data"]);
    for i_id in 1..=ITEMS {
        let r = item.row();
        r.int(i_id.into()).int(rng.uniform(1, 10_000).into());
        astring(rng, 14, 24, r.plain());
        money_into(rng.uniform(100, 10_000).into(), r.plain());
        data_with_original(rng, r.plain());
        item.end_row(conn).await?;
    }
    item.flush(conn).await
}

const CUSTOMER_COLUMNS: &[&str] = &[
    "c_id",
    "c_d_id",
    "c_w_id",
    "c_first",
    "c_middle",
    "c_last",
    "c_street_1",
    "c_street_2",
    "c_city",
    "c_state",
    "c_zip",
    "c_phone",
    "c_since",
    "c_credit",
    "c_credit_lim",
    "c_discount",
    "c_balance",
    "c_ytd_payment",
    "c_payment_cnt",
    "c_delivery_cnt",
    "c_data",
];

const STOCK_COLUMNS: &[&str] = &[
    "s_i_id",
    "s_w_id",
    "s_quantity",
    "s_dist_01",
    "s_dist_02",
    "s_dist_03",
    "s_dist_04",
    "s_dist_05",
    "s_dist_06",
    "s_dist_07",
    "s_dist_08",
    "s_dist_09",
    "s_dist_10",
    "s_ytd",
    "s_order_cnt",
    "s_remote_cnt",
    "s_data",
];

/// Name, two streets, city, state, zip: the address block of WAREHOUSE and DISTRICT.
fn address(r: &mut TabRows, rng: &mut Rng) {
    astring(rng, 6, 10, r.plain());
    streets_and_city(r, rng);
    state(rng, r.plain());
    zip(rng, r.plain());
}

/// Two streets and a city, of WAREHOUSE, DISTRICT and CUSTOMER.
fn streets_and_city(r: &mut TabRows, rng: &mut Rng) {
    for _ in 0..3 {
        astring(rng, 10, 20, r.plain());
    }
}

/// The tables a district's rows go to, one bulk stream each.
struct DistrictTables {
    district: TableLoad,
    customer: TableLoad,
    history: TableLoad,
    orders: TableLoad,
    new_orders: TableLoad,
    order_line: TableLoad,
}

impl DistrictTables {
    fn new(t: u32) -> Self {
        Self {
            district: TableLoad::new("district", t, DISTRICT_COLUMNS),
            customer: TableLoad::new("customer", t, CUSTOMER_COLUMNS),
            history: TableLoad::new("history", t, HISTORY_COLUMNS),
            orders: TableLoad::new("orders", t, ORDERS_COLUMNS),
            new_orders: TableLoad::new("new_orders", t, &["no_o_id", "no_d_id", "no_w_id"]),
            order_line: TableLoad::new("order_line", t, ORDER_LINE_COLUMNS),
        }
    }

    async fn flush(&mut self, conn: &mut Conn) -> Result<()> {
        for table in [
            &mut self.district,
            &mut self.customer,
            &mut self.history,
            &mut self.orders,
            &mut self.new_orders,
            &mut self.order_line,
        ] {
            table.flush(conn).await?;
        }
        Ok(())
    }
}

const DISTRICT_COLUMNS: &[&str] = &[
    "d_id",
    "d_w_id",
    "d_name",
    "d_street_1",
    "d_street_2",
    "d_city",
    "d_state",
    "d_zip",
    "d_tax",
    "d_ytd",
    "d_next_o_id",
];
const HISTORY_COLUMNS: &[&str] =
    &["h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"];
const ORDERS_COLUMNS: &[&str] =
    &["o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"];
const ORDER_LINE_COLUMNS: &[&str] = &[
    "ol_o_id",
    "ol_d_id",
    "ol_w_id",
    "ol_number",
    "ol_i_id",
    "ol_supply_w_id",
    "ol_delivery_d",
    "ol_quantity",
    "ol_amount",
    "ol_dist_info",
];

/// Warehouse `w` of table set `t` with its districts and everything in them (its stock is a
/// unit of its own: [`load_stock`]).
pub async fn load_warehouse(conn: &mut Conn, t: u32, w: u32, rng: &mut Rng, progress: Progress<'_>) -> Result<()> {
    progress(PrepareEvent::Message(format!("Loading warehouse {w} of table set {t}...")));
    let mut warehouse = TableLoad::new(
        "warehouse",
        t,
        &["w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"],
    );
    let r = warehouse.row().int(w.into());
    address(r, rng);
    rate(rng.uniform(0, 2000), r.plain());
    money_into(30_000_000, r.plain());
    warehouse.end_row(conn).await?;
    warehouse.flush(conn).await?;
    let since = now_timestamp();
    let mut tables = DistrictTables::new(t);
    for d in 1..=DISTRICTS {
        let r = tables.district.row().int(d.into()).int(w.into());
        address(r, rng);
        rate(rng.uniform(0, 2000), r.plain());
        money_into(3_000_000, r.plain());
        r.int(3001);
        tables.district.end_row(conn).await?;
        load_customers(conn, &mut tables, w, d, rng, &since).await?;
        load_orders(conn, &mut tables, w, d, rng, &since).await?;
    }
    tables.flush(conn).await?;
    let lines = tables.order_line.loaded;
    progress(PrepareEvent::Rows { table: w as usize, done: lines, total: lines });
    Ok(())
}

/// STOCK of warehouse `w`: 100,000 rows, 10% with "ORIGINAL" in `S_DATA`.
pub async fn load_stock(conn: &mut Conn, t: u32, w: u32, rng: &mut Rng, progress: Progress<'_>) -> Result<()> {
    progress(PrepareEvent::Message(format!("Loading the stock of warehouse {w} of table set {t}...")));
    let mut stock = TableLoad::new("stock", t, STOCK_COLUMNS);
    for i_id in 1..=ITEMS {
        let r = stock.row().int(i_id.into()).int(w.into()).int(rng.uniform(10, 100).into());
        for _ in 0..10 {
            astring(rng, 24, 24, r.plain());
        }
        r.int(0).int(0).int(0);
        data_with_original(rng, r.plain());
        stock.end_row(conn).await?;
    }
    stock.flush(conn).await
}

/// CUSTOMER and HISTORY: 3,000 customers of district `d`, each with one payment of 10.00.
async fn load_customers(
    conn: &mut Conn,
    tables: &mut DistrictTables,
    w: u32,
    d: u32,
    rng: &mut Rng,
    since: &str,
) -> Result<()> {
    let (w, d) = (i64::from(w), i64::from(d));
    for c_id in 1..=CUSTOMERS {
        let last = if c_id <= 1000 { c_id - 1 } else { nurand(rng, 255, 0, 999, C_LAST_LOAD) };
        let credit = if rng.uniform(1, 10) == 1 { "BC" } else { "GC" };
        let r = tables.customer.row().int(c_id.into()).int(d).int(w);
        astring(rng, 8, 16, r.plain());
        r.text("OE");
        last_name_into(last, r.plain());
        streets_and_city(r, rng);
        state(rng, r.plain());
        zip(rng, r.plain());
        nstring(rng, 16, 16, r.plain());
        r.text(since).text(credit);
        money_into(5_000_000, r.plain());
        rate(rng.uniform(0, 5000), r.plain());
        money_into(-1000, r.plain());
        money_into(1000, r.plain());
        r.int(1).int(0);
        astring(rng, 300, 500, r.plain());
        tables.customer.end_row(conn).await?;
        let r = tables.history.row().int(c_id.into()).int(d).int(w).int(d).int(w).text(since);
        money_into(1000, r.plain());
        astring(rng, 12, 24, r.plain());
        tables.history.end_row(conn).await?;
    }
    Ok(())
}

/// ORDER, NEW-ORDER and ORDER-LINE: 3,000 orders of district `d`, one per customer in a random
/// order; 1..=2100 delivered, the rest new orders.
async fn load_orders(
    conn: &mut Conn,
    tables: &mut DistrictTables,
    w: u32,
    d: u32,
    rng: &mut Rng,
    since: &str,
) -> Result<()> {
    let (w, d) = (i64::from(w), i64::from(d));
    let mut customers: Vec<u32> = (1..=CUSTOMERS).collect();
    for i in (1..customers.len()).rev() {
        customers.swap(i, rng.uniform(0, i as u32) as usize);
    }
    for (o_id, &c_id) in (1..=CUSTOMERS).zip(&customers) {
        let delivered = o_id < FIRST_NEW_ORDER;
        let ol_cnt = rng.uniform(5, 15);
        let r = tables.orders.row().int(o_id.into()).int(d).int(w).int(c_id.into()).text(since);
        if delivered {
            r.int(rng.uniform(1, 10).into());
        } else {
            r.null();
        }
        r.int(ol_cnt.into()).int(1);
        tables.orders.end_row(conn).await?;
        if !delivered {
            tables.new_orders.row().int(o_id.into()).int(d).int(w);
            tables.new_orders.end_row(conn).await?;
        }
        for number in 1..=ol_cnt {
            // The amount is drawn before the item, as it always was: a seed loads the same data.
            let amount = if delivered { 0 } else { rng.uniform(1, 999_999).into() };
            let r = tables.order_line.row().int(o_id.into()).int(d).int(w).int(number.into());
            r.int(rng.uniform(1, ITEMS).into()).int(w);
            if delivered {
                r.text(since);
            } else {
                r.null();
            }
            r.int(5);
            money_into(amount, r.plain());
            astring(rng, 24, 24, r.plain());
            tables.order_line.end_row(conn).await?;
        }
    }
    Ok(())
}

//! The SQL of the five transactions, prepared once per table set on every connection.
//! `FOR UPDATE` marks the reads the spec needs protected (the district's next order id, the
//! stock rows, the paying customer, the oldest new order); SQLite has no row locks and takes
//! the database write lock at `BEGIN IMMEDIATE` instead, so there it is left out.

use crate::db::{Dialect, StmtId};

/// One statement of one transaction profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Sql {
    NoCustomerWarehouse,
    NoDistrict,
    NoDistrictNext,
    NoOrder,
    NoNewOrder,
    PayWarehouse,
    PayWarehouseRead,
    PayDistrict,
    PayDistrictRead,
    CustomerByName,
    PayCustomer,
    PayCustomerData,
    PayCustomerUpdate,
    PayCustomerUpdateData,
    PayHistory,
    OsCustomer,
    OsOrder,
    OsLines,
    DlvNewOrder,
    DlvDelete,
    DlvOrder,
    DlvCarrier,
    DlvLines,
    DlvAmount,
    DlvCustomer,
    SlNextOrder,
    SlCount,
    /// Not a statement: where New-Order's [`Batch`] statements start.
    Batched,
}

/// New-Order's statements over all of an order's lines at once, each with [`MAX_LINES`] rows
/// of parameters whatever the order's size, so that a connection prepares one form of each:
/// the item read and the stock read (`FOR UPDATE`, every `S_DIST_xx` column), where a shorter
/// order repeats its first key (a key listed twice selects its row once); the stock update and
/// the order-line insert, which read their rows from a [`values_table`], where a shorter order
/// pads with rows that match no stock row (item 0) or are filtered out (line number 0).
/// A New-Order is 11 statements whatever its size, where one per line of each made 47 for 10
/// lines: on loopback the round trips are most of the client's CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Batch {
    Items,
    Stocks,
    StockUpdate,
    Lines,
}

/// Order lines per New-Order at most (clause 2.4.1.3).
pub const MAX_LINES: usize = 15;

const BATCHES: [Batch; 4] = [Batch::Items, Batch::Stocks, Batch::StockUpdate, Batch::Lines];

/// Statements per table set: every [`Sql`] before `Batched`, then the [`Batch`] ones.
pub const PER_SET: usize = Sql::Batched as usize + BATCHES.len();

/// Columns of the stock update's rows: the stock row's key, its new quantity, and what the
/// order adds to its YTD, order and remote counts (an item ordered twice from one warehouse
/// is one row: an UPDATE changes a joined row once).
pub const STOCK_UPDATE_COLUMNS: usize = 6;
const STOCK_UPDATE: [(&str, &str); STOCK_UPDATE_COLUMNS] = [
    ("i_id", "INTEGER"),
    ("w_id", "INTEGER"),
    ("quantity", "INTEGER"),
    ("ytd", "INTEGER"),
    ("orders", "INTEGER"),
    ("remote", "INTEGER"),
];

/// Columns of ORDER-LINE's rows, as inserted.
pub const LINE_COLUMNS: usize = 9;
const LINES: [(&str, &str); LINE_COLUMNS] = [
    ("ol_o_id", "INTEGER"),
    ("ol_d_id", "INTEGER"),
    ("ol_w_id", "INTEGER"),
    ("ol_number", "INTEGER"),
    ("ol_i_id", "INTEGER"),
    ("ol_supply_w_id", "INTEGER"),
    ("ol_quantity", "INTEGER"),
    ("ol_amount", "NUMERIC"),
    ("ol_dist_info", "TEXT"),
];

/// A derived table `v` of [`MAX_LINES`] rows of parameters:
/// `(SELECT ? AS a, ? AS b UNION ALL SELECT ?, ? ...) AS v`. PostgreSQL types a parameter from
/// its context, and a bare one in a SELECT list has none: there the first row casts each
/// column, and UNION gives the other rows its types.
fn values_table(dialect: Dialect, columns: &[(&str, &str)]) -> String {
    let first: Vec<String> = columns
        .iter()
        .map(|(name, ty)| match dialect {
            Dialect::Postgres => format!("CAST(? AS {ty}) AS {name}"),
            Dialect::Mysql | Dialect::Sqlite => format!("? AS {name}"),
        })
        .collect();
    let other_row = format!(" UNION ALL SELECT {}", vec!["?"; columns.len()].join(", "));
    format!("(SELECT {}{}) AS v", first.join(", "), other_row.repeat(MAX_LINES - 1))
}

fn batch_text(b: Batch, dialect: Dialect) -> String {
    let keys = |one: &str, sep: &str| vec![one; MAX_LINES].join(sep);
    match b {
        Batch::Items => {
            format!("SELECT i_id, i_price, i_name, i_data FROM item{{t}} WHERE i_id IN ({})", keys("?", ", "))
        }
        Batch::Stocks => {
            let dists: Vec<String> = (1..=10).map(|d| format!("s_dist_{d:02}")).collect();
            format!(
                "SELECT s_i_id, s_w_id, s_quantity, s_data, {} FROM stock{{t}} WHERE {}{{lock}}",
                dists.join(", "),
                keys("(s_i_id=? AND s_w_id=?)", " OR ")
            )
        }
        Batch::StockUpdate => {
            let rows = values_table(dialect, &STOCK_UPDATE);
            let set = "s_quantity=v.quantity, s_ytd=s_ytd+v.ytd, s_order_cnt=s_order_cnt+v.orders, \
                       s_remote_cnt=s_remote_cnt+v.remote";
            let on = "s_i_id=v.i_id AND s_w_id=v.w_id";
            match dialect {
                Dialect::Mysql => format!("UPDATE stock{{t}} JOIN {rows} ON {on} SET {set}"),
                Dialect::Postgres | Dialect::Sqlite => format!("UPDATE stock{{t}} SET {set} FROM {rows} WHERE {on}"),
            }
        }
        Batch::Lines => {
            let columns: Vec<&str> = LINES.iter().map(|(name, _)| *name).collect();
            let columns = columns.join(", ");
            format!(
                "INSERT INTO order_line{{t}} ({columns}) SELECT {columns} FROM {} WHERE ol_number > 0",
                values_table(dialect, &LINES)
            )
        }
    }
}

fn text(s: Sql) -> &'static str {
    match s {
        // The spec's own form (Appendix A.1): the customer and its warehouse's tax in one read.
        Sql::NoCustomerWarehouse => {
            "SELECT c_discount, c_last, c_credit, w_tax FROM customer{t}, warehouse{t} \
             WHERE w_id=? AND c_w_id=w_id AND c_d_id=? AND c_id=?"
        }
        Sql::NoDistrict => "SELECT d_tax, d_next_o_id FROM district{t} WHERE d_w_id=? AND d_id=?{lock}",
        Sql::NoDistrictNext => "UPDATE district{t} SET d_next_o_id=d_next_o_id+1 WHERE d_w_id=? AND d_id=?",
        Sql::NoOrder => {
            "INSERT INTO orders{t} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) \
             VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"
        }
        Sql::NoNewOrder => "INSERT INTO new_orders{t} (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
        Sql::PayWarehouse => "UPDATE warehouse{t} SET w_ytd=w_ytd+? WHERE w_id=?",
        Sql::PayWarehouseRead => {
            "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse{t} WHERE w_id=?"
        }
        Sql::PayDistrict => "UPDATE district{t} SET d_ytd=d_ytd+? WHERE d_w_id=? AND d_id=?",
        Sql::PayDistrictRead => {
            "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district{t} WHERE d_w_id=? AND d_id=?"
        }
        Sql::CustomerByName => {
            "SELECT c_id FROM customer{t} WHERE c_w_id=? AND c_d_id=? AND c_last=? ORDER BY c_first"
        }
        Sql::PayCustomer => {
            "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, \
             c_credit, c_credit_lim, c_discount, c_balance FROM customer{t} WHERE c_w_id=? AND c_d_id=? AND c_id=?{lock}"
        }
        Sql::PayCustomerData => "SELECT c_data FROM customer{t} WHERE c_w_id=? AND c_d_id=? AND c_id=?",
        Sql::PayCustomerUpdate => {
            "UPDATE customer{t} SET c_balance=c_balance-?, c_ytd_payment=c_ytd_payment+?, \
             c_payment_cnt=c_payment_cnt+1 WHERE c_w_id=? AND c_d_id=? AND c_id=?"
        }
        Sql::PayCustomerUpdateData => {
            "UPDATE customer{t} SET c_balance=c_balance-?, c_ytd_payment=c_ytd_payment+?, \
             c_payment_cnt=c_payment_cnt+1, c_data=? WHERE c_w_id=? AND c_d_id=? AND c_id=?"
        }
        Sql::PayHistory => {
            "INSERT INTO history{t} (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
             VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"
        }
        Sql::OsCustomer => {
            "SELECT c_balance, c_first, c_middle, c_last FROM customer{t} WHERE c_w_id=? AND c_d_id=? AND c_id=?"
        }
        Sql::OsOrder => {
            "SELECT o_id, o_carrier_id, o_entry_d FROM orders{t} WHERE o_w_id=? AND o_d_id=? AND o_c_id=? \
             ORDER BY o_id DESC LIMIT 1"
        }
        Sql::OsLines => {
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line{t} \
             WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?"
        }
        Sql::DlvNewOrder => {
            "SELECT no_o_id FROM new_orders{t} WHERE no_w_id=? AND no_d_id=? ORDER BY no_o_id LIMIT 1{lock}"
        }
        Sql::DlvDelete => "DELETE FROM new_orders{t} WHERE no_w_id=? AND no_d_id=? AND no_o_id=?",
        Sql::DlvOrder => "SELECT o_c_id FROM orders{t} WHERE o_w_id=? AND o_d_id=? AND o_id=?",
        Sql::DlvCarrier => "UPDATE orders{t} SET o_carrier_id=? WHERE o_w_id=? AND o_d_id=? AND o_id=?",
        Sql::DlvLines => {
            "UPDATE order_line{t} SET ol_delivery_d=CURRENT_TIMESTAMP WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?"
        }
        Sql::DlvAmount => "SELECT SUM(ol_amount) FROM order_line{t} WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?",
        Sql::DlvCustomer => {
            "UPDATE customer{t} SET c_balance=c_balance+?, c_delivery_cnt=c_delivery_cnt+1 \
             WHERE c_w_id=? AND c_d_id=? AND c_id=?"
        }
        Sql::SlNextOrder => "SELECT d_next_o_id FROM district{t} WHERE d_w_id=? AND d_id=?",
        Sql::SlCount => {
            "SELECT COUNT(DISTINCT s_i_id) FROM order_line{t}, stock{t} WHERE ol_w_id=? AND ol_d_id=? \
             AND ol_o_id<? AND ol_o_id>=? AND s_w_id=? AND s_i_id=ol_i_id AND s_quantity<?"
        }
        Sql::Batched => unreachable!("not a statement"),
    }
}

const ALL: [Sql; 27] = [
    Sql::NoCustomerWarehouse,
    Sql::NoDistrict,
    Sql::NoDistrictNext,
    Sql::NoOrder,
    Sql::NoNewOrder,
    Sql::PayWarehouse,
    Sql::PayWarehouseRead,
    Sql::PayDistrict,
    Sql::PayDistrictRead,
    Sql::CustomerByName,
    Sql::PayCustomer,
    Sql::PayCustomerData,
    Sql::PayCustomerUpdate,
    Sql::PayCustomerUpdateData,
    Sql::PayHistory,
    Sql::OsCustomer,
    Sql::OsOrder,
    Sql::OsLines,
    Sql::DlvNewOrder,
    Sql::DlvDelete,
    Sql::DlvOrder,
    Sql::DlvCarrier,
    Sql::DlvLines,
    Sql::DlvAmount,
    Sql::DlvCustomer,
    Sql::SlNextOrder,
    Sql::SlCount,
];

/// Every statement of table sets 1..=sets, in [`StmtId`] order.
pub fn all(dialect: Dialect, sets: u32) -> Vec<String> {
    let lock = if dialect == Dialect::Sqlite { "" } else { " FOR UPDATE" };
    let mut out = Vec::with_capacity(PER_SET * sets as usize);
    for t in 1..=sets {
        let fill = |s: &str| s.replace("{t}", &t.to_string()).replace("{lock}", lock);
        out.extend(ALL.iter().map(|&s| fill(text(s))));
        out.extend(BATCHES.iter().map(|&b| fill(&batch_text(b, dialect))));
    }
    out
}

/// Statement `s` of table set `t` (1-based).
pub fn id(s: Sql, t: u32) -> StmtId {
    StmtId((t as usize - 1) * PER_SET + s as usize)
}

/// New-Order's batched statement `b` of table set `t`.
pub fn batch(b: Batch, t: u32) -> StmtId {
    StmtId((t as usize - 1) * PER_SET + Sql::Batched as usize + b as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_the_list() {
        let sqls = all(Dialect::Mysql, 2);
        assert_eq!(sqls.len(), 2 * PER_SET);
        assert_eq!(sqls[id(Sql::PayHistory, 2).0], text(Sql::PayHistory).replace("{t}", "2"));
        assert_eq!(sqls[batch(Batch::Items, 1).0].matches('?').count(), MAX_LINES);
        assert!(sqls[batch(Batch::Items, 2).0].contains("FROM item2 WHERE i_id IN (?, ?"));
        assert!(sqls[batch(Batch::Stocks, 1).0].contains("s_dist_10 FROM stock1"));
        assert_eq!(sqls[batch(Batch::Stocks, 1).0].matches('?').count(), 2 * MAX_LINES);
        assert!(sqls[batch(Batch::Stocks, 2).0].ends_with("s_w_id=?) FOR UPDATE"));
        assert_eq!(batch(Batch::Lines, 2).0, 2 * PER_SET - 1);
        assert!(all(Dialect::Sqlite, 1).iter().all(|s| !s.contains("FOR UPDATE") && !s.contains('{')));
    }

    #[test]
    fn batched_writes_take_every_row_of_the_largest_order() {
        for dialect in [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite] {
            let sqls = all(dialect, 2);
            let update = &sqls[batch(Batch::StockUpdate, 2).0];
            assert_eq!(update.matches('?').count(), STOCK_UPDATE_COLUMNS * MAX_LINES, "{update}");
            assert!(update.starts_with("UPDATE stock2 ") && update.contains("s_i_id=v.i_id AND s_w_id=v.w_id"));
            let lines = &sqls[batch(Batch::Lines, 2).0];
            assert_eq!(lines.matches('?').count(), LINE_COLUMNS * MAX_LINES, "{lines}");
            assert!(lines.starts_with("INSERT INTO order_line2 (ol_o_id,") && lines.ends_with("WHERE ol_number > 0"));
            // Only PostgreSQL needs the first row's types, and only there.
            let casts = if dialect == Dialect::Postgres { LINE_COLUMNS } else { 0 };
            assert_eq!(lines.matches("CAST(").count(), casts);
        }
    }
}

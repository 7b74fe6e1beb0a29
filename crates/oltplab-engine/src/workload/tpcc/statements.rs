//! The SQL of the five transactions, prepared once per table set on every connection.
//! `FOR UPDATE` marks the reads the spec needs protected (the district's next order id, the
//! stock rows, the paying customer, the oldest new order); SQLite has no row locks and takes
//! the database write lock at `BEGIN IMMEDIATE` instead, so there it is left out.

use crate::driver::{Dialect, StmtId};

/// One statement of one transaction profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Sql {
    NoWarehouse,
    NoDistrict,
    NoDistrictNext,
    NoCustomer,
    NoOrder,
    NoNewOrder,
    NoStockUpdate,
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

/// New-Order's statements over all of an order's lines at once: its item reads and its stock
/// reads (`FOR UPDATE`, every `S_DIST_xx` column), each one statement of [`MAX_LINES`] keys, a
/// shorter order repeating its first key (a key listed twice selects its row once); and its
/// order-line inserts, in chunks of [`LINE_CHUNKS`] rows (a row cannot be repeated). One form
/// per order size (5-15) cost 33 prepared statements per connection and tripled the client's
/// memory at 1,024 connections; these are 2 + 4. The stock updates stay one per line: each
/// sets its own quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Batch {
    Items,
    Stocks,
    Lines,
}

/// Order lines per New-Order (clause 2.4.1.3).
#[cfg(test)]
const MIN_LINES: usize = 5;
pub const MAX_LINES: usize = 15;
/// Rows per prepared order-line INSERT, largest first: an order of n lines takes one INSERT per
/// bit set in n (5-15 lines: 1-4 INSERTs, 2.45 on average).
pub const LINE_CHUNKS: [usize; 4] = [8, 4, 2, 1];

/// Statements per table set: every [`Sql`] before `Batched`, the two reads, each line chunk.
pub const PER_SET: usize = Sql::Batched as usize + 2 + LINE_CHUNKS.len();

fn batch_text(b: Batch, rows: usize) -> String {
    let list = |one: &str, sep: &str| vec![one; rows].join(sep);
    match b {
        Batch::Items => {
            format!("SELECT i_id, i_price, i_name, i_data FROM item{{t}} WHERE i_id IN ({})", list("?", ", "))
        }
        Batch::Stocks => {
            let dists: Vec<String> = (1..=10).map(|d| format!("s_dist_{d:02}")).collect();
            format!(
                "SELECT s_i_id, s_w_id, s_quantity, s_data, {} FROM stock{{t}} WHERE {}{{lock}}",
                dists.join(", "),
                list("(s_i_id=? AND s_w_id=?)", " OR ")
            )
        }
        Batch::Lines => format!(
            "INSERT INTO order_line{{t}} (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, \
             ol_amount, ol_dist_info) VALUES {}",
            list("(?, ?, ?, ?, ?, ?, ?, ?, ?)", ", ")
        ),
    }
}

fn text(s: Sql) -> &'static str {
    match s {
        Sql::NoWarehouse => "SELECT w_tax FROM warehouse{t} WHERE w_id=?",
        Sql::NoDistrict => "SELECT d_tax, d_next_o_id FROM district{t} WHERE d_w_id=? AND d_id=?{lock}",
        Sql::NoDistrictNext => "UPDATE district{t} SET d_next_o_id=d_next_o_id+1 WHERE d_w_id=? AND d_id=?",
        Sql::NoCustomer => "SELECT c_discount, c_last, c_credit FROM customer{t} WHERE c_w_id=? AND c_d_id=? AND c_id=?",
        Sql::NoOrder => {
            "INSERT INTO orders{t} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) \
             VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"
        }
        Sql::NoNewOrder => "INSERT INTO new_orders{t} (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
        Sql::NoStockUpdate => {
            "UPDATE stock{t} SET s_quantity=?, s_ytd=s_ytd+?, s_order_cnt=s_order_cnt+1, s_remote_cnt=s_remote_cnt+? \
             WHERE s_i_id=? AND s_w_id=?"
        }
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

const ALL: [Sql; 29] = [
    Sql::NoWarehouse,
    Sql::NoDistrict,
    Sql::NoDistrictNext,
    Sql::NoCustomer,
    Sql::NoOrder,
    Sql::NoNewOrder,
    Sql::NoStockUpdate,
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
        out.push(fill(&batch_text(Batch::Items, MAX_LINES)));
        out.push(fill(&batch_text(Batch::Stocks, MAX_LINES)));
        out.extend(LINE_CHUNKS.iter().map(|&rows| fill(&batch_text(Batch::Lines, rows))));
    }
    out
}

/// Statement `s` of table set `t` (1-based).
pub fn id(s: Sql, t: u32) -> StmtId {
    StmtId((t as usize - 1) * PER_SET + s as usize)
}

/// New-Order's item read (`rows` = [`MAX_LINES`]), stock read (likewise) or order-line INSERT
/// of `rows` rows (one of [`LINE_CHUNKS`]) of table set `t`.
pub fn batch(b: Batch, t: u32, rows: usize) -> StmtId {
    let offset = match b {
        Batch::Items | Batch::Stocks => {
            debug_assert_eq!(rows, MAX_LINES);
            b as usize
        }
        Batch::Lines => 2 + LINE_CHUNKS.iter().position(|&c| c == rows).expect("rows is one of LINE_CHUNKS"),
    };
    StmtId((t as usize - 1) * PER_SET + Sql::Batched as usize + offset)
}

/// The order-line INSERTs of an order of `lines` lines: their row counts, largest first.
pub fn line_chunks(lines: usize) -> impl Iterator<Item = usize> {
    LINE_CHUNKS.into_iter().filter(move |&c| lines & c != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_the_list() {
        let sqls = all(Dialect::Mysql, 2);
        assert_eq!(sqls.len(), 2 * PER_SET);
        assert_eq!(sqls[id(Sql::PayHistory, 2).0], text(Sql::PayHistory).replace("{t}", "2"));
        assert_eq!(sqls[batch(Batch::Items, 1, 15).0].matches('?').count(), 15);
        assert!(sqls[batch(Batch::Items, 2, 15).0].contains("FROM item2 WHERE i_id IN (?, ?"));
        assert!(sqls[batch(Batch::Stocks, 1, 15).0].contains("s_dist_10 FROM stock1"));
        assert_eq!(sqls[batch(Batch::Stocks, 1, 15).0].matches('?').count(), 30);
        assert!(sqls[batch(Batch::Stocks, 2, 15).0].ends_with("s_w_id=?) FOR UPDATE"));
        for rows in LINE_CHUNKS {
            assert_eq!(sqls[batch(Batch::Lines, 2, rows).0].matches('?').count(), 9 * rows);
            assert!(sqls[batch(Batch::Lines, 2, rows).0].starts_with("INSERT INTO order_line2"));
        }
        assert_eq!(batch(Batch::Lines, 2, 1).0, 2 * PER_SET - 1);
        assert!(all(Dialect::Sqlite, 1).iter().all(|s| !s.contains("FOR UPDATE") && !s.contains('{')));
    }

    #[test]
    fn line_chunks_cover_every_order_size_once() {
        for lines in MIN_LINES..=MAX_LINES {
            assert_eq!(line_chunks(lines).sum::<usize>(), lines);
            assert!(line_chunks(lines).count() <= LINE_CHUNKS.len());
        }
        assert_eq!(line_chunks(13).collect::<Vec<_>>(), [8, 4, 1]);
    }
}

//! The nine tables with sysbench-tpcc's names (`warehouse1`, ..., the number being the table
//! set) and the spec's columns and exact numeric types; secondary indexes and foreign keys are
//! separate statements, run after the load.

use std::fmt::Write as _;

use crate::db::Dialect;

/// The metadata table: one row per table set, written when its load is complete.
pub const META: &str = "tpcc_meta";

fn types(dialect: Dialect) -> (&'static str, &'static str) {
    // (tiny integer, date-time)
    match dialect {
        Dialect::Postgres => ("SMALLINT", "TIMESTAMP"),
        Dialect::Mysql | Dialect::Sqlite => ("TINYINT", "DATETIME"),
    }
}

/// CREATE TABLE statements of table set `t`, primary keys included.
pub fn create_tables(dialect: Dialect, t: u32) -> Vec<String> {
    let (ti, dt) = types(dialect);
    let dist = (1..=10).fold(String::new(), |mut s, d| {
        let _ = writeln!(s, "  s_dist_{d:02} CHAR(24) NOT NULL,");
        s
    });
    vec![
        format!(
            "CREATE TABLE warehouse{t} (\n  w_id SMALLINT NOT NULL,\n  w_name VARCHAR(10),\n  w_street_1 VARCHAR(20),\n  \
             w_street_2 VARCHAR(20),\n  w_city VARCHAR(20),\n  w_state CHAR(2),\n  w_zip CHAR(9),\n  \
             w_tax DECIMAL(4,4),\n  w_ytd DECIMAL(12,2),\n  PRIMARY KEY (w_id)\n)"
        ),
        format!(
            "CREATE TABLE district{t} (\n  d_id {ti} NOT NULL,\n  d_w_id SMALLINT NOT NULL,\n  d_name VARCHAR(10),\n  \
             d_street_1 VARCHAR(20),\n  d_street_2 VARCHAR(20),\n  d_city VARCHAR(20),\n  d_state CHAR(2),\n  \
             d_zip CHAR(9),\n  d_tax DECIMAL(4,4),\n  d_ytd DECIMAL(12,2),\n  d_next_o_id INTEGER,\n  \
             PRIMARY KEY (d_w_id, d_id)\n)"
        ),
        format!(
            "CREATE TABLE customer{t} (\n  c_id INTEGER NOT NULL,\n  c_d_id {ti} NOT NULL,\n  c_w_id SMALLINT NOT NULL,\n  \
             c_first VARCHAR(16),\n  c_middle CHAR(2),\n  c_last VARCHAR(16),\n  c_street_1 VARCHAR(20),\n  \
             c_street_2 VARCHAR(20),\n  c_city VARCHAR(20),\n  c_state CHAR(2),\n  c_zip CHAR(9),\n  \
             c_phone CHAR(16),\n  c_since {dt},\n  c_credit CHAR(2),\n  c_credit_lim DECIMAL(12,2),\n  \
             c_discount DECIMAL(4,4),\n  c_balance DECIMAL(12,2),\n  c_ytd_payment DECIMAL(12,2),\n  \
             c_payment_cnt SMALLINT,\n  c_delivery_cnt SMALLINT,\n  c_data VARCHAR(500),\n  \
             PRIMARY KEY (c_w_id, c_d_id, c_id)\n)"
        ),
        format!(
            "CREATE TABLE history{t} (\n  h_c_id INTEGER,\n  h_c_d_id {ti},\n  h_c_w_id SMALLINT,\n  h_d_id {ti},\n  \
             h_w_id SMALLINT,\n  h_date {dt},\n  h_amount DECIMAL(6,2),\n  h_data VARCHAR(24)\n)"
        ),
        format!(
            "CREATE TABLE orders{t} (\n  o_id INTEGER NOT NULL,\n  o_d_id {ti} NOT NULL,\n  o_w_id SMALLINT NOT NULL,\n  \
             o_c_id INTEGER,\n  o_entry_d {dt},\n  o_carrier_id {ti},\n  o_ol_cnt {ti},\n  o_all_local {ti},\n  \
             PRIMARY KEY (o_w_id, o_d_id, o_id)\n)"
        ),
        format!(
            "CREATE TABLE new_orders{t} (\n  no_o_id INTEGER NOT NULL,\n  no_d_id {ti} NOT NULL,\n  \
             no_w_id SMALLINT NOT NULL,\n  PRIMARY KEY (no_w_id, no_d_id, no_o_id)\n)"
        ),
        format!(
            "CREATE TABLE order_line{t} (\n  ol_o_id INTEGER NOT NULL,\n  ol_d_id {ti} NOT NULL,\n  \
             ol_w_id SMALLINT NOT NULL,\n  ol_number {ti} NOT NULL,\n  ol_i_id INTEGER,\n  ol_supply_w_id SMALLINT,\n  \
             ol_delivery_d {dt},\n  ol_quantity {ti},\n  ol_amount DECIMAL(6,2),\n  ol_dist_info CHAR(24),\n  \
             PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)\n)"
        ),
        format!(
            "CREATE TABLE stock{t} (\n  s_i_id INTEGER NOT NULL,\n  s_w_id SMALLINT NOT NULL,\n  s_quantity SMALLINT,\n\
             {dist}  s_ytd DECIMAL(8,0),\n  s_order_cnt SMALLINT,\n  s_remote_cnt SMALLINT,\n  s_data VARCHAR(50),\n  \
             PRIMARY KEY (s_w_id, s_i_id)\n)"
        ),
        format!(
            "CREATE TABLE item{t} (\n  i_id INTEGER NOT NULL,\n  i_im_id INTEGER,\n  i_name VARCHAR(24),\n  \
             i_price DECIMAL(5,2),\n  i_data VARCHAR(50),\n  PRIMARY KEY (i_id)\n)"
        ),
    ]
}

/// Whether the secondary indexes are created with the tables rather than after the load.
/// `InnoDB`: with them. Building them afterwards reads back tables that no longer fit a default
/// 128 MiB buffer pool (`O_DIRECT`: from the disk), one statement at a time after the parallel
/// load; keeping two small indexes during the load cost less (10 warehouses on MariaDB 10.11:
/// 24 s instead of 27 s; the same 24 s either way with a 2 GiB pool). PostgreSQL and SQLite
/// build them after the load, the faster way for them.
pub fn indexes_with_tables(dialect: Dialect) -> bool {
    dialect == Dialect::Mysql
}

/// Secondary indexes: customers by last name (Payment, Order-Status) and a customer's latest
/// order (Order-Status), as sysbench-tpcc's `idx_customer`/`idx_orders`.
pub fn secondary_indexes(t: u32) -> Vec<String> {
    vec![
        format!("CREATE INDEX idx_customer{t} ON customer{t} (c_w_id, c_d_id, c_last, c_first)"),
        format!("CREATE INDEX idx_orders{t} ON orders{t} (o_w_id, o_d_id, o_c_id, o_id)"),
    ]
}

/// `--use-fk`: the spec's foreign keys (clause 1.3), added after the load. SQLite cannot add a
/// constraint to an existing table, so there the option is refused.
pub fn foreign_keys(t: u32) -> Vec<String> {
    let fk = |table: &str, name: &str, cols: &str, parent: &str, pcols: &str| {
        format!(
            "ALTER TABLE {table}{t} ADD CONSTRAINT fk_{name}{t} FOREIGN KEY ({cols}) REFERENCES {parent}{t} ({pcols})"
        )
    };
    vec![
        fk("district", "district", "d_w_id", "warehouse", "w_id"),
        fk("customer", "customer", "c_w_id, c_d_id", "district", "d_w_id, d_id"),
        fk("history", "history_c", "h_c_w_id, h_c_d_id, h_c_id", "customer", "c_w_id, c_d_id, c_id"),
        fk("history", "history_d", "h_w_id, h_d_id", "district", "d_w_id, d_id"),
        fk("orders", "orders", "o_w_id, o_d_id, o_c_id", "customer", "c_w_id, c_d_id, c_id"),
        fk("new_orders", "new_orders", "no_w_id, no_d_id, no_o_id", "orders", "o_w_id, o_d_id, o_id"),
        fk("order_line", "order_line_o", "ol_w_id, ol_d_id, ol_o_id", "orders", "o_w_id, o_d_id, o_id"),
        fk("order_line", "order_line_s", "ol_supply_w_id, ol_i_id", "stock", "s_w_id, s_i_id"),
        fk("stock", "stock_w", "s_w_id", "warehouse", "w_id"),
        fk("stock", "stock_i", "s_i_id", "item", "i_id"),
    ]
}

/// Referencing tables before the tables they reference (`--use-fk`).
const DROP_ORDER: [&str; 9] =
    ["order_line", "new_orders", "history", "orders", "customer", "district", "stock", "item", "warehouse"];

/// MySQL/MariaDB: one `ANALYZE TABLE` of every table of set `t`.
pub fn analyze_tables(t: u32) -> String {
    let names: Vec<String> = DROP_ORDER.iter().map(|name| format!("{name}{t}")).collect();
    format!("ANALYZE TABLE {}", names.join(", "))
}

/// DROP statements of table set `t`, children first (foreign keys).
pub fn drop_tables(dialect: Dialect, t: u32) -> Vec<String> {
    let cascade = if dialect == Dialect::Postgres { " CASCADE" } else { "" };
    DROP_ORDER.iter().map(|name| format!("DROP TABLE IF EXISTS {name}{t}{cascade}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_set_has_nine_tables_with_spec_columns() {
        let ddl = create_tables(Dialect::Postgres, 3);
        assert_eq!(ddl.len(), 9);
        assert!(ddl[0].starts_with("CREATE TABLE warehouse3"));
        assert!(ddl[7].contains("s_dist_10 CHAR(24)"));
        assert!(ddl.iter().all(|s| !s.contains("TINYINT") && !s.contains("DATETIME")));
        assert!(create_tables(Dialect::Mysql, 1)[1].contains("d_next_o_id INTEGER"));
    }
}

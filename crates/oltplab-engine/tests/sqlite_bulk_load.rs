//! SQLite's bulk load (one prepared INSERT, driver/sqlite.rs): the values as a quoted literal
//! would store them, a transaction of its own only when the caller has none, and an error that
//! leaves neither rows nor an open transaction behind.

use std::path::PathBuf;

use oltplab_engine::db::{Fetch, Value};
use oltplab_engine::driver::{Conn, TabRows, Target, TargetOptions};

/// A directory of its own for one test's database, removed when the test ends.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn fresh_db(name: &str) -> (Conn, Dir) {
    let dir = std::env::temp_dir().join(format!("oltplab-bulk-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let options = TargetOptions { create: true, ..TargetOptions::default() };
    let target = Target::parse(&format!("sqlite://{}/x.db", dir.display()), &options).unwrap();
    let mut conn = Conn::open(&target).await.unwrap();
    conn.query("CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER, s CHAR(10))", Fetch::Discard).await.unwrap();
    (conn, Dir(dir))
}

async fn rows(conn: &mut Conn) -> Vec<Vec<Value>> {
    conn.query("SELECT id, n, typeof(n), s FROM t ORDER BY id", Fetch::Rows).await.unwrap().rows
}

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

#[tokio::test]
async fn values_are_stored_as_their_quoted_literals_would_be() {
    let (mut conn, _dir) = fresh_db("values").await;
    let loaded = [vec![Value::Int(1), text("42"), text("it's")], vec![Value::Int(2), Value::Null, text("")]];
    assert_eq!(conn.bulk_load("t", &["id", "n", "s"], &loaded).await.unwrap(), 2);
    // Tab-separated text, as the TPC-C loader writes it: the column's type makes "7" a number.
    let tab = TabRows::from_values(&[vec![Value::Int(3), text("7"), text("a\tb")]]);
    assert_eq!(conn.bulk_load_text("t", &["id", "n", "s"], &tab).await.unwrap(), 1);
    assert_eq!(
        rows(&mut conn).await,
        [
            vec![Value::Int(1), Value::Int(42), text("integer"), text("it's")],
            vec![Value::Int(2), Value::Null, text("null"), text("")],
            vec![Value::Int(3), Value::Int(7), text("integer"), text("a\tb")],
        ]
    );
}

#[tokio::test]
async fn the_callers_transaction_stays_the_callers() {
    let (mut conn, _dir) = fresh_db("caller").await;
    conn.query("BEGIN", Fetch::Discard).await.unwrap();
    conn.bulk_load("t", &["id", "n", "s"], &[vec![Value::Int(1), Value::Int(1), text("x")]]).await.unwrap();
    conn.query("ROLLBACK", Fetch::Discard).await.unwrap();
    assert!(rows(&mut conn).await.is_empty(), "the load committed the caller's transaction");
}

#[tokio::test]
async fn an_error_leaves_no_rows_and_no_open_transaction() {
    let (mut conn, _dir) = fresh_db("error").await;
    let duplicate = [vec![Value::Int(1), Value::Int(1), text("x")], vec![Value::Int(1), Value::Int(2), text("y")]];
    let e = conn.bulk_load("t", &["id", "n", "s"], &duplicate).await.unwrap_err();
    assert_eq!(e.code, "SQLITE_CONSTRAINT", "{e:?}");
    assert!(rows(&mut conn).await.is_empty(), "the first row of the failed load stayed");
    // Autocommit again: the next load commits on its own.
    conn.bulk_load("t", &["id", "n", "s"], &[vec![Value::Int(5), Value::Int(5), text("z")]]).await.unwrap();
    assert_eq!(rows(&mut conn).await.len(), 1);
}

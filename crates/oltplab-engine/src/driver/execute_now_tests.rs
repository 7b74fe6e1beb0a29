//! [`Conn::execute_now`] against both servers: a thread's sole connection runs a statement
//! without an await, its reply and its errors included, and stays in step for the next; when
//! its wait is handed to the runtime (the doorbell rang), the statement is pending and `finish`
//! reads the rest; rows kept, and a connection that shares its thread, are left to `execute`.

use super::reply_wait::{Doorbell, SoleConnection};
use super::{Conn, Now, Target, TargetOptions};
use crate::db::{Fetch, StmtId, Value};

/// Each server: its URL's variable, a statement that adds 1 to its parameter, one that fails at
/// execution (not at the prepare) for the parameter 7, and that error's code.
const SERVERS: [(&str, &str, &str, &str); 2] = [
    // ER_SUBQUERY_NO_1_ROW
    ("OLTPLAB_TEST_MYSQL_URL", "SELECT ? + 1", "SELECT ? > (SELECT 1 UNION SELECT 2)", "1242"),
    // division_by_zero
    ("OLTPLAB_TEST_PG_URL", "SELECT ?::int + 1", "SELECT 1 / (?::int - 7)", "22012"),
];

#[tokio::test]
async fn a_sole_connection_runs_a_statement_without_an_await() {
    for (var, adds_one, fails, code) in SERVERS {
        let Some(url) = std::env::var(var).ok().filter(|u| !u.is_empty()) else {
            eprintln!("note: {var} is not set; skipping this server test");
            continue;
        };
        let mut conn = Conn::open(&Target::parse(&url, &TargetOptions::default()).unwrap()).await.unwrap();
        conn.prepare(&[adds_one.to_string(), fails.to_string()]).await.unwrap();
        let seven = [Value::Int(7)];

        assert!(
            matches!(conn.execute_now(StmtId(0), &seven, Fetch::Discard), Now::Later),
            "{var}: without the claim the runtime waits for the reply, in `execute`"
        );

        let sole = SoleConnection::claim(&Doorbell::new().unwrap());
        for _ in 0..3 {
            let Now::Done(Ok(r)) = conn.execute_now(StmtId(0), &seven, Fetch::Discard) else {
                panic!("{var}: a sole connection's statement is done at once")
            };
            assert_eq!((r.row_count, r.columns), (1, 1));
            let Now::Done(Err(e)) = conn.execute_now(StmtId(1), &seven, Fetch::Discard) else {
                panic!("{var}: its error too")
            };
            assert_eq!(e.code, code, "{e}");
        }
        assert!(matches!(conn.execute_now(StmtId(0), &seven, Fetch::Rows), Now::Later));
        drop(sole);

        // The doorbell rung (the run stops): the reply is left to the runtime, and `finish`
        // reads it from where the walk stopped.
        let bell = Doorbell::new().unwrap();
        let sole = SoleConnection::claim(&bell);
        bell.ring();
        let Now::Wait(pending) = conn.execute_now(StmtId(0), &seven, Fetch::Discard) else {
            panic!("{var}: a rung doorbell hands the wait to the runtime")
        };
        assert_eq!(conn.finish(pending).await.unwrap().row_count, 1);
        drop(sole);
        let r = conn.execute(StmtId(0), &seven, Fetch::Rows).await.unwrap();
        assert_eq!(r.rows, [[Value::Int(8)]]);
    }
}

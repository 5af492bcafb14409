//! PostgreSQL for the tests that keep the board in a team database: the
//! server named by `COS_TEST_DATABASE_URL` (the test command starts one), or
//! else one this test process starts for itself with
//! `scripts/postgres-cluster.sh serve`, which stops with the process. Each
//! test gets an empty database of its own.

use std::io::BufRead;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where a test's board lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Board {
    /// The hub's own SQLite database.
    Local,
    /// A team database on PostgreSQL.
    Team,
}

/// The URL of a server's maintenance database (`.../postgres`).
fn server() -> &'static str {
    static SERVER: OnceLock<String> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("COS_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => start_own_cluster(),
    })
}

/// Starts a cluster of this process's own: the script stops it (and
/// removes its folder) once this process is gone, however it ends.
fn start_own_cluster() -> String {
    // in the system's temporary folder: the server's user must reach it,
    // and a checkout may sit under a private folder
    let dir = std::env::temp_dir().join(format!("cos-test-postgres-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/postgres-cluster.sh");
    let mut child = std::process::Command::new(script)
        .arg("serve")
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("scripts/postgres-cluster.sh runs");
    let stdout = child.stdout.take().expect("the script's output");
    let mut url = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut url)
        .expect("the script prints the server's URL");
    // the script runs until this process ends; reaped by a thread of its own
    std::thread::spawn(move || child.wait());
    let url = url.trim().to_string();
    assert!(
        url.starts_with("postgres://"),
        "the cluster did not start: {url:?}"
    );
    url
}

/// A fresh, empty database on the test server: its URL.
pub fn fresh_database() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let server = server();
    let name = format!(
        "cos_test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    // the blocking client makes a runtime of its own: never inside the test's
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let mut client = postgres::Client::connect(server, postgres::NoTls)
                    .expect("the test PostgreSQL server answers");
                client
                    .batch_execute(&format!("CREATE DATABASE {name}"))
                    .expect("a test database is created");
            })
            .join()
            .expect("creating the test database");
    });
    let base = server.rsplit_once('/').map_or(server, |(base, _)| base);
    format!("{base}/{name}")
}

/// A fresh team database for a suite running on `board`; None for the local one.
pub fn database_for(board: Board) -> Option<String> {
    (board == Board::Team).then(fresh_database)
}

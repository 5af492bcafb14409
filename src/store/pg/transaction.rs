//! How a call on the team database opens and ends its transaction: what it
//! sends first (the kind of transaction and the advisory locks it takes,
//! together in one round trip), and a guard that rolls back whatever it
//! did not commit.

use postgres::Client;

/// The advisory lock every write transaction holds (`cos-hub` and 1).
const WRITE_LOCK: i64 = 0x636f_732d_6875_6201;
/// The class of the two-key advisory locks that writes beside one another
/// take for their callers' keys (a key space apart from the lock above).
const BESIDE_LOCKS: i32 = 0x636f_7301;

/// What a call does, and so how it stands to the other writers.
pub enum Kind<'k> {
    /// Reads, each statement on its own (no transaction to open or end;
    /// the connection's transactions are read-only unless they say not).
    Reads,
    /// Reads in one snapshot.
    Snapshot,
    /// A write, one at a time.
    Alone,
    /// A write beside others of its kind but never beside one `Alone`,
    /// holding each of these keys one writer at a time.
    Beside(&'k [i32]),
}

impl Kind<'_> {
    /// The simple query that opens the transaction; none for reads.
    fn opening(&self) -> Option<String> {
        const WRITE: &str = "START TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE";
        match self {
            Kind::Reads => None,
            Kind::Snapshot => {
                Some("START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY".into())
            }
            Kind::Alone => Some(format!(
                "{WRITE}; SELECT pg_advisory_xact_lock({WRITE_LOCK})"
            )),
            Kind::Beside(keys) => {
                // the shared lock first: a write alone waits for every holder
                let mut sql = format!("{WRITE}; SELECT pg_advisory_xact_lock_shared({WRITE_LOCK})");
                for key in keys.iter() {
                    sql.push_str(&format!(
                        "; SELECT pg_advisory_xact_lock({BESIDE_LOCKS}, {key})"
                    ));
                }
                Some(sql)
            }
        }
    }

    pub fn writes(&self) -> bool {
        matches!(self, Kind::Alone | Kind::Beside(_))
    }
}

/// A connection inside the transaction it opened, rolled back if it is
/// dropped before [`Open::commit`].
pub struct Open<'c> {
    pub client: &'c mut Client,
    open: bool,
}

impl<'c> Open<'c> {
    pub fn begin(client: &'c mut Client, kind: &Kind<'_>) -> Result<Open<'c>, postgres::Error> {
        let Some(opening) = kind.opening() else {
            return Ok(Open {
                client,
                open: false,
            });
        };
        if let Err(error) = client.batch_execute(&opening) {
            // a lock that failed leaves the transaction open and aborted
            roll_back(client);
            return Err(error);
        }
        Ok(Open { client, open: true })
    }

    /// Whether it opened a transaction (reads open none).
    pub fn in_transaction(&self) -> bool {
        self.open
    }

    /// Commits, sending `last` (a statement with its values written in)
    /// in the same round trip just before the `COMMIT`.
    pub fn commit(mut self, last: Option<String>) -> Result<(), postgres::Error> {
        if !self.open {
            return Ok(());
        }
        let Some(last) = last else {
            self.open = false;
            return self.client.batch_execute("COMMIT");
        };
        // a failed `last` skips the COMMIT and leaves the transaction
        // aborted: the guard rolls it back
        self.client.batch_execute(&format!("{last}; COMMIT"))?;
        self.open = false;
        Ok(())
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        if self.open {
            roll_back(self.client);
        }
    }
}

fn roll_back(client: &mut Client) {
    if client.is_closed() {
        return;
    }
    if let Err(error) = client.batch_execute("ROLLBACK") {
        tracing::debug!(%error, "a rollback on the team database failed (the pool drops a broken connection)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_opens_with_its_locks_in_one_query_and_reads_open_nothing() {
        assert_eq!(Kind::Reads.opening(), None);
        let beside = Kind::Beside(&[-7, 3]).opening().unwrap();
        assert!(
            beside.starts_with("START TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE; ")
        );
        let shared = beside.find("pg_advisory_xact_lock_shared").unwrap();
        let first_key = beside.find(", -7)").unwrap();
        assert!(shared < first_key && first_key < beside.find(", 3)").unwrap());
        assert!(
            Kind::Alone
                .opening()
                .unwrap()
                .contains(&WRITE_LOCK.to_string())
        );
        assert!(Kind::Snapshot.opening().unwrap().contains("READ ONLY"));
        assert!(Kind::Alone.writes() && !Kind::Snapshot.writes());
    }
}

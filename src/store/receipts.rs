//! Receipts of writes sent with an idempotency key: the first request with a
//! key claims it, its answer is kept, and a repeat of the same request gets
//! that answer back instead of writing again. The table is the hub's
//! (`request_receipts`, in its migrations), kept where the shared state is:
//! with a team database, a repeat sent to another hub replays the answer too.

use super::{Session, SharedStore, StoreError};
/// How long a receipt is kept.
pub const RECEIPT_SECONDS: i64 = 24 * 60 * 60;

/// A kept answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Receipt {
    pub status: u16,
    /// `name: value` lines of the headers worth replaying.
    pub headers: String,
    pub body: Vec<u8>,
}

/// What claiming a key found.
#[derive(Debug, PartialEq)]
pub enum Claim {
    /// The key is new: the request runs, and its answer is to be kept.
    Claimed,
    /// The same request ran before: its answer.
    Answered(Receipt),
    /// The key was used for another request.
    OtherRequest,
    /// The same request is still running under this key.
    Running,
    /// The first request with this key committed, but the hub running it
    /// stopped before keeping its answer.
    AnswerLost { committed_at: String },
}

/// A key claimed this long ago with no answer kept belongs to a request
/// whose hub stopped: no write waits that long for a connection or a lock.
const ABANDONED_SECONDS: i64 = 10 * 60;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_secs() as i64)
        .unwrap_or(0)
}

impl SharedStore {
    /// Claims `key` for the request with `fingerprint` (dropping expired receipts first).
    pub fn claim_request(&self, key: &str, fingerprint: &str) -> Result<Claim, StoreError> {
        self.write_unrecorded(|tx| claim(tx, key, fingerprint))
    }

    /// Keeps the answer of the request that claimed `key`.
    pub fn keep_receipt(&self, key: &str, receipt: &Receipt) -> Result<(), StoreError> {
        self.write_unrecorded(|tx| {
            tx.execute(
                "UPDATE request_receipts SET status = ?2, headers = ?3, body = ?4 WHERE key = ?1",
                &[
                    key.into(),
                    i64::from(receipt.status).into(),
                    (&receipt.headers).into(),
                    receipt.body.clone().into(),
                ],
            )
            .map(|_| ())
        })
    }

    /// Releases `key` after a request that changed nothing, so it may run again.
    pub fn release_request(&self, key: &str) -> Result<(), StoreError> {
        self.write_unrecorded(|tx| {
            tx.execute(
                "DELETE FROM request_receipts WHERE key = ?1 AND status IS NULL",
                &[key.into()],
            )
            .map(|_| ())
        })
    }
}

fn claim(tx: &Session, key: &str, fingerprint: &str) -> Result<Claim, StoreError> {
    tx.execute(
        "DELETE FROM request_receipts WHERE created_at < ?1",
        &[(now() - RECEIPT_SECONDS).into()],
    )?;
    let found = tx.query_opt(
        "SELECT fingerprint, status, headers, body, created_at FROM request_receipts WHERE key = ?1",
        &[key.into()],
    )?;
    let Some(row) = found else {
        tx.execute(
            "INSERT INTO request_receipts(key, fingerprint, created_at) VALUES (?1, ?2, ?3)",
            &[key.into(), fingerprint.into(), now().into()],
        )?;
        return Ok(Claim::Claimed);
    };
    if row.text(0)? != fingerprint {
        return Ok(Claim::OtherRequest);
    }
    Ok(match row.opt_int(1)? {
        None if row.int(4)? < now() - ABANDONED_SECONDS => abandoned(tx, key)?,
        None => Claim::Running,
        Some(status) => Claim::Answered(Receipt {
            status: u16::try_from(status).unwrap_or(500),
            headers: row.opt_text(2)?.unwrap_or_default(),
            body: row.opt_blob(3)?.unwrap_or_default(),
        }),
    })
}

/// What becomes of a key whose request was abandoned: its write committed
/// (the answer is lost, but not the outcome), or it did not, and the key is
/// claimed afresh so the request runs now.
fn abandoned(tx: &Session, key: &str) -> Result<Claim, StoreError> {
    if let Some(committed) = super::requests::committed(tx, key)? {
        return Ok(Claim::AnswerLost {
            committed_at: committed.rfc3339(),
        });
    }
    tx.execute(
        "UPDATE request_receipts SET created_at = ?2 WHERE key = ?1",
        &[key.into(), now().into()],
    )?;
    Ok(Claim::Claimed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, requests};

    fn backdate(shared: &SharedStore) {
        shared
            .write_unrecorded(|tx| {
                tx.execute(
                    "UPDATE request_receipts SET created_at = created_at - ?1",
                    &[(ABANDONED_SECONDS + 1).into()],
                )
            })
            .unwrap();
    }

    #[test]
    fn an_abandoned_key_runs_again_unless_its_write_committed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &crate::hub::default_registry().schemas()).unwrap();
        let shared = SharedStore::Local(store);
        assert_eq!(shared.claim_request("k", "f").unwrap(), Claim::Claimed);
        assert_eq!(shared.claim_request("k", "f").unwrap(), Claim::Running);
        assert_eq!(shared.claim_request("k", "g").unwrap(), Claim::OtherRequest);

        // its hub stopped before writing anything: the request runs again
        backdate(&shared);
        assert_eq!(shared.claim_request("k", "f").unwrap(), Claim::Claimed);
        assert_eq!(shared.claim_request("k", "f").unwrap(), Claim::Running);

        // its write committed, then its hub stopped: never run twice
        requests::scope("k", "cos_task_create", || {
            shared.write(|_| Ok::<_, StoreError>(())).unwrap()
        });
        assert!(matches!(
            shared.claim_request("k", "f").unwrap(),
            Claim::Running
        ));
        backdate(&shared);
        assert!(matches!(
            shared.claim_request("k", "f").unwrap(),
            Claim::AnswerLost { .. }
        ));
    }
}

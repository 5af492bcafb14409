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
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_secs() as i64)
        .unwrap_or(0)
}

impl SharedStore {
    /// Claims `key` for the request with `fingerprint` (dropping expired receipts first).
    pub fn claim_request(&self, key: &str, fingerprint: &str) -> Result<Claim, StoreError> {
        self.write(|tx| claim(tx, key, fingerprint))
    }

    /// Keeps the answer of the request that claimed `key`.
    pub fn keep_receipt(&self, key: &str, receipt: &Receipt) -> Result<(), StoreError> {
        self.write(|tx| {
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
        self.write(|tx| {
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
        "SELECT fingerprint, status, headers, body FROM request_receipts WHERE key = ?1",
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
        None => Claim::Running,
        Some(status) => Claim::Answered(Receipt {
            status: u16::try_from(status).unwrap_or(500),
            headers: row.opt_text(2)?.unwrap_or_default(),
            body: row.opt_blob(3)?.unwrap_or_default(),
        }),
    })
}

//! Receipts of writes sent with an idempotency key: the first request with a
//! key claims it, its answer is kept, and a repeat of the same request gets
//! that answer back instead of writing again. The table is the hub's
//! (`request_receipts`, in its migrations); every front door and area that
//! takes request keys shares it.

use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError};

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

/// A receipt row as read: (fingerprint, status, headers, body); no status yet
/// while its request runs.
type Row = (String, Option<u16>, Option<String>, Option<Vec<u8>>);

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_secs() as i64)
        .unwrap_or(0)
}

impl Store {
    /// Claims `key` for the request with `fingerprint` (dropping expired receipts first).
    pub fn claim_request(&self, key: &str, fingerprint: &str) -> Result<Claim, StoreError> {
        self.write(|tx| {
            let run = || -> rusqlite::Result<Claim> {
                tx.execute(
                    "DELETE FROM request_receipts WHERE created_at < ?1",
                    [now() - RECEIPT_SECONDS],
                )?;
                let found: Option<Row> = tx
                    .query_row(
                        "SELECT fingerprint, status, headers, body FROM request_receipts WHERE key = ?1",
                        [key],
                        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
                    )
                    .optional()?;
                Ok(match found {
                    None => {
                        tx.execute(
                            "INSERT INTO request_receipts(key, fingerprint, created_at) VALUES (?1, ?2, ?3)",
                            params![key, fingerprint, now()],
                        )?;
                        Claim::Claimed
                    }
                    Some((kept, _, _, _)) if kept != fingerprint => Claim::OtherRequest,
                    Some((_, Some(status), headers, body)) => Claim::Answered(Receipt {
                        status,
                        headers: headers.unwrap_or_default(),
                        body: body.unwrap_or_default(),
                    }),
                    Some((_, None, _, _)) => Claim::Running,
                })
            };
            run().map_err(|error| StoreError::on(tx, error))
        })
    }

    /// Keeps the answer of the request that claimed `key`.
    pub fn keep_receipt(&self, key: &str, receipt: &Receipt) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE request_receipts SET status = ?2, headers = ?3, body = ?4 WHERE key = ?1",
                params![key, receipt.status, receipt.headers, receipt.body],
            )
            .map(|_| ())
            .map_err(|error| StoreError::on(tx, error))
        })
    }

    /// Releases `key` after a request that changed nothing, so it may run again.
    pub fn release_request(&self, key: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute(
                "DELETE FROM request_receipts WHERE key = ?1 AND status IS NULL",
                [key],
            )
            .map(|_| ())
            .map_err(|error| StoreError::on(tx, error))
        })
    }
}

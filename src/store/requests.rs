//! Request IDs on shared writes: every write a tool call makes to the shared
//! state records its request ID in `write_requests` inside the same
//! transaction, so whether it committed can be asked later and answered from
//! the database itself, never guessed. A call's second and later writes are
//! recorded as `ID#2`, `ID#3`, ..., so each transaction has an ID of its own.
//!
//! The ID rides on the thread running the call ([`scope`]), as the runtime
//! runs each call on one blocking thread from start to end.

use std::cell::RefCell;
use std::sync::atomic::{AtomicI64, Ordering};

use super::{Session, SharedStore, StoreError};

/// How long a request's record is kept.
pub const KEPT_SECONDS: i64 = 24 * 60 * 60;
/// How often old records are dropped, at most.
const PURGE_EVERY_SECONDS: i64 = 60 * 60;

struct Current {
    id: String,
    tool: &'static str,
    writes: u32,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

static LAST_PURGE: AtomicI64 = AtomicI64::new(0);

/// Runs `work` as the call `id` of `tool`: the shared writes it makes are recorded.
pub fn scope<T>(id: &str, tool: &'static str, work: impl FnOnce() -> T) -> T {
    struct Restore(Option<Current>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|current| *current.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|current| {
        current.borrow_mut().replace(Current {
            id: id.to_string(),
            tool,
            writes: 0,
        })
    });
    let _restore = Restore(previous);
    work()
}

/// A new request ID, for a call that came with none.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The ID the next shared write of the current call records (`None` outside a call).
fn next() -> Option<(String, &'static str)> {
    CURRENT.with(|current| {
        let mut current = current.borrow_mut();
        let current = current.as_mut()?;
        current.writes += 1;
        Some((transaction_id(&current.id, current.writes), current.tool))
    })
}

/// The ID the current call's latest shared write recorded: the one a
/// `COMMIT_UNKNOWN` asks the caller to check.
pub fn latest() -> Option<String> {
    CURRENT.with(|current| {
        let current = current.borrow();
        let current = current.as_ref()?;
        (current.writes > 0).then(|| transaction_id(&current.id, current.writes))
    })
}

fn transaction_id(id: &str, write: u32) -> String {
    if write <= 1 {
        id.to_string()
    } else {
        format!("{id}#{write}")
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_secs() as i64)
        .unwrap_or(0)
}

/// Records the current call's next write in `tx`, the transaction that
/// carries it (nothing outside a call).
pub(super) fn record(tx: &Session) -> Result<(), StoreError> {
    let Some((id, tool)) = next() else {
        return Ok(());
    };
    let at = now();
    let last = LAST_PURGE.load(Ordering::Relaxed);
    if at - last >= PURGE_EVERY_SECONDS
        && LAST_PURGE
            .compare_exchange(last, at, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        tx.execute(
            "DELETE FROM write_requests WHERE committed_at < ?1",
            &[(at - KEPT_SECONDS).into()],
        )?;
    }
    // an ID sent again for another write keeps its first record
    tx.execute_at_commit(super::sql::Write {
        sql: "INSERT INTO write_requests(request_id, tool, committed_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (request_id) DO NOTHING"
            .into(),
        parameters: vec![id.as_str().into(), tool.into(), at.into()],
    })
}

/// A write that committed under a request ID.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    /// The tool whose write it was.
    pub tool: String,
    /// When it committed (seconds since the Unix epoch).
    pub at: i64,
}

impl Committed {
    /// When it committed, as the hub writes times.
    pub fn rfc3339(&self) -> String {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(self.at.max(0) as u64);
        humantime::format_rfc3339_seconds(at).to_string()
    }
}

impl SharedStore {
    /// The write committed under `id`, if one did. It waits for the writes
    /// under way (it takes the write lock), so a write whose commit went
    /// unconfirmed has settled one way or the other before it is asked.
    pub fn committed_request(&self, id: &str) -> Result<Option<Committed>, StoreError> {
        self.write_unrecorded(|tx| committed(tx, id))
    }
}

/// The write committed under `id` (in the last day), read inside `tx`.
pub(super) fn committed(tx: &Session, id: &str) -> Result<Option<Committed>, StoreError> {
    let row = tx.query_opt(
        "SELECT tool, committed_at FROM write_requests WHERE request_id = ?1",
        &[id.into()],
    )?;
    row.map(|row| {
        Ok(Committed {
            tool: row.text(0)?,
            at: row.int(1)?,
        })
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_names_each_of_its_writes_and_forgets_them_when_it_ends() {
        assert_eq!(next(), None);
        scope("r1", "cos_tool", || {
            assert_eq!(latest(), None);
            assert_eq!(next(), Some(("r1".to_string(), "cos_tool")));
            assert_eq!(next(), Some(("r1#2".to_string(), "cos_tool")));
            assert_eq!(latest().as_deref(), Some("r1#2"));
            scope("inner", "cos_other", || {
                assert_eq!(next(), Some(("inner".to_string(), "cos_other")));
            });
            assert_eq!(latest().as_deref(), Some("r1#2"));
        });
        assert_eq!(latest(), None);
    }
}

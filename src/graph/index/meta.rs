//! The graph's own bookkeeping in `graph_meta` and `graph_revision`: the
//! rules it was built under, what the last run left out, when it last
//! changed, and the revision every changing run bumps.

use super::*;

/// What the last run left out, as `graph_meta`'s `left_out` keeps it.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOutNow {
    /// Files left out in all.
    pub count: u64,
    /// How many each reason left out (binary, minified, generated, ...).
    #[serde(default)]
    pub by_reason: BTreeMap<String, u64>,
    /// The first of them in path order.
    pub first: Vec<LeftOut>,
}

/// Keeps `value` as JSON under `key` in `graph_meta`.
pub(super) fn keep_meta_json<T: Serialize>(
    store: &Store,
    key: &str,
    value: &T,
) -> Result<(), StoreError> {
    let value = serde_json::to_string(value).unwrap_or_default();
    store.write(|tx| set_meta(tx, key, &value).map_err(|error| StoreError::on(tx, error)))
}

/// What the last index run left out (nothing before the first run).
pub fn left_out_now(c: &Connection) -> rusqlite::Result<LeftOutNow> {
    meta_json(c, "left_out")
}

/// The files the graph covered by language after the last index run
/// (nothing before the first run), as the run counted them: the hub's
/// health reads this rather than count every file at each call.
pub fn languages_now(c: &Connection) -> rusqlite::Result<BTreeMap<String, FilesAndBytes>> {
    meta_json(c, "languages")
}

/// The value `graph_meta` keeps under `key`, if any.
pub(super) fn meta(c: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    c.query_row(
        "SELECT value FROM graph_meta WHERE key = ?1",
        [key],
        |row| row.get(0),
    )
    .optional()
}

/// The JSON `graph_meta` keeps under `key`; the default when there is none
/// (or it does not read as a `T`).
pub(super) fn meta_json<T: serde::de::DeserializeOwned + Default>(
    c: &Connection,
    key: &str,
) -> rusqlite::Result<T> {
    Ok(meta(c, key)?
        .and_then(|value| serde_json::from_str(&value).ok())
        .unwrap_or_default())
}

/// Keeps `value` under `key` in `graph_meta`.
pub(super) fn set_meta(tx: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO graph_meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )
    .map(|_| ())
}

/// Marks the graph changed: answers cached under the old revision are not
/// served again, and the time of the change is the graph's `updated_at` (never
/// earlier than the last one, whatever the clock does).
pub fn bump_revision(tx: &Connection) -> rusqlite::Result<()> {
    let now = crate::tools::now();
    tx.execute(
        "UPDATE graph_revision SET revision = revision + 1,
             updated_at = max(coalesce(updated_at, ''), ?1)",
        [now],
    )?;
    Ok(())
}

/// When the graph last changed, `None` before its first index.
pub fn updated_at(connection: &Connection) -> rusqlite::Result<Option<String>> {
    connection.query_row("SELECT updated_at FROM graph_revision", [], |row| {
        row.get(0)
    })
}

/// The graph's revision; read it before the data an answer is cached under.
pub fn revision(connection: &Connection) -> rusqlite::Result<i64> {
    connection
        .prepare_cached("SELECT revision FROM graph_revision")?
        .query_row([], |row| row.get(0))
}

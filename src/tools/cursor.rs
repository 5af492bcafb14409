//! Cursors: opaque, tamper-evident positions in a listing, bound to the query
//! they page.
//!
//! A cursor is `base64url(JSON {scope, at}) . base64url(MAC)`, the MAC a keyed
//! BLAKE3 hash under the hub's own key (kept in `$COS_STATE_DIR/cursor.key`, so
//! cursors outlive a restart; with a team database, the key kept there, so a
//! cursor one hub gave out pages on every hub). `scope` hashes the tool and the arguments that
//! define the listing; `at` is the tool's position (an offset and the revision
//! it was read at, or a keyset). A cursor this hub did not make is `E_CURSOR`;
//! one made for another query, or for data that has changed since, is
//! `STALE_CURSOR`.

use super::{Page, ToolError};
use crate::envelope::{Category, Code, ErrorBody};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

const KEY_FILE: &str = "cursor.key";
const MAC_BYTES: usize = 12;

/// The hub's cursor key.
#[derive(Clone)]
pub struct Keyring {
    key: [u8; 32],
    /// The key every hub on a team database shares, read from it once.
    team: Option<Arc<TeamKey>>,
}

struct TeamKey {
    store: crate::store::pg::PgStore,
    /// The key once read, or when the last try to read it failed.
    key: std::sync::Mutex<Result<[u8; 32], Option<std::time::Instant>>>,
}

/// How long after a failed read of the team's key the next call tries
/// again: meanwhile the graph's and documents' cursors do not wait on an
/// unreachable database.
const TEAM_KEY_RETRY: std::time::Duration = std::time::Duration::from_secs(30);

impl TeamKey {
    /// The team's key, made by the first hub that asks; None while the
    /// database cannot be reached (this hub's own key serves meanwhile).
    fn key(&self) -> Option<[u8; 32]> {
        let mut kept = self
            .key
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match *kept {
            Ok(key) => return Some(key),
            Err(Some(failed)) if failed.elapsed() < TEAM_KEY_RETRY => return None,
            Err(_) => {}
        }
        match self.read_or_make() {
            Ok(key) => *kept = Ok(key),
            Err(error) => {
                *kept = Err(Some(std::time::Instant::now()));
                tracing::warn!(%error, "the team's cursor key is out of reach; this hub's own key seals cursors meanwhile");
            }
        }
        kept.ok()
    }

    fn read_or_make(&self) -> Result<[u8; 32], crate::store::StoreError> {
        self.store.shared_key("cursor", fresh_key())
    }
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keyring(..)")
    }
}

impl Keyring {
    /// The key kept in the state folder, made on first use. When it cannot be
    /// kept (a read-only folder), a key for this process only: cursors then
    /// end with the process, which is refused cleanly as `E_CURSOR`.
    pub fn load(state_dir: &Path) -> Keyring {
        let path = state_dir.join(KEY_FILE);
        if let Some(key) = read_key(&path) {
            return Keyring { key, team: None };
        }
        // written whole beside the key, then linked into place: of two
        // processes starting at once, one links and both read the same key
        let _ = std::fs::create_dir_all(state_dir);
        let draft = state_dir.join(format!("{KEY_FILE}.{}", uuid::Uuid::new_v4()));
        let linked = write_private(&draft, &fresh_key()).and_then(|()| {
            std::fs::hard_link(&draft, &path).or_else(|error| {
                if error.kind() == std::io::ErrorKind::AlreadyExists {
                    Ok(())
                } else {
                    Err(error)
                }
            })
        });
        let _ = std::fs::remove_file(&draft);
        match (linked, read_key(&path)) {
            (Ok(()), Some(key)) => Keyring { key, team: None },
            _ => {
                tracing::warn!(
                    "the cursor key cannot be kept in the state folder; cursors end with this process"
                );
                Keyring {
                    key: fresh_key(),
                    team: None,
                }
            }
        }
    }

    /// The same keyring sealing with the key kept in `team`'s database.
    pub fn shared_through(mut self, team: Option<&crate::store::pg::PgStore>) -> Keyring {
        self.team = team.map(|store| {
            Arc::new(TeamKey {
                store: store.clone(),
                key: std::sync::Mutex::new(Err(None)),
            })
        });
        self
    }

    /// A keyring with a given key, for tests.
    pub fn with_key(key: [u8; 32]) -> Keyring {
        Keyring { key, team: None }
    }

    /// The key that seals: the team's when there is one and it answers.
    fn sealing_key(&self) -> [u8; 32] {
        self.team
            .as_ref()
            .and_then(|team| team.key())
            .unwrap_or(self.key)
    }

    fn mac(&self, payload: &[u8]) -> [u8; MAC_BYTES] {
        mac_with(&self.sealing_key(), payload)
    }

    /// True when `mac` seals `payload` under the team's key or this hub's
    /// own (a cursor sealed while the team database was out of reach).
    fn verifies(&self, payload: &[u8], mac: &[u8]) -> bool {
        let matches = |key: &[u8; 32]| {
            let expected = mac_with(key, payload);
            mac.len() == MAC_BYTES && bool::from(subtle::ConstantTimeEq::ct_eq(mac, &expected[..]))
        };
        matches(&self.sealing_key()) || (self.team.is_some() && matches(&self.key))
    }
}

fn mac_with(key: &[u8; 32], payload: &[u8]) -> [u8; MAC_BYTES] {
    let hash = blake3::keyed_hash(key, payload);
    let mut mac = [0u8; MAC_BYTES];
    mac.copy_from_slice(&hash.as_bytes()[..MAC_BYTES]);
    mac
}

impl Keyring {
    /// The cursor for position `at` in the listing `scope`.
    pub fn seal(&self, scope: &str, at: &Value) -> String {
        let payload = json!({"s": scope_hash(scope), "at": at}).to_string();
        let mac = self.mac(payload.as_bytes());
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload.as_bytes()),
            URL_SAFE_NO_PAD.encode(mac)
        )
    }

    /// The position a cursor holds, when this hub made it for the listing `scope`.
    pub fn open(&self, field: &str, scope: &str, cursor: &str) -> Result<Value, ToolError> {
        let malformed = || malformed(field);
        let (payload, mac) = cursor.split_once('.').ok_or_else(malformed)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| malformed())?;
        let mac = URL_SAFE_NO_PAD.decode(mac).map_err(|_| malformed())?;
        if !self.verifies(&payload, &mac) {
            return Err(malformed());
        }
        let mut sealed: Value = serde_json::from_slice(&payload).map_err(|_| malformed())?;
        if sealed["s"] != json!(scope_hash(scope)) {
            return Err(stale(
                field,
                "The cursor belongs to another query; ask again without cursor",
            ));
        }
        Ok(sealed["at"].take())
    }
}

/// `E_CURSOR`: not a cursor this hub made.
pub fn malformed(field: &str) -> ToolError {
    ToolError::from(
        ErrorBody::new(
            Category::Validation,
            Code::E_CURSOR,
            format!("{field}: not a cursor this hub gave out; ask again without it"),
        )
        .with_details(json!({"field": field})),
    )
}

/// `STALE_CURSOR` with the seed's wording.
pub fn stale(field: &str, message: &str) -> ToolError {
    ToolError::from(
        ErrorBody::new(Category::Conflict, Code::STALE_CURSOR, message)
            .with_details(json!({"field": field})),
    )
}

fn scope_hash(scope: &str) -> String {
    blake3::hash(scope.as_bytes()).to_hex()[..16].to_string()
}

fn read_key(path: &Path) -> Option<[u8; 32]> {
    let bytes = std::fs::read(path).ok()?;
    <[u8; 32]>::try_from(bytes.as_slice()).ok()
}

fn fresh_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    key[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    key
}

fn write_private(path: &Path, key: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    options.open(path)?.write_all(key)
}

/// Offsets into a listing read at one revision: the paging most tools use.
/// A cursor from another revision is stale, since offsets shift when data does.
#[derive(Debug, Clone)]
pub struct Offsets {
    keyring: Keyring,
    scope: String,
    revision: i64,
}

impl Offsets {
    /// `query` names what is listed (the tool's arguments but the cursor and the limit).
    pub fn new(
        keyring: &Keyring,
        tool: &str,
        query: impl std::fmt::Debug,
        revision: i64,
    ) -> Offsets {
        Offsets {
            keyring: keyring.clone(),
            scope: format!("{tool}|{query:?}"),
            revision,
        }
    }

    /// Where to start: 0 without a cursor, else the offset the cursor holds.
    pub fn start(&self, field: &str, cursor: Option<&str>) -> Result<usize, ToolError> {
        match self.start_in(field, cursor)? {
            None => Ok(0),
            Some((list, offset)) if list.is_empty() => Ok(offset),
            Some(_) => Err(malformed(field)),
        }
    }

    /// For answers with several lists: which list a cursor continues and from
    /// where (the list is empty for single-list cursors), or None without one.
    pub fn start_in(
        &self,
        field: &str,
        cursor: Option<&str>,
    ) -> Result<Option<(String, usize)>, ToolError> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        let at = self.keyring.open(field, &self.scope, cursor)?;
        let (Some(revision), Some(offset)) = (at["r"].as_i64(), at["o"].as_u64()) else {
            return Err(malformed(field));
        };
        if revision != self.revision {
            return Err(stale(
                field,
                "The data changed since this cursor; list again",
            ));
        }
        let list = at["l"].as_str().unwrap_or_default().to_string();
        Ok(Some((list, offset as usize)))
    }

    pub fn cursor_at(&self, offset: usize) -> String {
        self.cursor_in("", offset)
    }

    /// The cursor for offset `offset` of the list named `list` ("" for an answer's only list).
    pub fn cursor_in(&self, list: &str, offset: usize) -> String {
        let at = if list.is_empty() {
            json!({"r": self.revision, "o": offset})
        } else {
            json!({"r": self.revision, "o": offset, "l": list})
        };
        self.keyring.seal(&self.scope, &at)
    }

    /// The cursor after a page that started at `start` and showed `shown` of
    /// the listing's items, when more remain.
    pub fn next(&self, start: usize, shown: usize, more: bool) -> Option<String> {
        more.then(|| self.cursor_at(start + shown))
    }

    /// The page at `list`, started at `start`, whose cursor lives at `cursor_field`.
    pub fn page(&self, list: &str, cursor_field: &str, start: usize) -> Page {
        self.page_in("", list, cursor_field, start)
    }

    /// The page of the list named `name`, at `list`, started at `start`, whose
    /// cursor lives at `cursor_field`.
    pub fn page_in(&self, name: &str, list: &str, cursor_field: &str, start: usize) -> Page {
        let offsets = self.clone();
        let name = name.to_string();
        Page {
            list: list.to_string(),
            cursor_field: cursor_field.to_string(),
            resume: Arc::new(move |kept, _| offsets.cursor_in(&name, start + kept)),
        }
    }
}

/// What a cursor leaves of one of an answer's named lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The list from this offset on.
    From(usize),
    /// Nothing: the cursor continues another list.
    Nothing,
}

impl Keep {
    /// Cuts `items` as kept; returns the offset the list now starts at.
    pub fn apply<T>(self, items: &mut Vec<T>) -> usize {
        match self {
            Keep::From(offset) => {
                let rest = items.split_off(offset.min(items.len()));
                *items = rest;
                offset
            }
            Keep::Nothing => {
                items.clear();
                0
            }
        }
    }
}

/// For an answer of several named lists and a cursor into one of them (`from`:
/// the list and offset a cursor holds): that list from the offset, the others
/// nothing; every list whole without a cursor. A cursor naming no list here is
/// `E_CURSOR`.
pub fn narrowing(
    field: &str,
    names: &[&str],
    from: Option<&(String, usize)>,
) -> Result<Vec<Keep>, ToolError> {
    let Some((name, offset)) = from else {
        return Ok(vec![Keep::From(0); names.len()]);
    };
    if !names.contains(&name.as_str()) {
        return Err(malformed(field));
    }
    Ok(names
        .iter()
        .map(|list| {
            if list == name {
                Keep::From(*offset)
            } else {
                Keep::Nothing
            }
        })
        .collect())
}

/// Pages for named lists at `/<prefix><name>`, their cursors in `/next_cursors/<name>`.
pub fn named_pages(offsets: &Offsets, prefix: &str, names: &[&str], starts: &[usize]) -> Vec<Page> {
    names
        .iter()
        .zip(starts)
        .map(|(name, start)| {
            offsets.page_in(
                name,
                &format!("/{prefix}{name}"),
                &format!("/next_cursors/{name}"),
                *start,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(error: ToolError) -> ErrorBody {
        error.to_body("")
    }

    #[test]
    fn cursors_open_only_for_their_query_and_revision() {
        let keyring = Keyring::with_key([7; 32]);
        let offsets = Offsets::new(&keyring, "cos_x", ("a", 1), 5);
        let cursor = offsets.cursor_at(40);
        assert_eq!(offsets.start("cursor", Some(&cursor)).ok(), Some(40));
        assert_eq!(offsets.start("cursor", None).ok(), Some(0));

        let other_query = Offsets::new(&keyring, "cos_x", ("b", 1), 5);
        let refused = body(other_query.start("cursor", Some(&cursor)).unwrap_err());
        assert_eq!(refused.code, Code::STALE_CURSOR);
        assert_eq!(refused.category, Category::Conflict);

        let moved_on = Offsets::new(&keyring, "cos_x", ("a", 1), 6);
        let refused = body(moved_on.start("cursor", Some(&cursor)).unwrap_err());
        assert_eq!(refused.code, Code::STALE_CURSOR);
        assert!(refused.message.contains("changed"));

        for forged in [
            "",
            "abc",
            "e30.AAAA",
            &cursor.replace('.', ""),
            &format!("{cursor}x"),
        ] {
            let refused = body(offsets.start("cursor", Some(forged)).unwrap_err());
            assert_eq!(refused.code, Code::E_CURSOR, "{forged}");
            assert_eq!(refused.details.unwrap()["field"], "cursor");
        }
        // another hub's key does not open it
        let elsewhere = Offsets::new(&Keyring::with_key([8; 32]), "cos_x", ("a", 1), 5);
        let refused = body(elsewhere.start("cursor", Some(&cursor)).unwrap_err());
        assert_eq!(refused.code, Code::E_CURSOR);
    }

    #[test]
    fn the_key_outlives_the_process() {
        let dir = tempfile::tempdir().unwrap();
        let first = Keyring::load(dir.path());
        let again = Keyring::load(dir.path());
        assert_eq!(first.key, again.key);
        assert_ne!(
            first.key,
            Keyring::load(tempfile::tempdir().unwrap().path()).key
        );
    }
}

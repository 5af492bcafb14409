//! Secrets every hub on a team database shares (the key that seals cursors),
//! kept in the hub's `hub_keys` table: made by the first hub that asks, read
//! by every other.

use super::PgStore;
use crate::store::StoreError;

impl PgStore {
    /// The 32-byte key `name`, made from `fresh` if no hub made it before.
    pub fn shared_key(&self, name: &str, fresh: [u8; 32]) -> Result<[u8; 32], StoreError> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO hub_keys(name, key) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                &[name.into(), fresh.to_vec().into()],
            )?;
            let key = tx
                .query_one("SELECT key FROM hub_keys WHERE name = ?1", &[name.into()])?
                .opt_blob(0)?
                .unwrap_or_default();
            <[u8; 32]>::try_from(key.as_slice()).map_err(|_| {
                StoreError::Url(format!("hub_keys holds a key {name} that is not 32 bytes"))
            })
        })
    }
}

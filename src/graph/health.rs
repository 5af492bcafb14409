//! What the graph says in the hub's health: the files it covered by
//! language after the last index run (how many and their bytes; each is
//! searched as code text but Markdown, searched by section as documents),
//! what that run left out and why, and the calls and imports it resolved
//! and left unresolved by language, all as the run kept them.

use serde_json::json;

use super::index;
use crate::store::StoreError;
use crate::tools::ToolContext;
use crate::tools::area::AreaHealth;

pub fn report(context: &ToolContext) -> AreaHealth {
    let mut health = AreaHealth::default();
    let read = context.hub.store.view(|c| {
        let languages = index::languages_now(c).map_err(|e| StoreError::on(c, e))?;
        let left_out = index::left_out_now(c).map_err(|e| StoreError::on(c, e))?;
        let resolution = index::resolution_now(c).map_err(|e| StoreError::on(c, e))?;
        Ok::<_, StoreError>((languages, left_out, resolution))
    });
    match read {
        Ok((languages, left_out, resolution)) => {
            health.report.insert("resolution".into(), json!(resolution));
            health.report.insert(
                "files".into(),
                json!({
                    "files": languages.values().map(|l| l.files).sum::<u64>(),
                    "bytes": languages.values().map(|l| l.bytes).sum::<u64>(),
                    "by_language": languages,
                    "left_out": {
                        "count": left_out.count,
                        "by_reason": left_out.by_reason,
                        "first": left_out.first,
                    },
                }),
            );
        }
        Err(error) => health.problems.push(format!("graph: {error}")),
    }
    health
}

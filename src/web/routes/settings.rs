//! `/api/settings/modules`: which modules are on, and switching them.

use super::RouterSpec;
use crate::hub::{ModuleInfo, ModuleList, ModuleListing, ModuleSet, ModuleSetInput, NoInput};
use crate::tools::Hub;
use crate::web::extract::{AppJson, AppPath};
use crate::web::unwrap::{ApiError, ApiOk, Success, run};
use axum::extract::State;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

pub const SPEC: RouterSpec = RouterSpec {
    tag: "settings",
    extra_errors: &[],
    request_ids_under: None,
    router,
};

fn router() -> OpenApiRouter<Hub> {
    OpenApiRouter::new()
        .routes(routes!(modules_list))
        .routes(routes!(module_set))
}

/// Lists the hub's modules, whether each is enabled, and their tools.
#[utoipa::path(get, path = "/api/settings/modules", operation_id = "settings_modules_list", tag = "settings",
    responses((status = 200, description = "Every module with its switch", body = ApiOk<ModuleListing>)))]
async fn modules_list(State(hub): State<Hub>) -> Result<Success<ModuleListing>, ApiError> {
    run::<ModuleList>(&hub, NoInput {}).await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModuleSwitch {
    pub enabled: bool,
}

/// Enables or disables one module.
#[utoipa::path(put, path = "/api/settings/modules/{module}", operation_id = "settings_module_set", tag = "settings",
    params(("module" = inline(crate::hub::ModuleId), Path, description = "A module id, as GET /api/settings/modules lists them")),
    request_body = ModuleSwitch,
    responses((status = 200, description = "The module's new state", body = ApiOk<ModuleInfo>)))]
async fn module_set(
    State(hub): State<Hub>,
    AppPath(module): AppPath<String>,
    AppJson(switch): AppJson<ModuleSwitch>,
) -> Result<Success<ModuleInfo>, ApiError> {
    run::<ModuleSet>(
        &hub,
        ModuleSetInput {
            module,
            enabled: switch.enabled,
        },
    )
    .await
}

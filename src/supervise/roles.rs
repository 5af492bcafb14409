//! The role registry: which bundle field a formula's output fills and the
//! JSON Schema it must meet. `$COS_STATE_DIR/roles.toml` replaces the
//! default registry (researcher, analyst, architect, reviewer, tester, each
//! accepting any JSON object):
//!
//! ```toml
//! [[roles]]
//! id = "researcher"                 # what formula_id names: [a-z0-9_]+
//! field = "research"                # the bundle field (default: the id)
//! schema = { type = "object", required = ["findings"] }
//! # or: schema_file = "schemas/researcher.json" (relative to the state dir)
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::tools::ToolError;

/// The default roles, each taking any JSON object.
const DEFAULT_ROLES: &[&str] = &["researcher", "analyst", "architect", "reviewer", "tester"];

/// Names a bundle file already uses at its top level, so no field may take them.
const RESERVED_FIELDS: &[&str] = &[
    "session_id",
    "task_marker",
    "persona_id",
    "version",
    "created_at",
    "updated_at",
    "backtracks",
    "discoveries",
    "degraded_formulas",
];

pub struct Role {
    pub id: String,
    pub field: String,
    validator: jsonschema::Validator,
}

pub struct Roles {
    pub roles: Vec<Role>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RolesFile {
    #[serde(default)]
    roles: Vec<RoleEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleEntry {
    id: String,
    field: Option<String>,
    schema: Option<toml::Value>,
    schema_file: Option<PathBuf>,
}

/// True for the identifiers roles, fields and formula ids are made of.
pub fn is_identifier(text: &str) -> bool {
    (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

impl Roles {
    /// The registry of this state dir: its `roles.toml`, else the default one.
    pub fn load(state_dir: &Path) -> Result<Roles, ToolError> {
        let path = state_dir.join("roles.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Roles::default_registry());
            }
            Err(error) => return Err(ToolError::io(format!("reading {}", path.display()), error)),
        };
        let file: RolesFile =
            toml::from_str(&text).map_err(|error| ToolError::config(&path, &error.to_string()))?;
        if file.roles.is_empty() {
            return Err(ToolError::config(
                &path,
                "declares no [[roles]]; remove the file to use the default registry",
            ));
        }
        let mut roles: Vec<Role> = Vec::with_capacity(file.roles.len());
        for entry in file.roles {
            let role = Self::role_of(&path, state_dir, entry)?;
            if roles.iter().any(|known| known.id == role.id) {
                return Err(ToolError::config(
                    &path,
                    &format!("role {:?} is declared twice", role.id),
                ));
            }
            roles.push(role);
        }
        Ok(Roles { roles })
    }

    fn default_registry() -> Roles {
        let roles = DEFAULT_ROLES
            .iter()
            .filter_map(|id| {
                jsonschema::validator_for(&json!({"type": "object"}))
                    .ok()
                    .map(|validator| Role {
                        id: (*id).to_string(),
                        field: (*id).to_string(),
                        validator,
                    })
            })
            .collect();
        Roles { roles }
    }

    fn role_of(path: &Path, state_dir: &Path, entry: RoleEntry) -> Result<Role, ToolError> {
        if !is_identifier(&entry.id) {
            return Err(ToolError::config(
                path,
                &format!("role id {:?}: expected 1 to 64 of [a-z0-9_]", entry.id),
            ));
        }
        let field = entry.field.unwrap_or_else(|| entry.id.clone());
        if !is_identifier(&field) || RESERVED_FIELDS.contains(&field.as_str()) {
            return Err(ToolError::config(
                path,
                &format!(
                    "role {:?}: field {field:?} must be 1 to 64 of [a-z0-9_] and none of {}",
                    entry.id,
                    RESERVED_FIELDS.join(", ")
                ),
            ));
        }
        let schema: Value = match (entry.schema, entry.schema_file) {
            (Some(_), Some(_)) => {
                return Err(ToolError::config(
                    path,
                    &format!("role {:?}: give schema or schema_file, not both", entry.id),
                ));
            }
            (Some(schema), None) => serde_json::to_value(schema).map_err(|error| {
                ToolError::config(path, &format!("role {:?}: {error}", entry.id))
            })?,
            (None, Some(file)) => {
                let file = state_dir.join(file);
                let text = std::fs::read_to_string(&file).map_err(|error| {
                    ToolError::config(
                        path,
                        &format!("role {:?}: reading {}: {error}", entry.id, file.display()),
                    )
                })?;
                serde_json::from_str(&text).map_err(|error| {
                    ToolError::config(
                        path,
                        &format!(
                            "role {:?}: {} is not JSON: {error}",
                            entry.id,
                            file.display()
                        ),
                    )
                })?
            }
            (None, None) => json!({"type": "object"}),
        };
        let validator = jsonschema::validator_for(&schema).map_err(|error| {
            ToolError::config(
                path,
                &format!("role {:?}: not a usable JSON Schema: {error}", entry.id),
            )
        })?;
        Ok(Role {
            id: entry.id,
            field,
            validator,
        })
    }

    /// The role `formula_id` names, else a refusal listing the registry's roles.
    pub fn get(&self, formula_id: &str) -> Result<&Role, ToolError> {
        self.roles
            .iter()
            .find(|role| role.id == formula_id)
            .ok_or_else(|| {
                let known: Vec<&str> = self.roles.iter().map(|role| role.id.as_str()).collect();
                ToolError::invalid(
                    "formula_id",
                    format!("one of the registry's roles: {}", known.join(", ")),
                )
                .with_details(json!({"field": "formula_id", "allowed": known}))
            })
    }

    /// The bundle fields in registry order, each with the roles filling it.
    pub fn fields(&self) -> Vec<(String, Vec<String>)> {
        let mut fields: Vec<(String, Vec<String>)> = Vec::new();
        for role in &self.roles {
            match fields.iter_mut().find(|(field, _)| *field == role.field) {
                Some((_, roles)) => roles.push(role.id.clone()),
                None => fields.push((role.field.clone(), vec![role.id.clone()])),
            }
        }
        fields
    }
}

impl Role {
    /// Why `output` does not meet the role's schema (the first few faults), if it does not.
    pub fn refusal(&self, output: &Value) -> Option<String> {
        let faults: Vec<String> = self
            .validator
            .iter_errors(output)
            .take(5)
            .map(|error| {
                let at = error.instance_path().to_string();
                if at.is_empty() {
                    error.to_string()
                } else {
                    format!("at {at}: {error}")
                }
            })
            .collect();
        (!faults.is_empty()).then(|| format!("{} output: {}", self.id, faults.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::Code;

    fn refusal(error: Option<ToolError>) -> crate::envelope::ErrorBody {
        match error {
            Some(ToolError::Fail(body)) => *body,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn write(dir: &Path, text: &str) {
        std::fs::write(dir.join("roles.toml"), text).unwrap();
    }

    #[test]
    fn without_a_file_the_five_default_roles_take_any_object() {
        let dir = tempfile::tempdir().unwrap();
        let roles = Roles::load(dir.path()).unwrap();
        let ids: Vec<&str> = roles.roles.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, DEFAULT_ROLES);
        let researcher = roles.get("researcher").unwrap();
        assert_eq!(researcher.refusal(&json!({"anything": [1, 2]})), None);
        assert!(researcher.refusal(&json!([1])).is_some());
    }

    #[test]
    fn the_file_replaces_the_registry_with_fields_and_schemas() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "[[roles]]\nid = \"scout\"\nfield = \"recon\"\nschema = { type = \"object\", required = [\"findings\"] }\n",
        );
        let roles = Roles::load(dir.path()).unwrap();
        assert_eq!(
            roles.fields(),
            vec![("recon".to_string(), vec!["scout".to_string()])]
        );
        let fault = roles.get("scout").unwrap().refusal(&json!({})).unwrap();
        assert!(fault.contains("findings"), "{fault}");
        let unknown = refusal(roles.get("researcher").err());
        assert!(unknown.message.contains("scout"), "{}", unknown.message);
    }

    #[test]
    fn bad_files_are_refused_naming_the_fault() {
        let dir = tempfile::tempdir().unwrap();
        for (text, fault) in [
            ("[[roles]]\nid = \"Bad-Id\"\n", "role id"),
            ("[[roles]]\nid = \"a\"\n[[roles]]\nid = \"a\"\n", "twice"),
            ("[[roles]]\nid = \"a\"\nfield = \"version\"\n", "none of"),
            (
                "[[roles]]\nid = \"a\"\nschema = { type = 5 }\n",
                "JSON Schema",
            ),
            ("roles = 3\n", "roles"),
        ] {
            write(dir.path(), text);
            let error = refusal(Roles::load(dir.path()).err());
            assert_eq!(error.code, Code::E_CONFIG, "{text}");
            assert!(error.message.contains(fault), "{text}: {}", error.message);
        }
    }
}

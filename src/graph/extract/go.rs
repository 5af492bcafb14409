//! Go imports: a package path, optionally under a local name.

use tree_sitter::Node;

use super::Binding;
use super::walk::Walk;

impl Walk<'_> {
    /// `import alias "path"`: the package's name (or alias) stands for its folder.
    pub(super) fn go_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let Some(path) = node.child_by_field_name("path").map(|p| self.unquoted(p)) else {
            return (Vec::new(), Vec::new());
        };
        let module = format!("go:{path}");
        let local = match node.child_by_field_name("name") {
            Some(name) => self.text_of(name).to_string(),
            None => path.rsplit('/').next().unwrap_or(&path).to_string(),
        };
        let bound = if local == "_" || local == "." {
            Vec::new()
        } else {
            vec![Binding {
                local,
                module: module.clone(),
                symbol: None,
            }]
        };
        (vec![module], bound)
    }
}

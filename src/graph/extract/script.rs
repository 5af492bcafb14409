//! TypeScript and JavaScript imports: default, named and namespace imports.

use tree_sitter::Node;

use super::Binding;
use super::walk::Walk;

impl Walk<'_> {
    /// `import d, { a as b } from './x'`, `import * as ns from './x'`.
    pub(super) fn script_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let Some(module) = node
            .child_by_field_name("source")
            .map(|source| self.unquoted(source))
        else {
            return (Vec::new(), Vec::new());
        };
        let mut bound = Vec::new();
        let mut cursor = node.walk();
        let clauses: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "import_clause")
            .collect();
        for clause in clauses {
            let mut cursor = clause.walk();
            for part in clause.named_children(&mut cursor) {
                match part.kind() {
                    // a default import: resolved to the target file's symbol of the same name
                    "identifier" => bound.push(Binding {
                        local: self.text_of(part).to_string(),
                        module: module.clone(),
                        symbol: Some(self.text_of(part).to_string()),
                    }),
                    "namespace_import" => {
                        let mut inner = part.walk();
                        if let Some(local) = part
                            .named_children(&mut inner)
                            .find(|c| c.kind() == "identifier")
                        {
                            bound.push(Binding {
                                local: self.text_of(local).to_string(),
                                module: module.clone(),
                                symbol: None,
                            });
                        }
                    }
                    "named_imports" => {
                        let mut inner = part.walk();
                        for specifier in part.named_children(&mut inner) {
                            let Some(name) = specifier.child_by_field_name("name") else {
                                continue;
                            };
                            let name = self.text_of(name).to_string();
                            let local = specifier
                                .child_by_field_name("alias")
                                .map(|a| self.text_of(a).to_string())
                                .unwrap_or_else(|| name.clone());
                            bound.push(Binding {
                                local,
                                module: module.clone(),
                                symbol: Some(name),
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        (vec![module], bound)
    }
}

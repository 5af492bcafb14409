//! Python imports: `import a.b as m` and `from m import f as g`.

use tree_sitter::Node;

use super::Binding;
use super::bindings;
use super::walk::Walk;

impl Walk<'_> {
    /// `import a.b.c` binds `a` (and the full dotted name); `import a.b as m` binds `m`.
    pub(super) fn python_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let mut modules = Vec::new();
        let mut bound = Vec::new();
        let mut cursor = node.walk();
        for name in node.children_by_field_name("name", &mut cursor) {
            let (module, alias) = self.imported_name(name);
            let Some(module) = module else { continue };
            modules.push(module.to_string());
            let mut module_binding = |local: &str, module: &str| {
                bound.push(Binding {
                    local: local.to_string(),
                    module: module.to_string(),
                    symbol: None,
                })
            };
            match alias {
                Some(alias) => module_binding(alias, module),
                None => {
                    module_binding(module, module);
                    if let Some((top, _)) = module.split_once('.') {
                        module_binding(top, top);
                    }
                }
            }
        }
        (modules, bound)
    }

    /// `from m import f as g, h` binds `g` to `f` of `m` and `h` to `h` of `m`.
    pub(super) fn python_from_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let Some(module) = node
            .child_by_field_name("module_name")
            .map(|m| self.text_of(m).to_string())
        else {
            return (Vec::new(), Vec::new());
        };
        let mut modules = Vec::new();
        let mut bound = Vec::new();
        let mut cursor = node.walk();
        for name in node.children_by_field_name("name", &mut cursor) {
            let (symbol, alias) = self.imported_name(name);
            let Some(symbol) = symbol else { continue };
            // `from pkg import sub` imports a submodule when there is one; resolution tries it first.
            modules.push(bindings::join_module(&module, symbol));
            bound.push(Binding {
                local: alias.unwrap_or(symbol).to_string(),
                module: module.clone(),
                symbol: Some(symbol.to_string()),
            });
        }
        if modules.is_empty() {
            modules.push(module);
        }
        (modules, bound)
    }
}

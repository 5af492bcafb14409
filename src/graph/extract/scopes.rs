//! The functions and types the walk is inside, innermost last, and what it
//! learns in them on its one pass over the tree: a function's typed
//! variables and the types its code names, a type's typed fields, and the
//! calls made on a field the walk has not reached yet, settled when their
//! type ends (a field may be declared below the methods that use it).

use std::collections::HashSet;

use super::names::Types;
use super::{Reference, bindings};

/// Type names one function's code is read for at most.
const MAX_MENTIONS: usize = 256;

#[derive(Default)]
pub(super) struct Scopes(Vec<Scope>);

enum Scope {
    Function(FunctionScope),
    Type(TypeScope),
}

#[derive(Default)]
pub(super) struct FunctionScope {
    /// Parameters and locals with a type the code says.
    pub(super) locals: Types,
    /// The names the parameters bind: a bare call to one runs what the
    /// caller passed, nothing the graph can name.
    parameters: HashSet<String>,
    /// Types named where only a type can stand (generic arguments, casts).
    pub(super) mentions: Vec<String>,
}

pub(super) struct TypeScope {
    /// The type's qualified name: what `self` and a bare field name stand for.
    name: String,
    fields: Types,
    pending: Vec<Pending>,
}

/// A call on a field of the innermost type, its receiver settled when the
/// type ends: `reference` indexes the extraction's references.
struct Pending {
    reference: usize,
    field: String,
    /// The receiver when the type has no such field.
    otherwise: Option<String>,
}

/// What the walk can tell of the object a method is called on.
pub(super) enum Receiver {
    /// An object of this type.
    Known(String),
    /// The type itself (`Cart.create()`): the caller uses the type.
    Type(String),
    Unknown,
    /// A field of the innermost type, or else the type `otherwise` names.
    Field {
        field: String,
        otherwise: Option<String>,
    },
}

impl Scopes {
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn enter_function(&mut self, parameters: HashSet<String>) {
        self.0.push(Scope::Function(FunctionScope {
            parameters,
            ..FunctionScope::default()
        }));
    }

    pub(super) fn leave_function(&mut self) -> FunctionScope {
        match self.0.pop() {
            Some(Scope::Function(scope)) => scope,
            // enter and leave are paired by the walk: a type here is a bug
            // that costs this function its locals, not the file
            Some(other) => {
                self.0.push(other);
                FunctionScope::default()
            }
            None => FunctionScope::default(),
        }
    }

    pub(super) fn enter_type(&mut self, name: String) {
        self.0.push(Scope::Type(TypeScope {
            name,
            fields: Types::new(),
            pending: Vec::new(),
        }));
    }

    /// Ends the innermost type: the calls on its fields get their receivers
    /// in `references` (a call on a type, when no field has its name, adds
    /// the caller's use of that type), and its typed fields are returned.
    pub(super) fn leave_type(&mut self, references: &mut Vec<Reference>) -> Types {
        let scope = match self.0.pop() {
            Some(Scope::Type(scope)) => scope,
            Some(other) => {
                self.0.push(other);
                return Types::new();
            }
            None => return Types::new(),
        };
        for pending in scope.pending {
            let field = scope.fields.get(&pending.field).cloned();
            let on_a_type = field.is_none() && pending.otherwise.is_some();
            let Some(reference) = references.get_mut(pending.reference) else {
                continue;
            };
            let Some(type_name) = field.or(pending.otherwise) else {
                continue;
            };
            reference.receiver = Some(match on_a_type {
                true => format!("{}{type_name}", super::names::TYPE_ITSELF),
                false => type_name.clone(),
            });
            reference.qualifier = None;
            if on_a_type && let Some((qualifier, name)) = bindings::split_callee(&type_name) {
                let source = reference.source.clone();
                references.push(Reference {
                    source,
                    kind: "uses_type",
                    name,
                    qualifier,
                    module: None,
                    receiver: None,
                });
            }
        }
        scope.fields
    }

    /// The innermost type's qualified name: what `self` stands for.
    pub(super) fn own_type(&self) -> Option<&str> {
        self.0.iter().rev().find_map(|scope| match scope {
            Scope::Type(scope) => Some(scope.name.as_str()),
            Scope::Function(_) => None,
        })
    }

    /// True when `name` is a parameter of a function the walk is inside.
    pub(super) fn is_parameter(&self, name: &str) -> bool {
        self.0.iter().any(|scope| match scope {
            Scope::Function(scope) => scope.parameters.contains(name),
            Scope::Type(_) => false,
        })
    }

    /// The type of a variable the functions the walk is inside declared,
    /// innermost first.
    pub(super) fn local(&self, name: &str) -> Option<&String> {
        self.0.iter().rev().find_map(|scope| match scope {
            Scope::Function(scope) => scope.locals.get(name),
            Scope::Type(_) => None,
        })
    }

    fn innermost_type_mut(&mut self) -> Option<&mut TypeScope> {
        self.0.iter_mut().rev().find_map(|scope| match scope {
            Scope::Type(scope) => Some(scope),
            Scope::Function(_) => None,
        })
    }

    /// Keeps `reference` (an index into the extraction's references) to be
    /// given the innermost type's field `field` as its receiver when the
    /// type ends, or `otherwise` when it has no such field.
    pub(super) fn settle_later(
        &mut self,
        reference: usize,
        field: String,
        otherwise: Option<String>,
    ) {
        if let Some(scope) = self.innermost_type_mut() {
            scope.pending.push(Pending {
                reference,
                field,
                otherwise,
            });
        }
    }

    /// Variables a declaration gives the innermost scope: a function's
    /// locals, or a type's fields.
    pub(super) fn declare(&mut self, declared: Vec<(String, String)>) {
        let types = match self.0.last_mut() {
            Some(Scope::Function(scope)) => &mut scope.locals,
            Some(Scope::Type(scope)) => &mut scope.fields,
            None => return,
        };
        for (name, type_name) in declared {
            types.entry(name).or_insert(type_name);
        }
    }

    /// A field of the innermost type assigned through `self`.
    pub(super) fn assign_field(&mut self, field: String, type_name: String) {
        if let Some(scope) = self.innermost_type_mut() {
            scope.fields.entry(field).or_insert(type_name);
        }
    }

    /// True when the innermost scope is a function with room for more mentions.
    pub(super) fn takes_mentions(&self) -> bool {
        matches!(self.0.last(), Some(Scope::Function(scope)) if scope.mentions.len() < MAX_MENTIONS)
    }

    pub(super) fn mention(&mut self, type_name: String) {
        if let Some(Scope::Function(scope)) = self.0.last_mut()
            && scope.mentions.len() < MAX_MENTIONS
        {
            scope.mentions.push(type_name);
        }
    }
}

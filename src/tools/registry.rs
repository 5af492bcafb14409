//! The registry: every tool by name with its JSON schemas and handler, and
//! the areas that brought them.

use super::*;

pub(super) type Handler =
    Arc<dyn Fn(&ToolContext, Value) -> Result<Answer<Value>, ToolError> + Send + Sync>;

/// A registered tool as the front doors see it.
#[derive(Clone)]
pub struct RegisteredTool {
    pub spec: ToolSpec,
    pub input_schema: Value,
    pub output_schema: Value,
    pub(super) handler: Handler,
}

/// Every tool of the hub, by name, and the areas that brought them.
#[derive(Default, Clone)]
pub struct Registry {
    tools: BTreeMap<&'static str, RegisteredTool>,
    areas: Vec<Area>,
    /// The vocabulary of the areas' searchables, worked out at its first
    /// query (every search asks for it) and again after an area is added.
    search_vocabulary: std::sync::OnceLock<Arc<searchable::Vocabulary>>,
}

impl Registry {
    /// A registry of `areas` and every tool they register.
    pub fn of_areas(areas: &[Area]) -> Registry {
        let mut registry = Registry::default();
        for area in areas {
            registry.add_area(*area);
        }
        registry
    }

    /// Adds an area: its tools now, its tables and revision when a hub opens.
    pub fn add_area(&mut self, area: Area) -> &mut Registry {
        (area.register)(self);
        if let Some(offered) = area.search {
            searchable::declare(offered);
        }
        self.search_vocabulary = std::sync::OnceLock::new();
        self.areas.push(area);
        self
    }

    pub fn areas(&self) -> &[Area] {
        &self.areas
    }

    /// The corpora, languages and statuses of the areas' searchables.
    pub fn search_vocabulary(&self) -> Arc<searchable::Vocabulary> {
        self.search_vocabulary
            .get_or_init(|| {
                let offered: Vec<_> = self.areas.iter().filter_map(|area| area.search).collect();
                Arc::new(searchable::vocabulary(&offered))
            })
            .clone()
    }

    /// What the areas offer search, each with its area.
    pub fn searchables(&self) -> Vec<(&Area, &'static searchable::Searchable)> {
        self.areas
            .iter()
            .filter_map(|area| area.search.map(|offered| (area, offered)))
            .collect()
    }

    /// Every area's module, in the order the areas were added.
    pub fn modules(&self) -> Vec<Module> {
        self.areas.iter().map(|area| area.module).collect()
    }

    /// The module called `id`, if an area brings it.
    pub fn module(&self, id: &str) -> Option<Module> {
        self.modules().into_iter().find(|module| module.id() == id)
    }

    /// Every area's schema, in the order the areas were added.
    pub fn schemas(&self) -> Vec<crate::store::Schema> {
        self.areas
            .iter()
            .map(|area| crate::store::Schema {
                area: area.id,
                migrations: area.migrations,
            })
            .collect()
    }

    /// The schemas of the areas a team database holds.
    pub fn team_schemas(&self) -> Vec<crate::store::pg::TeamSchema> {
        self.areas
            .iter()
            .filter_map(|area| {
                Some(crate::store::pg::TeamSchema {
                    area: area.id,
                    migrations: area.team?.migrations,
                })
            })
            .collect()
    }

    /// The tables of the shared state, area by area in the hub's order.
    pub fn shared_tables(&self) -> Vec<crate::store::copy::SharedTable> {
        self.areas
            .iter()
            .filter_map(|area| area.team)
            .flat_map(|team| team.tables.iter().copied())
            .collect()
    }

    /// The settings files the areas share with a team, by name.
    pub fn shared_files(&self) -> Vec<&'static str> {
        self.areas
            .iter()
            .filter_map(|area| area.team)
            .flat_map(|team| team.files.iter().copied())
            .collect()
    }

    /// Registers `T`. Names are unique: registering a name twice replaces the first.
    pub fn register<T: Tool>(&mut self) -> &mut Registry {
        let handler: Handler = Arc::new(|context, arguments| {
            let input: T::Input = input::parse(arguments)?;
            let answer = T::run(context, input)?;
            let data = serde_json::to_value(&answer.data)
                .map_err(|e| ToolError::internal("serialising the tool's answer", e))?;
            Ok(answer.map(|_| data))
        });
        self.tools.insert(
            T::SPEC.name,
            RegisteredTool {
                spec: T::SPEC,
                input_schema: schema::json_schema::<T::Input>(),
                output_schema: schema::json_schema::<T::Output>(),
                handler,
            },
        );
        self
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values()
    }

    pub fn names_in(&self, module: Module) -> Vec<&'static str> {
        self.tools
            .values()
            .filter(|tool| tool.spec.module == module)
            .map(|tool| tool.spec.name)
            .collect()
    }
}

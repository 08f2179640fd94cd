//! Tool imports (seed 000 §2.7.4): recursive, in order, cycle-checked, confined to the
//! agent directory and the `import_roots` agent.yaml allows; merged last-write-wins.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_saphyr::{Location, Spanned};

use super::error::{ConfigError, sanitize};
use super::mcp::{McpServer, validate as validate_mcp};
use super::raw::{ImportedToolsYaml, McpServerYaml};
use super::vars::resolve_path;
use super::yaml::{self, KeyedMap};
use crate::tool::EngineVars;
use crate::tool::ToolDef;

/// A tool definition and where it was written.
#[derive(Debug, Clone)]
pub(crate) struct ToolSource {
    pub(crate) def: ToolDef,
    pub(crate) file: PathBuf,
    pub(crate) location: Location,
}

/// Parse and check the text of an imported tool file.
pub fn parse_imported_yaml(text: &str, file: &Path) -> Result<ImportedToolsYaml, ConfigError> {
    let imported: ImportedToolsYaml = yaml::parse(text, file)?;
    if let Some(roots) = &imported.import_roots {
        return Err(
            ConfigError::new(file, "`import_roots` is only allowed in agent.yaml")
                .at(roots.referenced)
                .help("list the directory under `import_roots:` in the agent's agent.yaml"),
        );
    }
    Ok(imported)
}

/// Resolves and loads imports for one agent.
pub(crate) struct Importer<'a> {
    home: &'a Path,
    roots: Vec<PathBuf>,
    vars: &'a EngineVars,
    /// Files being imported, outermost first: (canonical path, name shown in messages).
    stack: Vec<(PathBuf, String)>,
    tools: Vec<ToolSource>,
    index: HashMap<String, usize>,
    mcp_servers: Vec<McpServer>,
    warnings: Vec<String>,
}

/// The `mcp_servers:` of one file, as written.
pub(crate) type McpServersYaml = Option<KeyedMap<Spanned<McpServerYaml>>>;

/// The merged tool list and MCP servers, and the warnings collected on the way.
pub(crate) struct Imported {
    pub(crate) tools: Vec<ToolSource>,
    pub(crate) mcp_servers: Vec<McpServer>,
    pub(crate) warnings: Vec<String>,
}

impl<'a> Importer<'a> {
    /// `home` must be canonical; `import_roots` are resolved against it.
    pub(crate) fn new(
        home: &'a Path,
        config_file: &Path,
        import_roots: &[Spanned<String>],
        vars: &'a EngineVars,
    ) -> Result<Self, ConfigError> {
        let roots = import_roots
            .iter()
            .map(|root| {
                let path = resolve_path(vars, &root.value, home);
                let canonical = path.canonicalize().ok().filter(|p| p.is_dir());
                canonical.ok_or_else(|| {
                    ConfigError::new(
                        config_file,
                        format!(
                            "import root `{}` is not a directory: {}",
                            sanitize(&root.value),
                            path.display()
                        ),
                    )
                    .at(root.referenced)
                    .help("list existing directories, relative to the agent directory")
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            home,
            roots,
            vars,
            stack: Vec::new(),
            tools: Vec::new(),
            index: HashMap::new(),
            mcp_servers: Vec::new(),
            warnings: Vec::new(),
        })
    }

    /// Load the tools of the main config file: its imports in order, then its own tools.
    pub(crate) fn run(
        mut self,
        config_file: &Path,
        imports: &[Spanned<String>],
        tools: Vec<Spanned<ToolDef>>,
        mcp_servers: McpServersYaml,
    ) -> Result<Imported, ConfigError> {
        self.visit(config_file, imports, tools, mcp_servers)?;
        Ok(Imported {
            tools: self.tools,
            mcp_servers: self.mcp_servers,
            warnings: self.warnings,
        })
    }

    /// Load `file`'s imports depth-first, in order, then merge its own tools.
    fn visit(
        &mut self,
        file: &Path,
        imports: &[Spanned<String>],
        tools: Vec<Spanned<ToolDef>>,
        mcp_servers: McpServersYaml,
    ) -> Result<(), ConfigError> {
        // Cycles are detected on canonical paths, so a symlink cannot hide one.
        let canonical = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
        let shown = self.shown(&canonical);
        self.stack.push((canonical, shown));
        for import in imports {
            let target = self.resolve(file, import)?;
            if self.stack.iter().any(|(open, _)| *open == target) {
                let chain: Vec<&str> = self.stack.iter().map(|(_, name)| name.as_str()).collect();
                return Err(ConfigError::new(
                    file,
                    format!(
                        "Import cycle: {} -> {}",
                        chain.join(" -> "),
                        self.shown(&target)
                    ),
                )
                .at(import.referenced)
                .help("remove one of the imports that form the cycle"));
            }
            let text = yaml::read(&target)?;
            let imported = parse_imported_yaml(&text, &target)?;
            let nested = imported.imports.unwrap_or_default();
            self.visit(&target, &nested, imported.tools, imported.mcp_servers)?;
        }
        self.stack.pop();
        self.merge(file, tools);
        self.merge_mcp(file, mcp_servers)
    }

    /// Add one file's MCP servers, each checked where it is written; a later definition
    /// replaces an earlier one in place, as tools do.
    fn merge_mcp(&mut self, file: &Path, servers: McpServersYaml) -> Result<(), ConfigError> {
        for (name, server) in servers.map(|map| map.0).unwrap_or_default() {
            let server = validate_mcp(&name, &server, file, self.home, self.vars)?;
            match self.mcp_servers.iter_mut().find(|s| s.name == server.name) {
                Some(slot) => *slot = server,
                None => self.mcp_servers.push(server),
            }
        }
        Ok(())
    }

    /// Add one file's own tools; a later definition replaces an earlier one in place.
    fn merge(&mut self, file: &Path, tools: Vec<Spanned<ToolDef>>) {
        let mut in_this_file: HashMap<String, u64> = HashMap::new();
        for tool in tools {
            let name = tool.value.name.clone();
            let line = tool.referenced.line();
            if let Some(first_line) = in_this_file.insert(name.clone(), line) {
                self.warnings.push(format!(
                    "{}:{line}: tool `{}` is defined twice in this file (first at line \
                     {first_line}); the later definition wins",
                    file.display(),
                    sanitize(&name)
                ));
            }
            let source = ToolSource {
                def: tool.value,
                file: file.to_path_buf(),
                location: tool.referenced,
            };
            match self.index.get(&name) {
                Some(&slot) => self.tools[slot] = source,
                None => {
                    self.index.insert(name, self.tools.len());
                    self.tools.push(source);
                }
            }
        }
    }

    /// The canonical path of an import entry of `file`, checked to exist and to lie within
    /// the allowed directories. Imported files are known by their canonical path, so the
    /// imports of a symlinked file are relative to where its target lives.
    fn resolve(&self, file: &Path, import: &Spanned<String>) -> Result<PathBuf, ConfigError> {
        let base = file.parent().unwrap_or(self.home);
        let path = resolve_path(self.vars, &import.value, base);
        let error = |message: String| ConfigError::new(file, message).at(import.referenced);
        let written = sanitize(&import.value);
        let canonical = path.canonicalize().map_err(|err| {
            if err.kind() == std::io::ErrorKind::NotFound {
                error(format!("import `{written}` not found: {}", path.display()))
                    .help("imports are relative to the file that lists them; check the path")
            } else {
                error(format!("cannot read import `{written}`: {err}"))
            }
        })?;
        if !canonical.is_file() {
            return Err(error(format!(
                "import `{written}` is not a file: {}",
                canonical.display()
            ))
            .help("import a YAML file with a `tools:` list"));
        }
        let allowed = canonical.starts_with(self.home)
            || self.roots.iter().any(|root| canonical.starts_with(root));
        if !allowed {
            return Err(error(format!(
                "import `{written}` resolves to {}, outside the agent directory {}",
                canonical.display(),
                self.home.display()
            ))
            .help(
                "move the file into the agent directory, or list its directory under \
                 `import_roots:` in agent.yaml",
            ));
        }
        Ok(canonical)
    }

    /// A path as shown in cycle messages: relative to the agent directory when inside it.
    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(self.home)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

//! The tool system: definitions, expansion of `exec:`/`shell:` sugar, execution.

mod def;

pub use def::{InjectAs, ParamDef, ToolDef};

//! [`Level`]: how strongly the specification demands what a check checks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How strongly the spec demands what a check checks.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A seed section requires it (cite it in `seed`).
    #[default]
    Spec,
    /// A seed example or a SHOULD: expected, but another reading is possible.
    Recommended,
    /// This project's own choice where the seeds are silent, named in docs/decisions.md
    /// (cite the section in `decision`).
    Extension,
}

impl Level {
    /// All levels, strictest first.
    pub const ALL: [Level; 3] = [Level::Spec, Level::Recommended, Level::Extension];

    /// `spec`, `recommended` or `extension`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Spec => "spec",
            Self::Recommended => "recommended",
            Self::Extension => "extension",
        }
    }
}

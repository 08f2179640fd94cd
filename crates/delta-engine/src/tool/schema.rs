//! The OpenAI function-calling declaration of a tool (`tools[]` of a chat request).

use serde_json::{Map, Value, json};

use super::spec::{ParamSpec, ToolSpec};

impl ToolSpec {
    /// `{"type":"function","function":{"name","description","parameters"}}`, where
    /// `parameters` is a JSON Schema object with one string property per parameter and
    /// `required` listing those without a default and not marked `required: false`.
    pub fn function_schema(&self) -> Value {
        function_schema(&self.name, self.description.as_deref(), &self.parameters)
    }
}

/// The declaration of a function `name` taking string `parameters`, for command and
/// agent tools alike.
pub(super) fn function_schema(
    name: &str,
    description: Option<&str>,
    parameters: &[ParamSpec],
) -> Value {
    let mut properties = Map::new();
    for param in parameters {
        let mut property = Map::new();
        property.insert("type".to_string(), json!("string"));
        if let Some(description) = &param.description {
            property.insert("description".to_string(), json!(description));
        }
        properties.insert(param.name.clone(), Value::Object(property));
    }
    let required: Vec<&str> = parameters
        .iter()
        .filter(|p| p.is_required())
        .map(|p| p.name.as_str())
        .collect();
    let mut function = Map::new();
    function.insert("name".to_string(), json!(name));
    if let Some(description) = description {
        function.insert("description".to_string(), json!(description));
    }
    function.insert(
        "parameters".to_string(),
        json!({"type": "object", "properties": properties, "required": required}),
    );
    json!({"type": "function", "function": function})
}

//! Agent configuration: `agent.yaml`, imports, `hooks.yaml` and `context.yaml`.

//! The built-in catalog as a whole: all eight tools registered with guidance and
//! timeouts, wire projections that carry nothing host-side and equal the committed
//! schemas, strict renderings that follow the strict-mode rules, and `todo_write`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use agent_presets::tools::builtin::{BUILTIN_TOOL_NAMES, TodoItem, TodoStatus};
use agent_presets::tools::schema::STRICT_FORBIDDEN_KEYWORDS;
use agent_presets::tools::{SchemaDialect, ToolCallError, ToolCatalog, ToolContext, ToolRegistry};
use serde_json::{Value, json};

fn committed(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("schemas/tools")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{} is missing ({e}); run UPDATE_SCHEMAS=1 cargo test --test integration schema_drift",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_builtin_catalog_holds_all_eight_tools() {
    let catalog = ToolCatalog::builtin();
    let names: Vec<&str> = catalog.names().collect();
    assert_eq!(names, BUILTIN_TOOL_NAMES);
    assert_eq!(
        names,
        [
            "bash",
            "edit_file",
            "glob",
            "grep",
            "list_dir",
            "read_file",
            "todo_write",
            "write_file"
        ]
    );
}

#[test]
fn every_tool_has_guidance_in_the_tool_band_and_a_timeout() {
    let catalog = ToolCatalog::builtin();
    let mut orders = BTreeSet::new();
    for tool in catalog.iter() {
        let guidance = tool
            .guidance()
            .unwrap_or_else(|| panic!("{} has no guidance", tool.name()));
        assert!(
            (1000.0..=1999.0).contains(&guidance.order),
            "{}",
            tool.name()
        );
        assert!(
            orders.insert(guidance.order as i64),
            "{}: duplicate order",
            tool.name()
        );
        assert!(!guidance.text.trim().is_empty());
        assert!(
            guidance.text.contains(tool.name().as_str()),
            "{}'s guidance should name the tool",
            tool.name()
        );
        assert!(tool.timeout().is_some(), "{} has no timeout", tool.name());
        assert!(!tool.description().is_empty());
    }
    // read_file leads: looking comes before changing.
    assert_eq!(
        catalog.get("read_file").unwrap().guidance().unwrap().order,
        1000.0
    );
}

#[test]
fn the_wire_projection_is_exactly_name_description_parameters() {
    let registry = ToolRegistry::unrestricted(&ToolCatalog::builtin());
    for dialect in [SchemaDialect::Portable, SchemaDialect::Strict] {
        let wire = serde_json::to_value(registry.schemas_for(dialect)).unwrap();
        let tools = wire.as_array().unwrap();
        assert_eq!(tools.len(), 8);
        for tool in tools {
            let keys: Vec<&str> = tool
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(keys, ["name", "description", "parameters"]);
            let name = tool["name"].as_str().unwrap();
            let file = match dialect {
                SchemaDialect::Portable => format!("{name}.json"),
                SchemaDialect::Strict => format!("{name}.strict.json"),
            };
            assert_eq!(tool["parameters"], committed(&file), "{file}");
            // Host-only data (guidance, timeout) must not leak into the schema.
            let text = tool["parameters"].to_string();
            let guidance = ToolCatalog::builtin()
                .get(name)
                .unwrap()
                .guidance()
                .unwrap()
                .text
                .clone();
            assert!(!text.contains(&guidance[..40]), "{name}: guidance leaked");
            assert!(!text.contains("timeout\":"), "{name}");
        }
    }
}

#[test]
fn both_renderings_exist_for_every_tool() {
    let catalog = ToolCatalog::builtin();
    for tool in catalog.iter() {
        let portable = committed(&format!("{}.json", tool.name()));
        let strict = committed(&format!("{}.strict.json", tool.name()));
        assert_eq!(portable["type"], "object");
        assert_eq!(strict["type"], "object");
        for meta in ["$schema", "title"] {
            assert!(portable.get(meta).is_none(), "{}: {meta}", tool.name());
            assert!(strict.get(meta).is_none(), "{}: {meta}", tool.name());
        }
    }
}

/// Walk every schema position of a strict schema and check the strict-mode rules.
fn check_strict(schema: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else {
        problems.push(format!("{at}: a boolean schema"));
        return;
    };
    for keyword in STRICT_FORBIDDEN_KEYWORDS {
        if obj.contains_key(*keyword) {
            problems.push(format!("{at}: forbidden keyword `{keyword}`"));
        }
    }
    // DeepSeek's strict mode (the most restrictive) documents these as unsupported;
    // listed here on their own so the test does not trust the constant it checks.
    for keyword in [
        "minimum",
        "maximum",
        "pattern",
        "format",
        "minLength",
        "maxLength",
        "multipleOf",
        "minItems",
        "maxItems",
    ] {
        if obj.contains_key(keyword) {
            problems.push(format!(
                "{at}: `{keyword}` (DeepSeek strict mode rejects it)"
            ));
        }
    }
    if obj.contains_key("$ref") && obj.len() > 1 {
        problems.push(format!("{at}: `$ref` with sibling keywords"));
    }
    let is_object = obj.contains_key("properties")
        || obj.get("type") == Some(&json!("object"))
        || obj
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|t| t.contains(&json!("object")));
    if is_object {
        if obj.get("additionalProperties") != Some(&json!(false)) {
            problems.push(format!("{at}: additionalProperties is not false"));
        }
        let properties: Vec<&String> = obj
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if properties.iter().map(|p| p.as_str()).collect::<Vec<_>>() != required {
            problems.push(format!(
                "{at}: required {required:?} != properties {properties:?}"
            ));
        }
    }
    for (key, value) in obj {
        match key.as_str() {
            "properties" | "$defs" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    check_strict(sub, &format!("{at}/{key}/{name}"), problems);
                }
            }
            "items" => check_strict(value, &format!("{at}/items"), problems),
            "anyOf" => {
                for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                    check_strict(sub, &format!("{at}/anyOf/{i}"), problems);
                }
            }
            "additionalProperties" if value.is_object() => {
                check_strict(value, &format!("{at}/additionalProperties"), problems);
            }
            _ => {}
        }
    }
}

fn accepts_null(schema: &Value) -> bool {
    schema["type"] == "null"
        || schema["type"]
            .as_array()
            .is_some_and(|t| t.contains(&json!("null")))
        || schema["anyOf"]
            .as_array()
            .is_some_and(|b| b.iter().any(accepts_null))
}

#[test]
fn strict_schemas_follow_the_strict_mode_rules() {
    let registry = ToolRegistry::unrestricted(&ToolCatalog::builtin());
    let mut problems = Vec::new();
    for tool in registry.schemas_for(SchemaDialect::Strict) {
        let file = format!("{}.strict.json", tool.name);
        assert_eq!(*tool.parameters, committed(&file));
        check_strict(&tool.parameters, &file, &mut problems);
        assert!(
            tool.parameters.get("anyOf").is_none(),
            "{file}: the root must be a plain object"
        );
    }
    assert!(
        problems.is_empty(),
        "strict-mode violations:\n{}",
        problems.join("\n")
    );
}

#[test]
fn optional_fields_become_required_and_nullable_in_strict() {
    let catalog = ToolCatalog::builtin();
    for tool in catalog.iter() {
        let portable = &tool.schemas().portable;
        let strict = &tool.schemas().strict;
        let required: Vec<&str> = portable["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, property) in strict["properties"].as_object().unwrap() {
            let optional = !required.contains(&name.as_str());
            assert_eq!(
                accepts_null(property),
                optional,
                "{}.{name}: nullable in strict exactly when optional in portable",
                tool.name()
            );
            if optional {
                assert!(
                    accepts_null(&portable["properties"][name]),
                    "{}.{name}: portable must accept the null a strict-mode model sends",
                    tool.name()
                );
            }
        }
    }
}

#[test]
fn the_strict_checker_catches_violations() {
    let mut problems = Vec::new();
    check_strict(
        &json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "uint32", "default": 3},
                "b": {"type": "object", "properties": {"c": {"type": "string"}}}
            },
            "required": ["a"]
        }),
        "#",
        &mut problems,
    );
    assert_eq!(problems.len(), 7, "{problems:#?}");
}

// ---------------------------------------------------------------- todo_write

#[tokio::test]
async fn todo_write_keeps_the_list_in_the_session_and_returns_it() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(tmp.path()).unwrap();
    let registry = ToolRegistry::unrestricted(&ToolCatalog::builtin());
    let out = registry
        .call(
            "todo_write",
            json!({"todos": [
                {"content": "Write the tests", "status": "completed"},
                {"content": "Implement the tool", "status": "in_progress"},
                {"content": "Update the docs", "status": "pending"}
            ]}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!out.is_error);
    assert_eq!(
        out.content,
        "Task list updated (3 tasks: 1 completed, 1 in progress, 1 pending):\n\
         1. [completed] Write the tests\n\
         2. [in_progress] Implement the tool\n\
         3. [pending] Update the docs\n"
    );
    let list = ctx.session().todo_list();
    assert_eq!(list.len(), 3);
    assert_eq!(
        list[1],
        TodoItem {
            content: "Implement the tool".into(),
            status: TodoStatus::InProgress
        }
    );

    // The next call replaces the list; the session is shared by clones of the context.
    let out = registry
        .call("todo_write", json!({"todos": []}), &ctx.clone())
        .await
        .unwrap();
    assert_eq!(out.content, "Task list cleared (no tasks).");
    assert!(ctx.session().todo_list().is_empty());
}

#[tokio::test]
async fn todo_write_refuses_bad_lists_without_touching_the_session() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(tmp.path()).unwrap();
    ctx.session().set_todo_list(vec![TodoItem {
        content: "keep me".into(),
        status: TodoStatus::Pending,
    }]);
    let registry = ToolRegistry::unrestricted(&ToolCatalog::builtin());
    for args in [
        json!({"todos": [{"content": "x", "status": "done"}]}),
        json!({"todos": [{"content": "x"}]}),
        json!({"todos": [{"content": "x", "status": "pending", "priority": "high"}]}),
        json!({"todos": "x"}),
        json!({"todo": []}),
        json!({}),
    ] {
        match registry.call("todo_write", args.clone(), &ctx).await {
            Err(ToolCallError::InvalidArguments { .. }) => {}
            other => panic!("{args}: expected InvalidArguments, got {other:?}"),
        }
    }
    let err = registry
        .call(
            "todo_write",
            json!({"todos": [{"content": "  ", "status": "pending"}]}),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(err.to_output().content.contains("task 1 has empty content"));
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"content": format!("t{i}"), "status": "pending"}))
        .collect();
    let err = registry
        .call("todo_write", json!({"todos": many}), &ctx)
        .await
        .unwrap_err();
    assert!(err.to_output().content.contains("at most 100"));
    assert_eq!(ctx.session().todo_list()[0].content, "keep me");
}

#[tokio::test]
async fn a_misspelled_tool_gets_a_suggestion() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(tmp.path()).unwrap();
    let registry = ToolRegistry::unrestricted(&ToolCatalog::builtin());
    let err = registry
        .call("read_fiel", json!({"path": "x"}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ToolCallError::UnknownTool {
            name: "read_fiel".into(),
            suggestion: Some("read_file".into())
        }
    );
}

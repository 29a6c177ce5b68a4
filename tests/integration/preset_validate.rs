//! Full-build validation through the library: spans point at the right line and column.

use agent_presets::preset::{PresetCatalog, Validation, validate_in_catalog};
use agent_presets::prompt::Values;
use agent_presets::tools::ToolCatalog;

fn validate_with(files: &[(&str, &str)], name: &str) -> Validation {
    let mut catalog = PresetCatalog::builtin();
    for (n, text) in files {
        catalog
            .add_text(n, format!("{n}.yaml"), *text)
            .expect("add preset");
    }
    validate_in_catalog(&catalog, name, &ToolCatalog::builtin())
}

/// `kind@line:col` for every diagnostic.
fn found(v: &Validation) -> Vec<String> {
    v.diagnostics
        .iter()
        .map(|d| match &d.span {
            Some(s) => format!("{}@{}:{}:{}", d.kind.name(), s.file, s.line, s.column),
            None => d.kind.name().to_owned(),
        })
        .collect()
}

#[test]
fn builtins_validate_and_render() {
    for name in ["standard", "minimal"] {
        let v = validate_with(&[], name);
        assert!(v.is_valid(), "{name}: {:#?}", v.diagnostics);
        assert!(v.diagnostics.is_empty(), "{name}: {:#?}", v.diagnostics);
    }
    let v = validate_with(&[], "minimal");
    let preset = v.preset.expect("valid");
    let a = preset
        .assembler()
        .assemble(&Values::new())
        .expect("minimal needs no values");
    assert_eq!(a.system, "You are a helpful software engineer assistant.");
    let tools: Vec<&str> = a.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["bash", "edit_file"]);
    assert_eq!(a.context, None);
}

#[test]
fn unknown_variable_points_into_a_block_scalar() {
    let text = "\
version: 1
name: rev
extends: standard
persona:
  sections:
    - name: rules
      order: 150
      text: |
        First line.
        Second line for {{ projcet }} here.
variables:
  project: { description: Project, default: demo }
";
    let v = validate_with(&[("rev", text)], "rev");
    assert_eq!(found(&v), ["unknown-variable@rev.yaml:10:28"]);
    assert!(
        v.diagnostics[0]
            .help
            .as_deref()
            .is_some_and(|h| h.contains("did you mean `project`?")),
        "{:?}",
        v.diagnostics[0]
    );
}

#[test]
fn errors_across_the_file_are_all_reported_with_positions() {
    let text = "\
version: 1
name: bad
extends: standard
persona:
  sections:
    - name: Rules
      order: 1
      text: x
    - name: twice
      order: .nan
      text: y
  remove: [nope]
tools:
  allow: [read_fiel, \"net_*\"]
  order: [grep]
model:
  provider: openai-compatible
  name: m
  apiKeyEnv: sk-abcdefghijklmnopqrstuvwxyz123456
";
    let v = validate_with(&[("bad", text)], "bad");
    let got = found(&v);
    for want in [
        "invalid-name@bad.yaml:6:13",
        "non-finite-order@bad.yaml:10:14",
        "remove-unknown@bad.yaml:12:12",
        "unknown-tool@bad.yaml:14:11",
        "glob-no-match@bad.yaml:14:22",
        "bad-tool-order@bad.yaml:15:11",
        "invalid-value@bad.yaml:17:13",
        "literal-secret@bad.yaml:19:14",
    ] {
        assert!(got.contains(&want.to_owned()), "missing {want} in {got:#?}");
    }
    // The key is never echoed.
    for d in &v.diagnostics {
        let all = format!("{} {:?}", d.message, d.help);
        assert!(!all.contains("abcdefghij"), "secret leaked: {all}");
    }
}

#[test]
fn variable_without_value_fails_validation_unless_required() {
    let text = "\
version: 1
name: v
extends: minimal
persona:
  sections:
    - name: persona
      order: 0
      override: true
      complete: true
      text: Work on {{ ticket }}.
variables:
  ticket: { description: Ticket }
";
    let v = validate_with(&[("v", text)], "v");
    assert_eq!(found(&v), ["missing-value@v.yaml:10:24"]);
    let required = text.replace(
        "{ description: Ticket }",
        "{ description: Ticket, required: true }",
    );
    let v = validate_with(&[("v", &required)], "v");
    assert!(v.is_valid(), "{:#?}", v.diagnostics);
}

#[test]
fn extends_problems() {
    let a = "version: 1\nname: a\nextends: b\n";
    let b = "version: 1\nname: b\nextends: c\n";
    let c = "version: 1\nname: c\nextends: a\n";
    let v = validate_with(&[("a", a), ("b", b), ("c", c)], "a");
    // Reported at the preset being validated, so each member of the loop is flagged in
    // its own file.
    assert_eq!(found(&v), ["extends-cycle@a.yaml:3:10"]);
    let msg = &v.diagnostics[0].message;
    assert!(msg.contains("a -> b -> c -> a"), "{msg}");
    let v = validate_with(&[("a", a), ("b", b), ("c", c)], "c");
    assert_eq!(found(&v), ["extends-cycle@c.yaml:3:10"]);
    let msg = &v.diagnostics[0].message;
    assert!(msg.contains("c -> a -> b -> c"), "{msg}");
    // A preset outside the loop that leads into it says so.
    let x = "version: 1\nname: x\nextends: a\n";
    let v = validate_with(&[("a", a), ("b", b), ("c", c), ("x", x)], "x");
    assert_eq!(found(&v), ["extends-cycle@x.yaml:3:10"]);
    let msg = &v.diagnostics[0].message;
    assert!(
        msg.contains("leads into a cycle: a -> b -> c -> a"),
        "{msg}"
    );

    let d = "version: 1\nname: d\nextends: standrad\n";
    let v = validate_with(&[("d", d)], "d");
    assert_eq!(found(&v), ["missing-parent@d.yaml:3:10"]);
    assert_eq!(
        v.diagnostics[0].help.as_deref(),
        Some("did you mean `standard`?")
    );
}

#[test]
fn two_complete_sections_across_the_chain() {
    let text = "\
version: 1
name: two
extends: minimal
persona:
  sections:
    - { name: other, order: 5, text: Also complete., complete: true }
";
    let v = validate_with(&[("two", text)], "two");
    let got = found(&v);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("multiple-complete@"), "{got:?}");
    assert!(v.diagnostics[0].message.contains("`other`, `persona`"));
}

#[test]
fn child_can_hide_more_but_not_add() {
    let text = "\
version: 1
name: narrow
extends: minimal
tools:
  allow: [bash, read_file]
";
    let v = validate_with(&[("narrow", text)], "narrow");
    let preset = v
        .preset
        .expect("read_file is known, just hidden by minimal");
    let names: Vec<String> = preset
        .assembler()
        .registry()
        .names()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(names, ["bash"]);
}

#[test]
fn the_nearest_variable_declaration_decides_what_validate_assumes() {
    // par requires `job`; kid gives it a default; kid2 re-declares it with neither. The
    // nearest declaration wins, so kid2 has no value for `job`: validate must say so
    // (a preset that validates renders).
    let par = "version: 1\nname: par\npersona:\n  sections:\n    - { name: p, order: 0, text: \"job={{ job }}\" }\nvariables:\n  job: { description: j, required: true }\n";
    let kid = "version: 1\nname: kid\nextends: par\nvariables:\n  job: { description: j2, default: fromkid }\n";
    let kid2 = "version: 1\nname: kid2\nextends: kid\nvariables:\n  job: { description: j3 }\n";
    let files = [("par", par), ("kid", kid), ("kid2", kid2)];
    assert!(validate_with(&files, "par").is_valid());
    let kid_v = validate_with(&files, "kid");
    let rendered = kid_v
        .preset
        .expect("kid is valid")
        .assembler()
        .assemble(&Values::new())
        .expect("kid renders with its default");
    assert!(
        rendered.system.starts_with("job=fromkid\n\n"),
        "{}",
        rendered.system
    );
    let v = validate_with(&files, "kid2");
    assert_eq!(found(&v), ["missing-value@par.yaml:5:42"]);
}

#[test]
fn extends_depth_limit_is_reported_at_the_preset_validated() {
    let mut files = vec![("d0".to_owned(), "version: 1\nname: d0\n".to_owned())];
    for i in 1..=16 {
        files.push((
            format!("d{i}"),
            format!("version: 1\nname: d{i}\nextends: d{}\n", i - 1),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    assert!(
        validate_with(&refs, "d15").is_valid(),
        "16 presets are allowed"
    );
    let v = validate_with(&refs, "d16");
    assert_eq!(found(&v), ["limit-exceeded@d16.yaml:3:10"]);
    assert!(
        v.diagnostics[0].message.contains("`d16`"),
        "{}",
        v.diagnostics[0].message
    );
}

/// A small report built by library calls only, as a host (an editor plugin, a bot)
/// builds it: a preset with an error, one invalid only because it extends it, and one
/// with a warning and a key-like string (masked in every format). The CLI prints the same
/// bytes for the same report (`tests/integration/cli_report_formats.rs`).
mod report_formats {
    use agent_presets::preset::{PresetCatalog, validate_in_catalog};
    use agent_presets::report::{Exit, PresetOutcome, SarifRun, Style, ValidationReport};
    use agent_presets::tools::ToolCatalog;
    use agent_presets::{Severity, SourceFiles};

    fn report() -> (ValidationReport, SourceFiles) {
        let mut catalog = PresetCatalog::builtin();
        let files = [
            (
                "base",
                "version: 1\nname: base\nextends: standard\ntools:\n  allow: [read_fiel, grep]\n",
            ),
            (
                "child",
                "version: 1\nname: child\nextends: base\npersona:\n  sections:\n    - name: today\n      order: 150\n      text: Today is {{ date }}.\n",
            ),
            (
                "dated",
                "version: 1\nname: dated\nextends: standard\npersona:\n  sections:\n    - name: today\n      order: 150\n      text: \"Today is {{ date }}, key sk-test0000000000000000000000000000\"\n",
            ),
        ];
        for (name, text) in files {
            catalog
                .add_text(name, format!("{name}.yaml"), text)
                .expect("a new name");
        }
        let tools = ToolCatalog::builtin();
        let mut report = ValidationReport::default();
        for name in ["base", "child", "dated"] {
            let validation = validate_in_catalog(&catalog, name, &tools);
            let valid = !validation
                .diagnostics
                .iter()
                .any(|d| d.severity == Severity::Error);
            let ancestors = || {
                if name == "child" {
                    vec![("base".to_owned(), "base.yaml".to_owned())]
                } else {
                    Vec::new()
                }
            };
            let outcome = PresetOutcome::judged(
                name.to_owned(),
                format!("{name}.yaml"),
                valid,
                &validation.diagnostics,
                ancestors,
            );
            report.add_diagnostics(validation.diagnostics);
            report.add_preset(outcome);
        }
        report.sort_in_file_order();
        (report, catalog.source_files())
    }

    #[test]
    fn human() {
        let (report, sources) = report();
        insta::assert_snapshot!(report.human(Style::plain(), &sources));
    }

    #[test]
    fn human_in_colour() {
        let (report, sources) = report();
        let text = report.human(Style::new(true), &sources);
        assert!(text.contains("\u{1b}[1;31merror[P0103]\u{1b}[0m"), "{text}");
        // The same text once the escapes are gone.
        let plain = report.human(Style::plain(), &sources);
        let stripped = regex::Regex::new("\u{1b}\\[[0-9;]*m")
            .expect("a regex")
            .replace_all(&text, "");
        assert_eq!(stripped, plain);
    }

    #[test]
    fn json() {
        let (report, _) = report();
        insta::assert_snapshot!(report.json());
    }

    #[test]
    fn github() {
        let (report, _) = report();
        insta::assert_snapshot!(report.github(false));
    }

    #[test]
    fn sarif() {
        let (report, sources) = report();
        insta::assert_snapshot!(report.sarif(&SarifRun {
            exit: Exit::Invalid,
            deny_warnings: false,
            srcroot: None,
            sources: &sources,
        }));
    }
}

#[test]
fn sandbox_and_allow_read_resolve_along_extends_and_bad_paths_are_errors() {
    use agent_presets::tools::sandbox::SandboxMode;
    let files = [
        (
            "base",
            "version: 1\nname: base\nextends: minimal\nsandbox: read-only\nallowRead: [/opt/sdk, docs]\n",
        ),
        (
            "child",
            "version: 1\nname: child\nextends: base\nallowRead: [/srv/data, docs]\n",
        ),
        ("plain", "version: 1\nname: plain\nextends: minimal\n"),
        (
            "bad",
            "version: 1\nname: bad\nextends: minimal\nallowRead: ['~/.config', /, '']\n",
        ),
        (
            "typo",
            "version: 1\nname: typo\nextends: minimal\nsandbox: danger-full-access\n",
        ),
    ];
    let child = validate_with(&files, "child").preset.expect("valid");
    assert_eq!(child.sandbox_mode(), SandboxMode::ReadOnly);
    assert_eq!(child.allow_read(), ["/opt/sdk", "docs", "/srv/data"]);
    let plain = validate_with(&files, "plain").preset.expect("valid");
    assert_eq!(plain.sandbox_mode(), SandboxMode::WorkspaceWrite);
    let messages = |v: &Validation| -> Vec<String> {
        v.diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.kind.name(), d.message))
            .collect()
    };
    let bad = messages(&validate_with(&files, "bad"));
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(bad.iter().any(|d| d.contains("starts with `~`")), "{bad:?}");
    assert!(
        bad.iter().any(|d| d.contains("whole filesystem")),
        "{bad:?}"
    );
    assert!(bad.iter().any(|d| d.contains("empty path")), "{bad:?}");
    let typo = messages(&validate_with(&files, "typo"));
    assert!(
        typo.iter().any(|d| d.contains("danger-full-access")),
        "{typo:?}"
    );
}

mod own_tools {
    use std::sync::Arc;

    use agent_presets::mcp::{ListedTool, ServerListing, ToolAnnotations};
    use agent_presets::preset::{PresetCatalog, Validation, validate_in_catalog};
    use agent_presets::tools::external::ListingMap;
    use agent_presets::tools::{ToolCatalog, ToolOrigin};
    use serde_json::json;

    use super::found;

    fn tool(name: &str, description: &str, schema: serde_json::Value) -> ListedTool {
        ListedTool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema: schema,
            output_schema: None,
            annotations: Some(ToolAnnotations {
                read_only_hint: Some(true),
                ..ToolAnnotations::default()
            }),
        }
    }

    fn time_listing() -> ServerListing {
        ServerListing {
            server_name: "mcp-time".into(),
            server_version: "1.0.0".into(),
            protocol_version: "2025-06-18".into(),
            tools: vec![
                tool(
                    "get_current_time",
                    "Get the current time in a time zone.",
                    json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                           "properties": {"timezone": {"$ref": "#/definitions/tz"}},
                           "required": ["timezone"], "definitions": {"tz": {"type": "string"}}}),
                ),
                tool(
                    "convert_time",
                    "Convert a time between time zones.",
                    json!({"type": "object", "properties": {"time": {"type": "string"}}}),
                ),
            ],
        }
    }

    /// Validate `name` among `files`, with `listings` as the lock's.
    fn validate(files: &[(&str, &str)], name: &str, listings: ListingMap) -> Validation {
        let mut catalog = PresetCatalog::builtin();
        for (n, text) in files {
            catalog
                .add_text(n, format!("{n}.yaml"), *text)
                .expect("add preset");
        }
        let tools = ToolCatalog::builtin().with_listings(Arc::new(listings));
        validate_in_catalog(&catalog, name, &tools)
    }

    const CLOCK: &str = "version: 1\nname: clock\nextends: standard\nmcpServers:\n  time:\n    command: [sh, time-server.sh]\n    readOnly: true\n    tools:\n      convert_time: {readOnly: false}\n";

    fn visible(v: &Validation) -> Vec<String> {
        let preset = v
            .preset
            .as_ref()
            .unwrap_or_else(|| panic!("{:#?}", v.diagnostics));
        preset
            .assembler()
            .registry()
            .names()
            .map(|n| n.as_str().to_owned())
            .collect()
    }

    #[test]
    fn locked_mcp_tools_join_the_catalog_and_obey_allow_deny_order() {
        let mut listings = ListingMap::new();
        listings.insert("clock", "time", time_listing());
        let files = [(
            "clock",
            &*format!(
                "{CLOCK}tools:\n  allow: [read_file, \"mcp__time__*\"]\n  order: [mcp__time__get_current_time, <rest>]\n"
            ),
        )];
        let v = validate(&files, "clock", listings);
        assert!(v.diagnostics.is_empty(), "{:#?}", v.diagnostics);
        assert_eq!(
            visible(&v),
            [
                "mcp__time__get_current_time",
                "mcp__time__convert_time",
                "read_file"
            ]
        );
        let preset = v.preset.unwrap();
        let catalog = preset.tool_catalog();
        let get = catalog.get("mcp__time__get_current_time").unwrap();
        assert_eq!(
            get.origin(),
            &ToolOrigin::Mcp {
                server: "time".into(),
                tool: "get_current_time".into()
            }
        );
        // Normalised: `$schema` dropped, `definitions` → `$defs` with the ref rewritten.
        assert_eq!(
            *get.schemas().portable,
            json!({"type": "object", "properties": {"timezone": {"$ref": "#/$defs/tz"}},
                   "required": ["timezone"], "$defs": {"tz": {"type": "string"}}})
        );
        // The preset's readOnly decides, per tool; the server's hint does not.
        assert!(get.read_only());
        assert!(!catalog.get("mcp__time__convert_time").unwrap().read_only());
    }

    #[test]
    fn unlocked_servers_typos_and_hidden_mcp_tools() {
        // Not locked: one diagnostic, at the server's name, naming the command; the glob
        // over its tools is not reported again.
        let files = [(
            "clock",
            &*format!("{CLOCK}tools:\n  allow: [read_file, \"mcp__time__*\"]\n"),
        )];
        let v = validate(&files, "clock", ListingMap::new());
        assert_eq!(found(&v), ["mcp-not-locked@clock.yaml:5:3"]);
        assert!(
            v.diagnostics[0]
                .help
                .as_deref()
                .unwrap()
                .contains("agent-presets lock --connect")
        );

        // A typo of a locked tool's name: did you mean, as for built-ins.
        let mut listings = ListingMap::new();
        listings.insert("clock", "time", time_listing());
        let files = [(
            "clock",
            &*format!("{CLOCK}tools:\n  deny: [mcp__time__get_curent_time]\n"),
        )];
        let v = validate(&files, "clock", listings);
        assert_eq!(found(&v), ["unknown-tool@clock.yaml:11:10"]);
        assert_eq!(
            v.diagnostics[0].help.as_deref(),
            Some("did you mean `mcp__time__get_current_time`?")
        );

        // A tool the parent hid is known, not a typo: allowing it again only warns.
        let mut listings = ListingMap::new();
        listings.insert("child", "time", time_listing());
        let parent = format!("{CLOCK}tools:\n  deny: [mcp__time__convert_time]\n");
        let child = "version: 1\nname: child\nextends: clock\ntools:\n  allow: [mcp__time__convert_time, read_file]\n";
        let v = validate(&[("clock", &parent), ("child", child)], "child", listings);
        assert_eq!(found(&v), ["allow-denied-by-parent@child.yaml:5:11"]);
        assert_eq!(visible(&v), ["read_file"]);
    }

    /// Under `minimal` (allow: [bash, edit_file]) a server's tools are hidden whatever the
    /// child allows: the glob entry warns naming minimal's `allow`, and the server, all of
    /// whose tools are hidden, warns at its declaration. Hiding only some of its tools, or
    /// hiding a server a parent declares, is narrowing: no warning.
    #[test]
    fn a_server_whose_tools_are_all_hidden_warns_at_its_declaration() {
        let listings = || {
            let mut l = ListingMap::new();
            l.insert("clock", "time", time_listing());
            l.insert("child", "time", time_listing());
            l
        };
        let under_minimal = CLOCK.replace("extends: standard", "extends: minimal");
        let clock = format!("{under_minimal}tools:\n  allow: [bash, \"mcp__time__*\"]\n");
        let v = validate(&[("clock", &clock)], "clock", listings());
        assert_eq!(
            found(&v),
            [
                "allow-denied-by-parent@clock.yaml:11:17",
                "declared-tool-hidden@clock.yaml:5:3"
            ]
        );
        let hidden = v
            .diagnostics
            .iter()
            .find(|d| d.kind.name() == "declared-tool-hidden")
            .unwrap();
        assert!(
            hidden
                .message
                .contains("MCP server `time` is declared but hidden in `clock`"),
            "{}",
            hidden.message
        );
        assert!(
            hidden.message.contains("mcp__time__convert_time"),
            "{}",
            hidden.message
        );

        let clock = format!("{CLOCK}tools:\n  deny: [mcp__time__convert_time]\n");
        let v = validate(&[("clock", &clock)], "clock", listings());
        assert_eq!(found(&v), Vec::<String>::new());
        let child = "version: 1\nname: child\nextends: clock\ntools:\n  deny: [\"mcp__time__*\"]\n";
        let v = validate(&[("clock", CLOCK), ("child", child)], "child", listings());
        assert_eq!(found(&v), Vec::<String>::new());
    }

    #[test]
    fn mcp_names_that_collide_are_errors() {
        let mut listing = time_listing();
        listing.tools.push(tool(
            "get.current.time",
            "Dotted.",
            json!({"type": "object"}),
        ));
        let mut listings = ListingMap::new();
        listings.insert("clock", "time", listing);
        let files = [(
            "clock",
            &*format!(
                "{CLOCK}commands:\n  mcp__time__x:\n    description: Reserved.\n    run: [date]\n"
            ),
        )];
        let v = validate(&files, "clock", listings);
        let kinds: Vec<String> = found(&v);
        assert!(
            kinds.contains(&"duplicate-tool@clock.yaml:5:3".to_owned()),
            "{kinds:?}"
        );
        assert!(
            kinds.contains(&"invalid-name@clock.yaml:11:3".to_owned()),
            "{kinds:?}"
        );
        let collision = v
            .diagnostics
            .iter()
            .find(|d| d.kind.name() == "duplicate-tool")
            .unwrap();
        assert!(
            collision.message.contains("`get.current.time`")
                && collision.message.contains("`mcp__time__get_current_time`"),
            "{}",
            collision.message
        );
    }

    #[tokio::test]
    async fn a_run_connects_the_locked_mcp_tools_by_replacing_their_handlers() {
        use agent_presets::tools::{ExternalHandler, ToolContext, ToolFuture};
        let mut listings = ListingMap::new();
        listings.insert("clock", "time", time_listing());
        let v = validate(&[("clock", CLOCK)], "clock", listings);
        let preset = v.preset.unwrap_or_else(|| panic!("{:#?}", v.diagnostics));
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path()).unwrap();
        let args = json!({"timezone": "UTC"});
        // From the lock alone, a call cannot reach the server.
        let out = preset
            .assembler()
            .registry()
            .call_for_model("mcp__time__get_current_time", args.clone(), &ctx)
            .await;
        assert!(
            out.is_error && out.content.contains("not connected"),
            "{}",
            out.content
        );
        let before = preset.assembler().registry().schemas();
        let mut assembler = preset.into_assembler();
        assembler.replace_tool_handlers(|def| match def.origin() {
            ToolOrigin::Mcp { server, tool } => {
                let answer = format!("{server}/{tool}");
                let handler: ExternalHandler = Arc::new(move |args, _| {
                    let answer = format!("{answer} {args}");
                    Box::pin(async move { Ok(answer) }) as ToolFuture
                });
                Some(handler)
            }
            _ => None,
        });
        // What is sent does not change; the calls go to the new handler, after the
        // arguments were checked against the tool's schema.
        assert_eq!(assembler.registry().schemas(), before);
        let out = assembler
            .registry()
            .call_for_model("mcp__time__get_current_time", args, &ctx)
            .await;
        assert_eq!(out.content, "time/get_current_time {\"timezone\":\"UTC\"}");
        let out = assembler
            .registry()
            .call_for_model("mcp__time__get_current_time", json!({}), &ctx)
            .await;
        assert!(
            out.is_error && out.content.contains("invalid arguments"),
            "{}",
            out.content
        );
        // Built-ins keep theirs.
        let out = assembler
            .registry()
            .call_for_model("list_dir", json!({"path": "."}), &ctx)
            .await;
        assert!(!out.is_error, "{}", out.content);
    }

    #[test]
    fn servers_and_commands_are_inherited_and_replaced_by_name() {
        let base = "version: 1\nname: base\nextends: standard\ncommands:\n  a:\n    description: A.\n    run: [date]\n  b:\n    description: B.\n    run: [date]\n";
        let child = "version: 1\nname: child\nextends: base\ncommands:\n  b:\n    description: B, replaced.\n    run: [date, -u]\n    readOnly: true\n";
        let v = validate(
            &[("base", base), ("child", child)],
            "child",
            ListingMap::new(),
        );
        let preset = v.preset.unwrap_or_else(|| panic!("{:#?}", v.diagnostics));
        let commands: Vec<(&str, &str)> = preset
            .commands()
            .iter()
            .map(|c| (c.name.value.as_str(), c.spec.description.value.as_str()))
            .collect();
        assert_eq!(commands, [("a", "A."), ("b", "B, replaced.")]);
        let b = preset.tool_catalog().get("b").unwrap();
        assert_eq!(b.description(), "B, replaced.");
        assert!(b.read_only());
        assert!(!preset.tool_catalog().get("a").unwrap().read_only());
    }
}

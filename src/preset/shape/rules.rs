//! The preset schema compiled once into rules for the shape check's walk.
//!
//! The schema ([`preset_json_schema`], generated
//! from the Rust types) stays the one source of truth: every rule is read from it, once,
//! the first time a file is checked. What the walk asks at every node — the `$ref`
//! followed, the types allowed, the property a key names, `additionalProperties`,
//! `required`, `items`, the enumeration or `const`, the `anyOf`/`oneOf` branches,
//! `minimum`, `format` — is then a field of a [`Rule`], not a keyword looked up (and
//! hashed) in a `serde_json::Value`.
//!
//! A rule is made for every schema the walk can reach (after `$ref`s are followed), one
//! per distinct schema, so a `$defs` entry used in several places is one rule, and the
//! rule of a `$defs` entry knows which entry it is (sections, contexts and variables get
//! checks the schema cannot express).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::super::spec::{key_set_owner, preset_json_schema};
use crate::json_schema::local_def_name;
use crate::suggest::list_names;

/// The preset schema, generated once (and compiled once into [`rules`]).
fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(preset_json_schema)
}

pub(super) type RuleId = usize;

/// A JSON Schema `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
    Null,
    /// A type name JSON Schema does not have: never met, never described.
    Other,
}

impl Ty {
    pub(super) fn of(name: &str) -> Ty {
        match name {
            "string" => Ty::String,
            "integer" => Ty::Integer,
            "number" => Ty::Number,
            "boolean" => Ty::Boolean,
            "array" => Ty::Array,
            "object" => Ty::Object,
            "null" => Ty::Null,
            _ => Ty::Other,
        }
    }
}

/// A type a schema allows, with the `minimum` of the (sub)schema that allows it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Allowed {
    pub(super) ty: Ty,
    pub(super) minimum: Option<f64>,
}

impl Allowed {
    pub(super) fn plain(ty: Ty) -> Allowed {
        Allowed { ty, minimum: None }
    }
}

/// `additionalProperties`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Additional {
    /// Absent, `true`, or something that is not a schema: any other key is fine.
    Any,
    /// `false`: any other key is unknown.
    Refused,
    /// A schema every other key's value is checked against.
    Rule(RuleId),
}

/// `const`, as far as a scalar can be compared with it.
#[derive(Clone, Debug)]
pub(super) enum Const {
    /// A number that fits an `i64` (matched by an integer of the same value).
    Int(i64),
    /// Any other number (matched by nothing).
    OtherNumber,
    Str(&'static str),
    Bool(bool),
}

/// A mapping kind that has checks of its own, beyond what the schema says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Special {
    None,
    /// `VariableSpec`: `default` and `enum` values of the declared type.
    Variable,
    /// `SectionSpec` or `ContextSpec` (its name in messages): `text` or `textFile`.
    Text(&'static str),
}

/// The words every unknown-key diagnostic of one kind of mapping shares.
#[derive(Debug)]
pub(super) struct UnknownKeyWords {
    /// The keys the mapping takes, in schema order.
    pub(super) expected: Vec<&'static str>,
    /// What the mapping is ("the preset file", "a section"), when known.
    pub(super) owner: Option<&'static str>,
    /// The help when no key is close: the allowed keys.
    pub(super) allowed: String,
}

/// One schema, compiled (`$ref`s followed).
#[derive(Debug)]
pub(super) struct Rule {
    /// The allowed values of an enumeration of strings (`enum`, or `oneOf`/`anyOf` of
    /// string `const`s).
    pub(super) enumeration: Option<Vec<&'static str>>,
    /// The branches of an `anyOf` (or else `oneOf`).
    pub(super) union: Option<Vec<RuleId>>,
    /// The types of all the branches, in order.
    pub(super) union_types: Vec<Allowed>,
    /// The types allowed; empty when anything is.
    pub(super) types: Vec<Allowed>,
    /// `properties`, in schema order.
    pub(super) properties: Option<Vec<(&'static str, RuleId)>>,
    pub(super) additional: Additional,
    pub(super) required: Vec<&'static str>,
    pub(super) items: Option<RuleId>,
    pub(super) minimum: Option<f64>,
    /// `format` is an unsigned integer format (`uint32`, ...).
    pub(super) unsigned_format: bool,
    /// The largest value an integer `format` allows.
    pub(super) format_max: Option<i128>,
    /// `const`, and how it is shown (as JSON).
    pub(super) constant: Option<(Const, String)>,
    pub(super) special: Special,
    /// For a mapping that refuses other keys.
    pub(super) unknown: Option<UnknownKeyWords>,
}

impl Rule {
    /// The index into `properties` and the rule of the property `name`. A scan: a
    /// mapping of the schema has a dozen properties at most, and most differ in length,
    /// which is compared first (cheaper than a binary search's string comparisons).
    pub(super) fn property(&self, name: &str) -> Option<(usize, RuleId)> {
        self.properties
            .as_deref()?
            .iter()
            .enumerate()
            .find(|(_, (p, _))| p.len() == name.len() && *p == name)
            .map(|(index, (_, rule))| (index, *rule))
    }
}

/// The compiled schema: the rule of the whole file, and those it leads to.
#[derive(Debug)]
pub(super) struct Rules {
    rules: Vec<Rule>,
    root: RuleId,
}

impl Rules {
    pub(super) fn root(&self) -> RuleId {
        self.root
    }
}

impl std::ops::Index<RuleId> for Rules {
    type Output = Rule;

    fn index(&self, id: RuleId) -> &Rule {
        &self.rules[id]
    }
}

/// The preset schema's rules, compiled once.
pub(super) fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| compile(schema()))
}

/// The rules of another document's schema (a test case file's), compiled from `schema`.
pub(super) fn compile_document(schema: &'static Value) -> Rules {
    compile(schema)
}

/// How deep `types` follows union branches into unions (the generated schema has no
/// cycle through them; this only keeps a hand-made one from recursing forever).
const MAX_UNION_DEPTH: usize = 32;

/// How many `$ref`s in a row are followed.
const MAX_REF_HOPS: usize = 16;

fn compile(schema: &'static Value) -> Rules {
    let mut compiler = Compiler {
        defs: schema.get("$defs").and_then(Value::as_object),
        ids: HashMap::new(),
        rules: Vec::new(),
    };
    let root = compiler.rule(schema);
    Rules {
        rules: compiler.rules,
        root,
    }
}

struct Compiler {
    defs: Option<&'static Map<String, Value>>,
    /// A schema (by address, after `$ref`s) → its rule.
    ids: HashMap<*const Value, RuleId>,
    rules: Vec<Rule>,
}

impl Compiler {
    /// Follow `$ref`s to the schema they name.
    fn resolve(&self, mut schema: &'static Value) -> &'static Value {
        for _ in 0..MAX_REF_HOPS {
            let Some(name) = schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(local_def_name)
            else {
                break;
            };
            match self.defs.and_then(|d| d.get(name)) {
                Some(target) => schema = target,
                None => break,
            }
        }
        schema
    }

    fn is_def(&self, name: &str, schema: &Value) -> bool {
        self.defs
            .and_then(|d| d.get(name))
            .is_some_and(|v| std::ptr::eq(v, schema))
    }

    /// The rule of `schema` (made on first use).
    fn rule(&mut self, schema: &'static Value) -> RuleId {
        let schema = self.resolve(schema);
        let key: *const Value = schema;
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = self.rules.len();
        self.ids.insert(key, id);
        let enumeration = self.string_enum(schema);
        let types = self.types(schema, 0);
        self.rules.push(Rule {
            enumeration,
            union: None,
            union_types: Vec::new(),
            types,
            properties: None,
            additional: Additional::Any,
            required: Vec::new(),
            items: None,
            minimum: minimum(schema),
            unsigned_format: false,
            format_max: None,
            constant: None,
            special: Special::None,
            unknown: None,
        });
        // The parts that lead to other rules (which may lead back to this one).
        let branches = union(schema).map(|branches| {
            branches
                .iter()
                .map(|b| self.rule(b))
                .collect::<Vec<RuleId>>()
        });
        let union_types: Vec<Allowed> = union(schema)
            .into_iter()
            .flatten()
            .flat_map(|b| self.types(b, 0))
            .collect();
        let property_map = schema.get("properties").and_then(Value::as_object);
        let properties = property_map.map(|p| {
            p.iter()
                .map(|(name, s)| (name.as_str(), self.rule(s)))
                .collect::<Vec<_>>()
        });
        let additional = match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => Additional::Refused,
            Some(extra @ Value::Object(_)) => Additional::Rule(self.rule(extra)),
            _ => Additional::Any,
        };
        let items = schema.get("items").map(|item| self.rule(item));
        // The rest is this schema's own.
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let format = schema.get("format").and_then(Value::as_str);
        let format_max = match format {
            Some("uint32") => Some(i128::from(u32::MAX)),
            Some("int32") => Some(i128::from(i32::MAX)),
            Some("uint64") => Some(i128::from(u64::MAX)),
            Some("int64") => Some(i128::from(i64::MAX)),
            _ => None,
        };
        let constant = schema.get("const").and_then(|c| {
            let constant = match c {
                Value::Number(n) => n.as_i64().map_or(Const::OtherNumber, Const::Int),
                Value::String(t) => Const::Str(t.as_str()),
                Value::Bool(b) => Const::Bool(*b),
                // Anything else is matched by any scalar.
                _ => return None,
            };
            Some((constant, c.to_string()))
        });
        let special = if self.is_def("VariableSpec", schema) {
            Special::Variable
        } else if self.is_def("SectionSpec", schema) {
            Special::Text("a section")
        } else if self.is_def("ContextSpec", schema) {
            Special::Text("a context")
        } else {
            Special::None
        };
        let unknown =
            matches!(additional, Additional::Refused).then(|| unknown_key_words(property_map));
        let rule = &mut self.rules[id];
        rule.union = branches;
        rule.union_types = union_types;
        rule.properties = properties;
        rule.additional = additional;
        rule.required = required;
        rule.items = items;
        rule.unsigned_format = format.is_some_and(|f| f.starts_with("uint"));
        rule.format_max = format_max;
        rule.constant = constant;
        rule.special = special;
        rule.unknown = unknown;
        id
    }

    /// The types a schema allows, each with the `minimum` of the schema that allows it;
    /// empty when it allows anything.
    fn types(&self, schema: &'static Value, depth: usize) -> Vec<Allowed> {
        let schema = self.resolve(schema);
        let min = minimum(schema);
        let allowed = |name: &str| Allowed {
            ty: Ty::of(name),
            minimum: min,
        };
        let mut out = Vec::new();
        match schema.get("type") {
            Some(Value::String(t)) => out.push(allowed(t)),
            Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str).map(allowed)),
            _ => {}
        }
        if out.is_empty() {
            if self.string_enum(schema).is_some() {
                out.push(allowed("string"));
            }
            if depth < MAX_UNION_DEPTH {
                for branch in union(schema).into_iter().flatten() {
                    out.extend(self.types(branch, depth + 1));
                }
            }
        }
        out
    }

    /// The allowed values of a schema that is an enumeration of strings (`enum`, or
    /// `oneOf`/`anyOf` of `const`s).
    fn string_enum(&self, schema: &'static Value) -> Option<Vec<&'static str>> {
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            return values.iter().map(Value::as_str).collect();
        }
        let branches = union(schema)?;
        if branches.is_empty() {
            return None;
        }
        branches
            .iter()
            .map(|b| self.resolve(b).get("const").and_then(Value::as_str))
            .collect()
    }
}

fn unknown_key_words(properties: Option<&'static Map<String, Value>>) -> UnknownKeyWords {
    let expected: Vec<&'static str> = properties
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let allowed = if expected.is_empty() {
        "this mapping takes no keys".to_owned()
    } else {
        format!(
            "allowed keys here: {}",
            list_names(expected.iter().copied())
        )
    };
    UnknownKeyWords {
        owner: key_set_owner(&expected),
        expected,
        allowed,
    }
}

/// The branches of an `anyOf` or `oneOf`.
fn union(schema: &Value) -> Option<&[Value]> {
    schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
}

fn minimum(schema: &Value) -> Option<f64> {
    schema.get("minimum").and_then(Value::as_f64)
}

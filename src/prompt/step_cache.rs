//! The step cache: the last assembly of an assembler, and its last rendered system
//! prompt and context, keyed by the exact values they were rendered with.
//!
//! A value set that has not changed since the last assembly (the same [`Values`], or an
//! unchanged clone: the same stamp) gets that assembly back without a look at its
//! values. Otherwise each part is compared by the values it depends on.
//!
//! Template equality is not good enough for a key: minijinja says `1 == 1.0`,
//! `true == 1` and `0.0 == -0.0`, yet `{{ n }}` prints `1`, `1.0`, `true`, `-0.0`
//! differently. A key therefore compares each value's type and exact content: integers
//! and floats never match each other, floats match bit for bit, strings match by bytes
//! and by whether they are marked safe, lists and maps item by item (maps in their
//! iteration order; an object that presents itself as a list or a map is compared by
//! what it presents). Values the cache cannot compare exactly (other host objects, very
//! deep nesting) never match, so those steps re-render: always correct, only slower.
//! A value set holding a list, a map or a host object has no stamp: it is compared
//! value by value on every step, since such a value may change inside.
//!
//! [`Values`]: super::Values

use minijinja::Value;
use minijinja::value::ValueKind;

use super::assembler::Assembly;
use super::fingerprint::Fingerprint;
use super::prompt_text::PromptText;

/// How deep [`same_value`] follows nested lists and maps before it gives up (and the
/// step re-renders).
const MAX_KEY_DEPTH: usize = 32;

/// The resolved value (explicit or default) of each variable a part depends on, in the
/// order of its dependency list; `None` where the variable has no value.
pub(crate) type StepKey = Vec<Option<Value>>;

/// What rendering a part cost: `(fuel, bytes)` of the assembly's template budget. A
/// reused part is charged what it cost, so a long-lived assembler refuses exactly the
/// assemblies a fresh one refuses.
pub(crate) type RenderCost = (u64, u64);

/// The last rendered system prompt, with its fingerprint.
#[derive(Debug)]
pub(crate) struct SystemPart {
    pub(crate) key: StepKey,
    pub(crate) text: PromptText,
    pub(crate) fingerprint: Fingerprint,
    pub(crate) cost: RenderCost,
}

/// The last rendered runtime context.
#[derive(Debug)]
pub(crate) struct ContextPart {
    pub(crate) key: StepKey,
    pub(crate) text: Option<PromptText>,
    pub(crate) cost: RenderCost,
}

/// The last rendered text of one runtime context piece: when only some of the facts
/// change (the date), the pieces that do not use them are not rendered again.
#[derive(Debug)]
pub(crate) struct PiecePart {
    pub(crate) key: StepKey,
    pub(crate) text: String,
    pub(crate) cost: RenderCost,
}

/// The last assembly (by the stamp of its value set) and the last rendered parts.
#[derive(Debug, Default)]
pub(crate) struct StepCache {
    pub(crate) last: Option<(u64, Assembly)>,
    pub(crate) system: Option<SystemPart>,
    pub(crate) context: Option<ContextPart>,
    /// Each context piece's last text, by its index in the assembler's contexts.
    pub(crate) context_pieces: Vec<Option<PiecePart>>,
}

/// Would every template print and test `a` and `b` alike? `false` when unsure.
pub(crate) fn same_value(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > MAX_KEY_DEPTH || a.kind() != b.kind() {
        return false;
    }
    match a.kind() {
        ValueKind::Undefined | ValueKind::None => true,
        ValueKind::Bool => a.is_true() == b.is_true(),
        ValueKind::Number => same_number(a, b),
        ValueKind::String => a.as_str() == b.as_str() && a.is_safe() == b.is_safe(),
        ValueKind::Bytes => a.as_bytes() == b.as_bytes(),
        ValueKind::Seq => same_seq(a, b, depth),
        ValueKind::Map => same_map(a, b, depth),
        // Host objects, iterables and invalid values: their behaviour is theirs to
        // decide, so never assume two of them alike.
        _ => false,
    }
}

fn same_number(a: &Value, b: &Value) -> bool {
    match (a.is_integer(), b.is_integer()) {
        (true, true) => matches!(
            (i128::try_from(a.clone()), i128::try_from(b.clone())),
            (Ok(x), Ok(y)) if x == y
        ),
        (false, false) => matches!(
            (f64::try_from(a.clone()), f64::try_from(b.clone())),
            (Ok(x), Ok(y)) if x.to_bits() == y.to_bits()
        ),
        _ => false,
    }
}

fn same_seq(a: &Value, b: &Value, depth: usize) -> bool {
    if a.is_tuple() != b.is_tuple() {
        return false;
    }
    let (Some(n), Some(m)) = (a.len(), b.len()) else {
        return false;
    };
    n == m
        && (0..n).all(|i| {
            matches!(
                (a.get_item_by_index(i), b.get_item_by_index(i)),
                (Ok(x), Ok(y)) if same_value(&x, &y, depth + 1)
            )
        })
}

fn same_map(a: &Value, b: &Value, depth: usize) -> bool {
    if a.is_kwargs() != b.is_kwargs() || a.len() != b.len() || a.len().is_none() {
        return false;
    }
    let (Ok(keys_a), Ok(keys_b)) = (a.try_iter(), b.try_iter()) else {
        return false;
    };
    let mut keys_b = keys_b;
    for ka in keys_a {
        let Some(kb) = keys_b.next() else {
            return false;
        };
        if !same_value(&ka, &kb, depth + 1) {
            return false;
        }
        match (a.get_item(&ka), b.get_item(&kb)) {
            (Ok(x), Ok(y)) if same_value(&x, &y, depth + 1) => {}
            _ => return false,
        }
    }
    keys_b.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: Value, b: Value) -> bool {
        same_value(&a, &b, 0)
    }

    #[test]
    fn template_equal_values_are_not_the_same_key() {
        assert!(!same(Value::from(1), Value::from(1.0)));
        assert!(!same(Value::from(1), Value::from(true)));
        assert!(!same(Value::from(0.0), Value::from(-0.0)));
        assert!(!same(Value::from("1"), Value::from(1)));
        assert!(!same(Value::from("a"), Value::from_safe_string("a".into())));
        assert!(!same(Value::from(vec![1]), Value::from(vec![1.0])));
        assert!(!same(Value::from(()), Value::UNDEFINED));
        assert!(!same(
            Value::from(1u64 << 60),
            Value::from((1u64 << 60) as f64)
        ));
    }

    #[test]
    fn identical_values_are_the_same_key() {
        assert!(same(Value::from(1), Value::from(1u8)));
        assert!(same(Value::from(-0.0), Value::from(-0.0)));
        assert!(same(Value::from(f64::NAN), Value::from(f64::NAN)));
        assert!(same(Value::from("x"), Value::from("x".to_owned())));
        assert!(same(Value::from(()), Value::from(())));
        assert!(same(Value::UNDEFINED, Value::UNDEFINED));
        assert!(same(Value::from(true), Value::from(true)));
        assert!(!same(Value::from(true), Value::from(false)));
        assert!(same(
            Value::from(vec![Value::from("a"), Value::from(2)]),
            Value::from(vec![Value::from("a"), Value::from(2)])
        ));
        let map = |v: i32| Value::from(std::collections::BTreeMap::from([("k", Value::from(v))]));
        assert!(same(map(1), map(1)));
        assert!(!same(map(1), map(2)));
    }

    #[test]
    fn deep_nesting_never_matches() {
        let mut v = Value::from(1);
        for _ in 0..(MAX_KEY_DEPTH + 2) {
            v = Value::from(vec![v]);
        }
        assert!(!same(v.clone(), v));
    }

    #[test]
    fn different_bytes_are_different_keys() {
        let bytes = |b: &[u8]| Value::from_bytes(b.to_vec());
        assert!(same(bytes(b"one"), bytes(b"one")));
        assert!(same(bytes(b""), bytes(b"")));
        assert!(!same(bytes(b"one"), bytes(b"two")));
        assert!(!same(bytes(b"one"), bytes(b"on")));
        assert!(!same(bytes(b"one"), Value::from("one")));
    }

    /// Maps nest like lists: past the depth limit, even identical maps never match.
    #[test]
    fn deep_map_nesting_never_matches() {
        let nest = |levels: usize| {
            let mut v = Value::from(1);
            for _ in 0..levels {
                v = Value::from(std::collections::BTreeMap::from([("k", v)]));
            }
            v
        };
        // Within the limit, identical nested maps are the same key …
        let shallow = nest(MAX_KEY_DEPTH);
        assert!(same(shallow.clone(), shallow));
        // … one level past it they never are.
        let deep = nest(MAX_KEY_DEPTH + 1);
        assert!(!same(deep.clone(), deep));
    }

    /// Map keys count one level deeper than their map, like its values: a key nested
    /// to the limit inside a map is past it.
    #[test]
    fn map_keys_are_one_level_deeper() {
        let mut key = Value::from(1);
        for _ in 0..MAX_KEY_DEPTH {
            key = Value::from(vec![key]);
        }
        // The key on its own is within the limit …
        assert!(same(key.clone(), key.clone()));
        // … as a key of a map, one level past it.
        let map = Value::from(std::collections::BTreeMap::from([(key, Value::from(1))]));
        assert!(!same(map.clone(), map));
    }

    /// A host map that cannot say how many entries it has is not compared at all (its
    /// entries may come out differently the next time it is asked): never the same key.
    #[test]
    fn a_map_without_a_length_never_matches() {
        use minijinja::value::{Enumerator, Object, ObjectRepr};
        use std::sync::Arc;

        #[derive(Debug)]
        struct Uncounted;
        impl Object for Uncounted {
            fn repr(self: &Arc<Self>) -> ObjectRepr {
                ObjectRepr::Map
            }
            fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
                (key.as_str() == Some("k")).then(|| Value::from(1))
            }
            fn enumerate(self: &Arc<Self>) -> Enumerator {
                // An inexact size hint: no length.
                Enumerator::Iter(Box::new(std::iter::once(Value::from("k")).filter(|_| true)))
            }
        }
        let v = Value::from_object(Uncounted);
        assert_eq!(v.len(), None);
        assert!(!same(v.clone(), v));
    }

    /// The same at the depth limit for lists: the limit is exact.
    #[test]
    fn list_nesting_up_to_the_limit_matches() {
        let nest = |levels: usize| {
            let mut v = Value::from(1);
            for _ in 0..levels {
                v = Value::from(vec![v]);
            }
            v
        };
        let at_limit = nest(MAX_KEY_DEPTH);
        assert!(same(at_limit.clone(), at_limit));
        let past = nest(MAX_KEY_DEPTH + 1);
        assert!(!same(past.clone(), past));
    }
}

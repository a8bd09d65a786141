//! A body's schema compiled to one walk of its [`Document`](super::Document): the "is it valid?"
//! that every JSON request asks, answered without jsonschema's keyword-by-keyword lookups.
//!
//! jsonschema judges an object by asking it for each declared property in turn, then searching
//! it again for each required name, each keyword a validator object of its own. Here an object is
//! walked once, in the order its members were sent: each member finds its property where the
//! last one left off (one comparison when a client sends fields in one order), each required
//! property found sets its bit, and a member whose schema only types or bounds a scalar is
//! judged without a call.
//!
//! What it saves is modest, because jsonschema's own validators over the document were already
//! lean. Instructions per validation (callgrind, release build, 2,000 validations of each
//! benchmark payload against its workload's schema): json-small 1,601 → 1,232, json-medium
//! 28,696 → 24,296, json-large 272,857 → 223,468. Served, Rust json-large went from 1,005,000 to
//! 978,000 instructions a request (−2.7%). What is left on json-large is about 190 instructions
//! per node of the walk itself (reading the tape, finding the property, the checks' fields)
//! and 32,000 for its 165 `pattern`s, which stay jsonschema's.
//!
//! What it judges itself: `type`, `properties`, `required`, `additionalProperties`, `items`,
//! `minItems`/`maxItems`, `minLength`/`maxLength` (code points), `minimum`/`maximum` and their
//! exclusive forms (exact across integers and floats), `allOf`/`anyOf`/`oneOf`/`not`, boolean
//! schemas and `$ref` to a place in the same schema (`#/$defs/Name`, recursion included).
//! The keywords that look at one value alone and whose meaning is subtle (`pattern`, `format`,
//! `enum`, `const`, `multipleOf`, `uniqueItems`, `min`/`maxProperties`) are judged by jsonschema
//! itself, compiled from just those keywords with the route's own options, so a regex or a
//! format means exactly what it means in the full validator. A schema with any other keyword
//! (`if`, `patternProperties`, `$id`, `unevaluatedProperties`, a vendor's `x-` extension, …)
//! is not compiled here and keeps jsonschema's walk.
//!
//! Its verdict is the full validator's, both ways; the tests hold the two to that on every
//! body schema of the fixture corpus and on bodies built to sit on each keyword's edge. And a
//! body this walk refuses is judged again by jsonschema, which finds its issues: a refusal
//! costs what it did before and reads exactly the same.

use super::schema::Tape;
use super::{NodeRef, View};
use crate::key_cache::same_bytes;
use jsonschema::Validator;
use serde_json::{Map, Value as Json};
use std::cmp::Ordering;
use std::collections::HashMap;

/// The compiled walk (see the module's notes).
pub struct WalkValidator {
    /// Every subschema reached from the root, which is the first.
    checks: Vec<Check>,
}

/// How the keywords this walk leaves to jsonschema are compiled: the route's options.
pub type LeafCompiler<'a> = &'a dyn Fn(&Json) -> Option<Validator<Tape>>;

struct Check {
    /// The JSON types admitted: all of them without `type`, none for the `false` schema.
    types: Types,
    /// Which groups of rules below this check has ([`STRING_RULES`], …), so that a node pays
    /// only for the rules of its own type, and nothing for applicators it does not have.
    has: u8,
    min_length: Option<u64>,
    max_length: Option<u64>,
    bounds: Vec<(Limit, Number)>,
    /// `bounds` as one interval of floats, when every bound is exactly a float.
    interval: Option<Interval>,
    properties: Vec<Property>,
    /// The bits of [`Property::required`] that every object must have set.
    required_mask: u64,
    /// Required names that `properties` does not declare, looked up one by one.
    required_undeclared: Vec<Box<str>>,
    additional: Option<usize>,
    items: Option<usize>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    /// `allOf` and `$ref`: each must hold.
    all_of: Vec<usize>,
    any_of: Vec<usize>,
    one_of: Vec<usize>,
    not: Option<usize>,
    /// The keywords jsonschema judges (see the module's notes).
    leaf: Option<Validator<Tape>>,
}

const STRING_RULES: u8 = 1;
const NUMBER_RULES: u8 = 2;
const OBJECT_RULES: u8 = 4;
const ARRAY_RULES: u8 = 8;
/// `allOf`, `anyOf`, `oneOf`, `not`, `$ref`, or keywords left to jsonschema.
const APPLIED: u8 = 16;

impl Check {
    fn new() -> Check {
        Check {
            types: Types(ANY),
            has: 0,
            min_length: None,
            max_length: None,
            bounds: Vec::new(),
            interval: None,
            properties: Vec::new(),
            required_mask: 0,
            required_undeclared: Vec::new(),
            additional: None,
            items: None,
            min_items: None,
            max_items: None,
            all_of: Vec::new(),
            any_of: Vec::new(),
            one_of: Vec::new(),
            not: None,
            leaf: None,
        }
    }

    /// Sets [`Check::has`] from the rules compiled in.
    fn noting_its_rules(mut self) -> Check {
        let mut has = 0;
        if self.min_length.is_some() || self.max_length.is_some() {
            has |= STRING_RULES;
        }
        if !self.bounds.is_empty() {
            has |= NUMBER_RULES;
            self.interval = Interval::of(&self.bounds);
        }
        if !self.properties.is_empty() || !self.required_undeclared.is_empty() || self.additional.is_some() {
            has |= OBJECT_RULES;
        }
        if self.items.is_some() || self.min_items.is_some() || self.max_items.is_some() {
            has |= ARRAY_RULES;
        }
        if !self.all_of.is_empty() || !self.any_of.is_empty() || !self.one_of.is_empty() || self.not.is_some() || self.leaf.is_some() {
            has |= APPLIED;
        }
        self.has = has;
        self
    }
}

struct Property {
    name: Box<str>,
    check: usize,
    /// This property's bit when it is required, else 0.
    required: u64,
}

/// The JSON types a `type` keyword admits, one bit each.
#[derive(Clone, Copy)]
struct Types(u8);

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const OBJECT: u8 = 4;
const ARRAY: u8 = 8;
const NUMBER: u8 = 16;
const INTEGER: u8 = 32;
const STRING: u8 = 64;
const ANY: u8 = 127;

impl Types {
    fn named(name: &str) -> Option<u8> {
        Some(match name {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "object" => OBJECT,
            "array" => ARRAY,
            "number" => NUMBER,
            "integer" => INTEGER,
            "string" => STRING,
            _ => return None,
        })
    }

    #[inline]
    fn admit(self, view: &View<'_>) -> bool {
        let bits = self.0;
        match *view {
            View::Null => bits & NULL != 0,
            View::Bool(_) => bits & BOOLEAN != 0,
            View::Object(_) => bits & OBJECT != 0,
            View::Array(_) => bits & ARRAY != 0,
            View::Str(_) => bits & STRING != 0,
            View::Int(_) | View::UInt(_) => bits & (NUMBER | INTEGER) != 0,
            // An integral float is an integer to JSON Schema (`1.0`).
            View::Float(f) => bits & NUMBER != 0 || (bits & INTEGER != 0 && f.fract() == 0.0),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Limit {
    Minimum,
    Maximum,
    ExclusiveMinimum,
    ExclusiveMaximum,
}

/// A JSON number as the document holds it, compared exactly across kinds
/// (`9007199254740993` is more than `9007199254740992.0`, which `as f64` would call equal).
#[derive(Clone, Copy, Debug)]
enum Number {
    Int(i64),
    UInt(u64),
    Float(f64),
}

/// 2^53: every integer up to it in size is exactly a float.
const EXACT: u64 = 1 << 53;

impl Number {
    fn of_schema(value: &Json) -> Option<Number> {
        let Json::Number(number) = value else { return None };
        if let Some(i) = number.as_i64() {
            Some(Number::Int(i))
        } else if let Some(u) = number.as_u64() {
            Some(Number::UInt(u))
        } else {
            number.as_f64().filter(|f| f.is_finite()).map(Number::Float)
        }
    }

    /// The number as a float, when that float is exactly it.
    #[inline(always)]
    fn exact_float(self) -> Option<f64> {
        match self {
            Number::Int(i) if i.unsigned_abs() <= EXACT => Some(i as f64),
            Number::UInt(u) if u <= EXACT => Some(u as f64),
            Number::Float(f) => Some(f),
            _ => None,
        }
    }

    #[inline]
    fn cmp(self, other: Number) -> Ordering {
        use Number::{Float, Int, UInt};
        match (self, other) {
            (Int(a), Int(b)) => a.cmp(&b),
            (UInt(a), UInt(b)) => a.cmp(&b),
            // Finite on both sides: a document holds no NaN or infinity, nor does a schema here.
            (Float(a), Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            // Small integers are exactly floats, and float comparison is exact.
            (Int(a), Float(b)) if a.unsigned_abs() <= EXACT => (a as f64).partial_cmp(&b).unwrap_or(Ordering::Equal),
            (Float(a), Int(b)) if b.unsigned_abs() <= EXACT => a.partial_cmp(&(b as f64)).unwrap_or(Ordering::Equal),
            _ => i128_cmp(self, other),
        }
    }
}

/// [`Number::cmp`] for the rare pairs: mixed signs of integer, or large integers and floats.
#[inline(never)]
fn i128_cmp(a: Number, b: Number) -> Ordering {
    let wide = |number: Number| match number {
        Number::Int(i) => Ok(i128::from(i)),
        Number::UInt(u) => Ok(i128::from(u)),
        Number::Float(f) => Err(f),
    };
    match (wide(a), wide(b)) {
        (Ok(a), Ok(b)) => a.cmp(&b),
        (Ok(a), Err(b)) => int_to_float(a, b),
        (Err(a), Ok(b)) => int_to_float(b, a).reverse(),
        (Err(a), Err(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// `int` against a finite `float`, exactly: by the float's integral part, then its fraction.
fn int_to_float(int: i128, float: f64) -> Ordering {
    // 2^127: every i128 lies in [-2^127, 2^127).
    const BEYOND: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if float >= BEYOND {
        return Ordering::Less;
    }
    if float < -BEYOND {
        return Ordering::Greater;
    }
    let whole = float.trunc();
    // Exact: `whole` is integral and within i128's range.
    match int.cmp(&(whole as i128)) {
        Ordering::Equal if float > whole => Ordering::Less,
        Ordering::Equal if float < whole => Ordering::Greater,
        ordering => ordering,
    }
}

/// A check's bounds folded into one interval, when every bound is exactly a float (a float, or
/// an integer up to 2^53 in size). A number that is exactly a float too is then judged by two
/// float comparisons, which are exact, instead of [`Number::cmp`] against each bound in turn.
///
/// Through the list, each bound cost about 60 instructions (a call, a match on both numbers'
/// kinds, the limit's match), and json-large judges 332 a request (each item's `quantity` and
/// `unit_price`). The Python benchmark app's json-large route, served (callgrind, instructions a
/// request, `PYTHONHASHSEED=0`): 1,381,564 → 1,361,686 (−1.4%).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Interval {
    low: f64,
    low_open: bool,
    high: f64,
    high_open: bool,
}

impl Interval {
    /// The tightest interval every bound of `bounds` admits, or `None` when one is not exactly a
    /// float.
    fn of(bounds: &[(Limit, Number)]) -> Option<Interval> {
        let mut interval = Interval { low: f64::NEG_INFINITY, low_open: false, high: f64::INFINITY, high_open: false };
        for &(limit, bound) in bounds {
            let bound = bound.exact_float()?;
            let (open, is_low) = match limit {
                Limit::Minimum => (false, true),
                Limit::ExclusiveMinimum => (true, true),
                Limit::Maximum => (false, false),
                Limit::ExclusiveMaximum => (true, false),
            };
            // A tighter bound replaces the last; at an equal one, an open bound is the tighter.
            if is_low && (bound > interval.low || (bound == interval.low && open)) {
                (interval.low, interval.low_open) = (bound, open);
            }
            if !is_low && (bound < interval.high || (bound == interval.high && open)) {
                (interval.high, interval.high_open) = (bound, open);
            }
        }
        Some(interval)
    }

    #[inline(always)]
    fn contains(self, x: f64) -> bool {
        (if self.low_open { x > self.low } else { x >= self.low }) && (if self.high_open { x < self.high } else { x <= self.high })
    }
}

impl WalkValidator {
    /// The walk for `schema`, or `None` when it has a keyword this walk does not judge (see
    /// the module's notes), a `$ref` it cannot follow, or a part `leaf` cannot compile.
    pub fn compile(schema: &Json, leaf: LeafCompiler<'_>) -> Option<WalkValidator> {
        let mut compiler = Compiler { root: schema, checks: Vec::new(), refs: HashMap::new(), leaf };
        compiler.refs.insert("#".to_owned(), 0);
        compiler.schema(schema, true)?;
        let walk = WalkValidator { checks: compiler.checks };
        // A schema that applies itself to the same value (`{"anyOf": [{"$ref": "#"}, …]}`)
        // would recurse without end; jsonschema is left to judge it.
        (!walk.applies_itself()).then_some(walk)
    }

    /// Whether some check reaches itself through applicators alone (`allOf`, `anyOf`,
    /// `oneOf`, `not`, `$ref`), which judge the same value rather than a member or an item.
    fn applies_itself(&self) -> bool {
        // 0: not visited, 1: on the current path, 2: done.
        fn cycle(checks: &[Check], at: usize, state: &mut [u8]) -> bool {
            match state[at] {
                1 => return true,
                2 => return false,
                _ => {}
            }
            state[at] = 1;
            let check = &checks[at];
            let applied = check.all_of.iter().chain(&check.any_of).chain(&check.one_of).chain(&check.not);
            for &next in applied {
                if cycle(checks, next, state) {
                    return true;
                }
            }
            state[at] = 2;
            false
        }
        let mut state = vec![0; self.checks.len()];
        (0..self.checks.len()).any(|at| cycle(&self.checks, at, &mut state))
    }

    /// Whether the document at `node` is valid against the schema.
    pub fn is_valid(&self, node: NodeRef<'_>) -> bool {
        self.valid(0, node)
    }

    fn valid(&self, at: usize, node: NodeRef<'_>) -> bool {
        let check = &self.checks[at];
        let view = node.view();
        if !check.types.admit(&view) {
            return false;
        }
        let own = match view {
            View::Object(members) if check.has & OBJECT_RULES != 0 => self.valid_object(check, members),
            View::Array(items) if check.has & ARRAY_RULES != 0 => self.valid_array(check, items),
            scalar => valid_scalar(check, scalar),
        };
        own && (check.has & APPLIED == 0 || self.valid_applied(check, node))
    }

    /// [`Self::valid`] for a member's value, with a scalar's own rules (a type, bounds, a
    /// length) judged here rather than in a call: most members of a record are scalars.
    #[inline(always)]
    fn valid_member(&self, at: usize, node: NodeRef<'_>) -> bool {
        let check = &self.checks[at];
        if check.has & !(STRING_RULES | NUMBER_RULES) != 0 {
            return self.valid(at, node);
        }
        let view = node.view();
        check.types.admit(&view) && valid_scalar(check, view)
    }

    #[inline(never)]
    fn valid_applied(&self, check: &Check, node: NodeRef<'_>) -> bool {
        check.all_of.iter().all(|&each| self.valid(each, node))
            && (check.any_of.is_empty() || check.any_of.iter().any(|&each| self.valid(each, node)))
            && (check.one_of.is_empty() || check.one_of.iter().filter(|&&each| self.valid(each, node)).take(2).count() == 1)
            && check.not.is_none_or(|not| !self.valid(not, node))
            && check.leaf.as_ref().is_none_or(|leaf| leaf.is_valid(node))
    }

    fn valid_object(&self, check: &Check, members: super::Members<'_>) -> bool {
        let properties = &check.properties;
        let mut found = 0u64;
        // Where the next member's property is looked for first: after the last one found.
        let mut next = 0;
        let mut rest = members;
        while let Some((key, value)) = rest.next_raw() {
            let judged_by = match declared(properties, next, key) {
                Some(at) => {
                    next = at + 1;
                    found |= properties[at].required;
                    Some(properties[at].check)
                }
                None => check.additional,
            };
            if judged_by.is_some_and(|each| !self.valid_member(each, value)) {
                return false;
            }
        }
        found == check.required_mask && check.required_undeclared.iter().all(|name| members.value_of(name).is_some())
    }

    fn valid_array(&self, check: &Check, items: super::Items<'_>) -> bool {
        let count = items.len() as u64;
        check.min_items.is_none_or(|min| count >= min)
            && check.max_items.is_none_or(|max| count <= max)
            && check.items.is_none_or(|each| items.into_iter().all(|item| self.valid(each, item)))
    }
}

/// The property named `key`, looked for from `from` on and then from the start: members sent
/// in one order, request after request, find theirs at the first comparison.
#[inline]
fn declared(properties: &[Property], from: usize, key: &[u8]) -> Option<usize> {
    let matches = |property: &Property| same_bytes(property.name.as_bytes(), key);
    let after = properties.get(from..).unwrap_or_default();
    match after.iter().position(matches) {
        Some(at) => Some(from + at),
        None => properties[..from.min(properties.len())].iter().position(matches),
    }
}

/// A string's length and a number's bounds; any other value has no rules here.
#[inline(always)]
fn valid_scalar(check: &Check, view: View<'_>) -> bool {
    match view {
        View::Str(text) if check.has & STRING_RULES != 0 => length_within(text, check.min_length, check.max_length),
        View::Int(i) if check.has & NUMBER_RULES != 0 => within_bounds(check, Number::Int(i)),
        View::UInt(u) if check.has & NUMBER_RULES != 0 => within_bounds(check, Number::UInt(u)),
        View::Float(f) if check.has & NUMBER_RULES != 0 => within_bounds(check, Number::Float(f)),
        _ => true,
    }
}

/// Whether `number` is within `check`'s bounds: two float comparisons when the number and every
/// bound are exactly floats (see [`Interval`]), else each bound compared exactly.
#[inline(always)]
fn within_bounds(check: &Check, number: Number) -> bool {
    match (check.interval, number.exact_float()) {
        (Some(interval), Some(x)) => interval.contains(x),
        _ => within_each_bound(check, number),
    }
}

#[inline(never)]
fn within_each_bound(check: &Check, number: Number) -> bool {
    check.bounds.iter().all(|&(limit, bound)| {
        let ordering = number.cmp(bound);
        match limit {
            Limit::Minimum => ordering != Ordering::Less,
            Limit::Maximum => ordering != Ordering::Greater,
            Limit::ExclusiveMinimum => ordering == Ordering::Greater,
            Limit::ExclusiveMaximum => ordering == Ordering::Less,
        }
    })
}

/// Whether `text` has between `min` and `max` code points, counting them only when its byte
/// length (at most four bytes a code point) does not settle it.
fn length_within(text: &str, min: Option<u64>, max: Option<u64>) -> bool {
    if min.is_none() && max.is_none() {
        return true;
    }
    let (min, max) = (min.unwrap_or(0), max.unwrap_or(u64::MAX));
    let bytes = text.len() as u64;
    let fewest = bytes.div_ceil(4);
    if bytes < min || fewest > max {
        return false;
    }
    if min <= fewest && bytes <= max {
        return true;
    }
    let count = text.chars().count() as u64;
    (min..=max).contains(&count)
}

/// Keywords that only annotate: they never change a verdict.
const ANNOTATIONS: [&str; 10] =
    ["title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment", "$defs", "definitions"];

/// Keywords that judge one value by itself, left to jsonschema (see the module's notes).
const LEAVES: [&str; 8] = ["pattern", "format", "enum", "const", "multipleOf", "uniqueItems", "minProperties", "maxProperties"];

/// The only dialect a `$schema` here may name: the one routes are compiled for.
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

struct Compiler<'s, 'l> {
    root: &'s Json,
    checks: Vec<Check>,
    /// `$ref` targets already given a place in `checks`.
    refs: HashMap<String, usize>,
    leaf: LeafCompiler<'l>,
}

impl<'s> Compiler<'s, '_> {
    /// Compiles `schema` into the next place of `checks`, and returns that place.
    fn schema(&mut self, schema: &'s Json, is_root: bool) -> Option<usize> {
        let at = self.checks.len();
        self.checks.push(Check::new());
        let check = match schema {
            Json::Bool(true) => Check::new(),
            Json::Bool(false) => Check { types: Types(0), ..Check::new() },
            Json::Object(keywords) => self.keywords(keywords, is_root)?,
            _ => return None,
        };
        self.checks[at] = check.noting_its_rules();
        Some(at)
    }

    fn keywords(&mut self, keywords: &'s Map<String, Json>, is_root: bool) -> Option<Check> {
        let mut check = Check::new();
        let mut leaves = Map::new();
        for (keyword, value) in keywords {
            match keyword.as_str() {
                "type" => check.types = types(value)?,
                "properties" => {
                    for (name, schema) in value.as_object()? {
                        let property = self.schema(schema, false)?;
                        check.properties.push(Property { name: name.as_str().into(), check: property, required: 0 });
                    }
                }
                "required" => {} // below, once `properties` is known
                "additionalProperties" => check.additional = Some(self.schema(value, false)?),
                "items" => check.items = Some(self.schema(value, false)?),
                "minItems" => check.min_items = Some(value.as_u64()?),
                "maxItems" => check.max_items = Some(value.as_u64()?),
                "minLength" => check.min_length = Some(value.as_u64()?),
                "maxLength" => check.max_length = Some(value.as_u64()?),
                "minimum" => check.bounds.push((Limit::Minimum, Number::of_schema(value)?)),
                "maximum" => check.bounds.push((Limit::Maximum, Number::of_schema(value)?)),
                "exclusiveMinimum" => check.bounds.push((Limit::ExclusiveMinimum, Number::of_schema(value)?)),
                "exclusiveMaximum" => check.bounds.push((Limit::ExclusiveMaximum, Number::of_schema(value)?)),
                "allOf" => check.all_of.extend(self.schemas(value)?),
                "anyOf" => check.any_of = self.schemas(value)?,
                "oneOf" => check.one_of = self.schemas(value)?,
                "not" => check.not = Some(self.schema(value, false)?),
                "$ref" => check.all_of.push(self.reference(value.as_str()?)?),
                "$schema" if is_root && value.as_str() == Some(DRAFT_2020_12) => {}
                // Left to jsonschema, judged on the value by these keywords alone.
                leaf if LEAVES.contains(&leaf) => {
                    leaves.insert(keyword.clone(), value.clone());
                }
                annotation if ANNOTATIONS.contains(&annotation) => {}
                _ => return None,
            }
        }
        if let Some(required) = keywords.get("required") {
            for name in required.as_array()? {
                let name = name.as_str()?;
                let declared = check.properties.iter().position(|property| &*property.name == name);
                match declared {
                    Some(at) if at < 64 => {
                        check.properties[at].required = 1 << at;
                        check.required_mask |= 1 << at;
                    }
                    _ => check.required_undeclared.push(name.into()),
                }
            }
        }
        if !leaves.is_empty() {
            check.leaf = Some((self.leaf)(&Json::Object(leaves))?);
        }
        Some(check)
    }

    fn schemas(&mut self, list: &'s Json) -> Option<Vec<usize>> {
        let list = list.as_array().filter(|list| !list.is_empty())?;
        list.iter().map(|schema| self.schema(schema, false)).collect()
    }

    /// The place of a `$ref` into this same schema, compiled at its first use.
    fn reference(&mut self, pointer: &str) -> Option<usize> {
        if let Some(&at) = self.refs.get(pointer) {
            return Some(at);
        }
        // A plain JSON pointer from the root; percent-escapes and other documents are not
        // followed here.
        let path = pointer.strip_prefix("#/").filter(|path| !path.contains('%'))?;
        let mut target = self.root;
        for token in path.split('/') {
            // A schema with an `$id` is a resource of its own: the `$ref`s inside it resolve
            // against it, not against the root as this walk's would. Left to jsonschema (found
            // by a differential run: `#/$defs/a/properties/b` through an `$id` judged `1`
            // valid where jsonschema refused it, and the app let it through).
            if target.get("$id").is_some() {
                return None;
            }
            let token = token.replace("~1", "/").replace("~0", "~");
            target = match target {
                Json::Object(map) => map.get(&token)?,
                Json::Array(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        // Placed before it is compiled, so a schema that refers to itself finds itself.
        self.refs.insert(pointer.to_owned(), self.checks.len());
        self.schema(target, false)
    }
}

fn types(value: &Json) -> Option<Types> {
    let bits = match value {
        Json::String(name) => Types::named(name)?,
        Json::Array(names) if !names.is_empty() => names.iter().try_fold(0, |bits, name| Some(bits | Types::named(name.as_str()?)?))?,
        _ => return None,
    };
    Some(Types(bits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Document;
    use serde_json::json;

    fn for_tape(schema: &Json) -> Option<Validator<Tape>> {
        crate::validation::route_options::<Tape>().build(schema).ok()
    }

    fn walk(schema: &Json) -> Option<WalkValidator> {
        WalkValidator::compile(schema, &for_tape)
    }

    /// Asserts the walk's verdict is jsonschema's on every instance.
    fn agrees(schema: &Json, walk: &WalkValidator, instances: &[Json]) {
        let judge = for_tape(schema).expect("the schema compiles");
        for instance in instances {
            let document = Document::from_tree(instance);
            assert_eq!(walk.is_valid(document.root()), judge.is_valid(document.root()), "schema {schema}\ninstance {instance}");
        }
    }

    fn fixtures() -> std::path::PathBuf {
        // Bazel points FERRULE_FIXTURES_DIR at its runfiles copy of the corpus; cargo runs here.
        std::env::var_os("FERRULE_FIXTURES_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures"))
    }

    /// Every value under `key`, anywhere in `json`.
    fn every(json: &Json, key: &str, found: &mut Vec<Json>) {
        match json {
            Json::Object(map) => {
                for (name, value) in map {
                    if name == key {
                        found.push(value.clone());
                    }
                    every(value, key, found);
                }
            }
            Json::Array(items) => items.iter().for_each(|item| every(item, key, found)),
            _ => {}
        }
    }

    /// The corpus's schemas, and its JSON bodies with the benchmark payloads.
    fn corpus() -> (Vec<Json>, Vec<Json>) {
        let root = fixtures();
        let mut files: Vec<_> = std::fs::read_dir(root.join("conformance")).unwrap().map(|entry| entry.unwrap().path()).collect();
        files.sort();
        files.push(root.join("benchmarks/workloads.json"));
        let (mut schemas, mut bodies) = (Vec::new(), Vec::new());
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let json: Json = serde_json::from_str(&text).unwrap();
            every(&json, "schema", &mut schemas);
            every(&json, "json", &mut bodies);
        }
        schemas.retain(|schema| schema.is_object() && for_tape(schema).is_some());
        for name in ["json-small", "json-medium", "json-large"] {
            let path = root.join("benchmarks/payloads").join(format!("{name}.json"));
            bodies.push(serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap());
        }
        (schemas, bodies)
    }

    /// Values on the edges of every limit `schema` names, and one of each kind.
    fn edge_values(schema: &Json) -> Vec<Json> {
        let mut values = vec![
            json!(null), json!(true), json!(false), json!(0), json!(-1), json!(1), json!(1.0), json!(1.5), json!(-0.5),
            json!(9007199254740993u64), json!(u64::MAX), json!(i64::MIN), json!(1e300), json!(""), json!("a"), json!("é"),
            json!("ab🦀"), json!("7d1f3f4e-4b0a-4f3e-9a51-2f6c1e9b8a10"), json!("2024-01-15T10:30:00Z"), json!("SKU-00001"),
            json!("a@b.org"), json!("2024-01-15"), json!([]), json!([1]), json!(["x", "x"]), json!({}), json!({"a": 1}),
        ];
        let mut listed = Vec::new();
        every(schema, "enum", &mut listed);
        values.extend(listed.iter().filter_map(Json::as_array).flatten().cloned());
        every(schema, "const", &mut values);
        let mut limits = Vec::new();
        for keyword in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            every(schema, keyword, &mut limits);
        }
        for limit in limits.iter().filter_map(Json::as_f64) {
            for value in [limit - 1.0, limit - 0.5, limit, limit + 0.5, limit + 1.0] {
                values.push(json!(value));
                if value.fract() == 0.0 && value.abs() < 1e15 {
                    values.push(json!(value as i64));
                }
            }
        }
        let mut lengths = Vec::new();
        for keyword in ["minLength", "maxLength", "minItems", "maxItems"] {
            every(schema, keyword, &mut lengths);
        }
        for length in lengths.iter().filter_map(Json::as_u64).filter(|&length| length <= 300) {
            for n in length.saturating_sub(1)..=length + 1 {
                values.push(json!("x".repeat(n as usize)));
                values.push(json!("é".repeat(n as usize)));
                values.push(json!(vec!["x"; n as usize]));
            }
        }
        values
    }

    /// A value `schema` accepts, built from `values`: an object of its properties' and an array
    /// of its items' own accepted values, else the first of `values` it accepts.
    fn synthesized(schema: &Json, values: &[Json], depth: usize) -> Option<Json> {
        let judge = for_tape(schema)?;
        let accepts = |value: &Json| judge.is_valid(Document::from_tree(value).root());
        let built = match (schema.get("properties").and_then(Json::as_object), schema.get("items")) {
            _ if depth == 0 => None,
            (Some(properties), _) => Some(Json::Object(
                properties.iter().filter_map(|(name, property)| Some((name.clone(), synthesized(property, values, depth - 1)?))).collect(),
            )),
            (None, Some(items)) => synthesized(items, values, depth - 1).map(|item| json!([item.clone(), item])),
            (None, None) => None,
        };
        built.filter(|value| accepts(value)).or_else(|| values.iter().find(|value| accepts(value)).cloned())
    }

    /// `base` with one defect at a time: each node replaced by each of `values`, each member
    /// removed, and an unknown member added to each object. At most `budget` nodes are touched.
    fn mutations(base: &Json, values: &[Json], budget: &mut usize, out: &mut Vec<Json>) {
        fn at<'j>(json: &'j mut Json, path: &[Result<usize, String>]) -> &'j mut Json {
            path.iter().fold(json, |node, step| match step {
                Ok(index) => &mut node[*index],
                Err(key) => &mut node[key.as_str()],
            })
        }
        let mut paths = vec![Vec::new()];
        let mut next = 0;
        while next < paths.len() && *budget > 0 {
            *budget -= 1;
            let path: Vec<Result<usize, String>> = paths[next].clone();
            next += 1;
            let mut copy = base.clone();
            let node = at(&mut copy, &path).clone();
            for value in values {
                *at(&mut copy, &path) = value.clone();
                out.push(copy.clone());
            }
            *at(&mut copy, &path) = node.clone();
            match &node {
                Json::Object(map) => {
                    for key in map.keys() {
                        let mut removed = copy.clone();
                        at(&mut removed, &path).as_object_mut().unwrap().remove(key);
                        out.push(removed);
                        paths.push([path.clone(), vec![Err(key.clone())]].concat());
                    }
                    at(&mut copy, &path).as_object_mut().unwrap().insert("zz_unknown".into(), json!(1));
                    out.push(copy);
                }
                Json::Array(items) => paths.extend((0..items.len().min(3)).map(|index| [path.clone(), vec![Ok(index)]].concat())),
                _ => {}
            }
        }
    }

    /// The walk's verdict is jsonschema's on every body schema of the corpus, for every body of
    /// the corpus and for each body the schema accepts broken in one place at a time.
    #[test]
    fn judges_as_jsonschema_does_on_the_corpus() {
        let (schemas, bodies) = corpus();
        let mut walked = 0;
        for schema in &schemas {
            let Some(walk) = walk(schema) else { continue };
            walked += 1;
            let values = edge_values(schema);
            let mut instances = bodies.clone();
            instances.extend(values.iter().cloned());
            instances.extend(synthesized(schema, &values, 4));
            let accepted: Vec<Json> = {
                let judge = for_tape(schema).unwrap();
                instances.iter().filter(|body| judge.is_valid(Document::from_tree(body).root())).cloned().collect()
            };
            let mut budget = 60;
            for base in accepted.iter().rev().take(3) {
                mutations(base, &values, &mut budget, &mut instances);
            }
            agrees(schema, &walk, &instances);
        }
        // Nearly every body schema the corpus writes is walked (not left to jsonschema).
        assert!(walked * 10 >= schemas.len() * 9, "{walked} of {} schemas walked", schemas.len());
    }

    /// The benchmark's bodies are the ones the walk exists for: their schemas must compile to
    /// it, and their payloads be accepted by it.
    #[test]
    fn walks_the_benchmark_schemas() {
        let workloads: Json = serde_json::from_str(&std::fs::read_to_string(fixtures().join("benchmarks/workloads.json")).unwrap()).unwrap();
        let mut schemas = Vec::new();
        every(&workloads, "schema", &mut schemas);
        let mut walked = 0;
        for schema in schemas.iter().filter(|schema| schema.get("properties").is_some()) {
            walk(schema).unwrap_or_else(|| panic!("not walked: {schema}"));
            walked += 1;
        }
        assert!(walked >= 3, "the json-small/medium/large schemas");
    }

    #[test]
    fn numbers_compare_exactly_across_kinds() {
        use Number::{Float, Int, UInt};
        let cases = [
            (Int(9_007_199_254_740_993), Float(9_007_199_254_740_992.0), Ordering::Greater),
            (Int(1), Float(1.0), Ordering::Equal),
            (Int(1), Float(1.5), Ordering::Less),
            (Int(-1), Float(-1.5), Ordering::Greater),
            (Int(-2), Float(-1.5), Ordering::Less),
            (UInt(u64::MAX), Float(1.8446744073709552e19), Ordering::Less),
            (UInt(u64::MAX), Int(-1), Ordering::Greater),
            (Int(i64::MIN), UInt(0), Ordering::Less),
            (Int(i64::MAX), Float(1e300), Ordering::Less),
            (Int(i64::MIN), Float(-1e300), Ordering::Greater),
            (Float(0.5), Int(0), Ordering::Greater),
            (Float(-0.0), Int(0), Ordering::Equal),
        ];
        for (a, b, expected) in cases {
            assert_eq!(a.cmp(b), expected, "{a:?} against {b:?}");
        }
        let schema = json!({"minimum": 9007199254740993u64, "maximum": 1e19, "exclusiveMaximum": 18446744073709551615u64});
        let walk = walk(&schema).unwrap();
        let instances = [json!(9007199254740992u64), json!(9007199254740993u64), json!(9007199254740992.0), json!(1e19), json!(1.0000000000000002e19), json!(u64::MAX)];
        agrees(&schema, &walk, &instances);
    }

    /// The interval judges every number as the bounds compared one by one do, and is only
    /// folded from bounds that are exactly floats.
    #[test]
    fn an_interval_judges_as_each_bound_does() {
        use Limit::{ExclusiveMaximum, ExclusiveMinimum, Maximum, Minimum};
        use Number::{Float, Int, UInt};
        let bound_lists: [&[(Limit, Number)]; 8] = [
            &[(Minimum, Int(1))],
            &[(Minimum, Int(0)), (ExclusiveMinimum, Float(0.0))],
            &[(ExclusiveMinimum, Int(0)), (Minimum, Float(0.0))],
            &[(Minimum, Float(-1.5)), (Minimum, Int(-2)), (Maximum, Int(3)), (ExclusiveMaximum, Float(3.0))],
            &[(ExclusiveMaximum, Float(2.5)), (Maximum, Int(2))],
            &[(Minimum, Int(-9_007_199_254_740_992)), (Maximum, UInt(9_007_199_254_740_992))],
            &[(Maximum, Float(1e300)), (ExclusiveMinimum, Float(-1e300))],
            &[(Minimum, Int(5)), (Maximum, Int(4))],
        ];
        let numbers = [
            Int(-3), Int(-2), Int(-1), Int(0), Int(1), Int(2), Int(3), Int(4), Int(5), Int(6), UInt(0), UInt(3), Float(-2.0),
            Float(-1.5), Float(-1.0), Float(-0.0), Float(0.0), Float(0.5), Float(2.0), Float(2.5), Float(3.0), Float(4.5),
            Int(-9_007_199_254_740_992), Int(-9_007_199_254_740_993), UInt(9_007_199_254_740_992), UInt(9_007_199_254_740_993),
            Float(1e300), Float(-1e300), Int(i64::MIN), UInt(u64::MAX),
        ];
        for bounds in bound_lists {
            let mut check = Check::new();
            check.bounds = bounds.to_vec();
            let check = check.noting_its_rules();
            assert!(check.interval.is_some(), "{bounds:?} are exactly floats");
            for &number in &numbers {
                assert_eq!(within_bounds(&check, number), within_each_bound(&check, number), "{number:?} within {bounds:?}");
            }
        }
        // A bound beyond 2^53 is not exactly a float: the list judges it.
        assert_eq!(Interval::of(&[(Minimum, Int(9_007_199_254_740_993))]), None);
        assert_eq!(Interval::of(&[(Maximum, UInt(u64::MAX))]), None);
    }

    #[test]
    fn follows_references_and_combinators() {
        let schemas = [
            json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "required": ["v"], "properties": {
                "v": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}}),
            json!({"type": "object", "properties": {"next": {"$ref": "#"}, "n": {"type": ["integer", "null"]}}, "additionalProperties": false}),
            json!({"oneOf": [{"type": "integer", "multipleOf": 3}, {"type": "number", "minimum": 5}], "not": {"const": 9}}),
            json!({"anyOf": [{"type": "string", "pattern": "^a"}, {"type": "null"}], "allOf": [{"maxLength": 3}]}),
            json!({"type": "array", "items": false, "maxItems": 0}),
            json!({"type": "object", "required": ["a", "b"], "properties": {"a": true}, "additionalProperties": {"enum": [1, "x"]}}),
        ];
        let instances = [
            json!({"v": 1}), json!({"v": 1, "children": [{"v": 2}, {"v": 3, "children": [{"v": "x"}]}]}), json!({"v": 1, "children": [{}]}),
            json!({"next": {"next": {"n": 1}}}), json!({"next": {"next": {"n": 1.5}}}), json!({"next": {"x": 1}}), json!({"n": null}),
            json!(3), json!(6), json!(9), json!(7.5), json!(4), json!("abc"), json!("abcd"), json!("b"), json!(null), json!([]), json!([1]),
            json!({"a": 0, "b": 1}), json!({"a": 0, "b": "x"}), json!({"a": 0, "b": 2}), json!({"a": 0}), json!({"b": 1}),
        ];
        for schema in &schemas {
            agrees(schema, &walk(schema).unwrap_or_else(|| panic!("not walked: {schema}")), &instances);
        }
    }

    /// A keyword this walk does not judge leaves the whole schema to jsonschema.
    #[test]
    fn leaves_what_it_does_not_know_to_jsonschema() {
        for schema in [
            json!({"type": "object", "patternProperties": {"^x": {"type": "integer"}}}),
            json!({"properties": {"a": {"if": {"type": "string"}, "then": {"minLength": 2}}}}),
            json!({"$id": "https://example.org/s", "type": "object"}),
            json!({"type": "object", "x-internal": true}),
            json!({"$ref": "other.json#/a"}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
            json!({"items": [{"type": "string"}]}),
            // Applied to the same value again and again: left to jsonschema, never recursed.
            json!({"$ref": "#"}),
            json!({"anyOf": [{"type": "string"}, {"allOf": [{"$ref": "#/$defs/a"}]}], "$defs": {"a": {"not": {"$ref": "#"}}}}),
        ] {
            assert!(walk(&schema).is_none(), "walked {schema}");
        }
    }

    #[test]
    fn a_pointer_through_an_id_is_left_to_jsonschema() {
        // Found by a differential run against jsonschema: inside a resource with an `$id` of its
        // own, a `$ref` resolves against that resource. The walk resolved it against the root
        // and judged `1` valid here (and `"x"` invalid), and the app took the walk's word.
        let schemas = [
            (
                json!({"$ref": "#/$defs/a/properties/b", "$defs": {
                    "a": {"$id": "http://example.com/a", "properties": {"b": {"$ref": "#/$defs/c"}}, "$defs": {"c": {"type": "string"}}},
                    "c": {"type": "integer"}}}),
                [(json!(1), false), (json!("x"), true)],
            ),
            (
                json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a/properties/y"}}, "$defs": {
                    "a": {"$id": "urn:example:a", "type": "string", "properties": {"y": {"items": {"$ref": "#"}}}}}}),
                [(json!({"x": [{}]}), false), (json!({"x": ["s"]}), true)],
            ),
        ];
        for (schema, verdicts) in schemas {
            assert!(walk(&schema).is_none(), "{schema}");
            let compiled = crate::validation::CompiledSchema::compile_for_documents(&schema).unwrap();
            for (instance, valid) in verdicts {
                let document = Document::from_tree(&instance);
                assert_eq!(compiled.document_issues(&document, &[]).is_empty(), valid, "{schema}\n{instance}");
            }
        }
    }
}

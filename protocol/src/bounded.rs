//! Value types whose bounds are part of the wire contract.
//!
//! Every integer that crosses the wire is a JavaScript-safe integer, so a
//! client in any language can hold it without losing precision. These
//! newtypes enforce that (and the tighter bounds some fields carry) when a
//! value is deserialized or constructed, so code holding one never re-checks.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The largest integer a JavaScript number represents exactly (2^53 - 1).
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// A value outside the bounds of its wire type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {actual} is outside {min}..={max}")]
pub struct OutOfRange {
    /// The quantity checked, such as `string length`.
    pub what: &'static str,
    /// The value found, in decimal.
    pub actual: String,
    /// The smallest allowed value, in decimal.
    pub min: String,
    /// The largest allowed value, in decimal.
    pub max: String,
}

/// An unsigned integer in `MIN..=MAX`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bounded<const MIN: u64, const MAX: u64>(u64);

/// A non-negative JavaScript-safe integer (timestamps, counts).
pub type SafeU64 = Bounded<0, MAX_SAFE_INTEGER>;
/// A one-based position in a session's event log (also used for frame indexes).
pub type EventSequence = Bounded<1, MAX_SAFE_INTEGER>;
/// A positive millisecond budget (`timeoutMs`, `actionTimeoutMs`).
pub type RequestTimeoutMs = Bounded<1, MAX_SAFE_INTEGER>;
/// A page size for `events.list` and paged `session.export`.
pub type PageLimit = Bounded<1, 1000>;

impl<const MIN: u64, const MAX: u64> Bounded<MIN, MAX> {
    /// The smallest value of this type.
    pub const MIN: Self = Self(MIN);
    /// The largest value of this type.
    pub const MAX: Self = Self(MAX);

    /// Checks `value` against the bounds.
    pub const fn new(value: u64) -> Result<Self, u64> {
        if value >= MIN && value <= MAX {
            Ok(Self(value))
        } else {
            Err(value)
        }
    }

    /// Like [`Bounded::new`] with a descriptive error.
    pub fn try_new(value: u64) -> Result<Self, OutOfRange> {
        Self::new(value).map_err(|v| OutOfRange {
            what: "integer",
            actual: v.to_string(),
            min: MIN.to_string(),
            max: MAX.to_string(),
        })
    }

    /// Clamps `value` into the bounds (for values the host derives itself,
    /// such as wall-clock milliseconds).
    pub const fn saturating(value: u64) -> Self {
        if value < MIN {
            Self(MIN)
        } else if value > MAX {
            Self(MAX)
        } else {
            Self(value)
        }
    }

    /// The value as a plain `u64`.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The next value, if it is still in bounds.
    pub const fn checked_next(self) -> Option<Self> {
        if self.0 < MAX {
            Some(Self(self.0 + 1))
        } else {
            None
        }
    }
}

impl<const MIN: u64, const MAX: u64> fmt::Debug for Bounded<MIN, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<const MIN: u64, const MAX: u64> fmt::Display for Bounded<MIN, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl<const MIN: u64, const MAX: u64> From<Bounded<MIN, MAX>> for u64 {
    fn from(value: Bounded<MIN, MAX>) -> Self {
        value.0
    }
}

impl<const MIN: u64, const MAX: u64> TryFrom<u64> for Bounded<MIN, MAX> {
    type Error = OutOfRange;
    fn try_from(value: u64) -> Result<Self, Self::Error> {
        Self::try_new(value)
    }
}

impl<const MIN: u64, const MAX: u64> Serialize for Bounded<MIN, MAX> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Bounded<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<const MIN: u64, const MAX: u64>;
        impl<const MIN: u64, const MAX: u64> Visitor<'_> for V<MIN, MAX> {
            type Value = Bounded<MIN, MAX>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an integer in {MIN}..={MAX}")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Bounded::new(v).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                match u64::try_from(v) {
                    Ok(u) => self.visit_u64(u),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Err(E::invalid_type(de::Unexpected::Float(v), &self))
            }
        }
        deserializer.deserialize_u64(V::<MIN, MAX>)
    }
}

impl<const MIN: u64, const MAX: u64> JsonSchema for Bounded<MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        format!("Bounded_{MIN}_{MAX}").into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let format = if MAX <= u64::from(u16::MAX) {
            "uint16"
        } else if MAX <= u64::from(u32::MAX) {
            "uint32"
        } else {
            "uint64"
        };
        json_schema!({
            "type": "integer",
            "format": format,
            "minimum": MIN,
            "maximum": MAX,
        })
    }
}

/// A string whose length in Unicode scalar values is in `MIN..=MAX`
/// (JSON Schema's `minLength`/`maxLength` count code points).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BoundedString<const MIN: usize, const MAX: usize>(String);

impl<const MIN: usize, const MAX: usize> BoundedString<MIN, MAX> {
    /// Checks the length of `value`, counted in Unicode scalar values,
    /// against the bounds.
    pub fn new(value: impl Into<String>) -> Result<Self, OutOfRange> {
        let value = value.into();
        // A string has at most as many characters as bytes, and at least
        // one when it has a byte: short strings need no count.
        let bytes = value.len();
        if bytes <= MAX && (MIN == 0 || (MIN == 1 && bytes > 0)) {
            return Ok(Self(value));
        }
        let len = value.chars().count();
        if len >= MIN && len <= MAX {
            Ok(Self(value))
        } else {
            Err(OutOfRange {
                what: "string length",
                actual: len.to_string(),
                min: MIN.to_string(),
                max: MAX.to_string(),
            })
        }
    }

    /// Truncates to `MAX` characters; pads nothing. Returns `None` if the
    /// result would be shorter than `MIN`. Drivers use this to normalize
    /// platform text that may be arbitrarily long.
    pub fn truncating(value: &str) -> Option<Self> {
        let s: String = if value.len() <= MAX {
            value.to_owned()
        } else {
            value.chars().take(MAX).collect()
        };
        Self::new(s).ok()
    }

    /// Borrows the text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Unwraps the text.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<const MIN: usize, const MAX: usize> std::ops::Deref for BoundedString<MIN, MAX> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<const MIN: usize, const MAX: usize> AsRef<str> for BoundedString<MIN, MAX> {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl<const MIN: usize, const MAX: usize> fmt::Debug for BoundedString<MIN, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<const MIN: usize, const MAX: usize> fmt::Display for BoundedString<MIN, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<const MIN: usize, const MAX: usize> TryFrom<&str> for BoundedString<MIN, MAX> {
    type Error = OutOfRange;
    fn try_from(value: &str) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl<const MIN: usize, const MAX: usize> TryFrom<String> for BoundedString<MIN, MAX> {
    type Error = OutOfRange;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl<const MIN: usize, const MAX: usize> PartialEq<str> for BoundedString<MIN, MAX> {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl<const MIN: usize, const MAX: usize> Serialize for BoundedString<MIN, MAX> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de, const MIN: usize, const MAX: usize> Deserialize<'de> for BoundedString<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Self::new(s).map_err(de::Error::custom)
    }
}

impl<const MIN: usize, const MAX: usize> JsonSchema for BoundedString<MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        format!("BoundedString_{MIN}_{MAX}").into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut schema = json_schema!({ "type": "string" });
        if MAX < usize::MAX {
            schema.insert("maxLength".into(), MAX.into());
        }
        if MIN > 0 {
            schema.insert("minLength".into(), MIN.into());
        }
        schema
    }
}

/// A list whose length is in `MIN..=MAX`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BoundedVec<T, const MIN: usize, const MAX: usize>(Vec<T>);

impl<T, const MIN: usize, const MAX: usize> BoundedVec<T, MIN, MAX> {
    /// Checks the number of `items` against the bounds.
    pub fn new(items: Vec<T>) -> Result<Self, OutOfRange> {
        if items.len() >= MIN && items.len() <= MAX {
            Ok(Self(items))
        } else {
            Err(OutOfRange {
                what: "list length",
                actual: items.len().to_string(),
                min: MIN.to_string(),
                max: MAX.to_string(),
            })
        }
    }

    /// Borrows the items.
    pub fn as_slice(&self) -> &[T] {
        &self.0
    }

    /// Unwraps the items.
    pub fn into_vec(self) -> Vec<T> {
        self.0
    }
}

impl<T, const MAX: usize> Default for BoundedVec<T, 0, MAX> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T, const MIN: usize, const MAX: usize> std::ops::Deref for BoundedVec<T, MIN, MAX> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T: fmt::Debug, const MIN: usize, const MAX: usize> fmt::Debug for BoundedVec<T, MIN, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<T: Serialize, const MIN: usize, const MAX: usize> Serialize for BoundedVec<T, MIN, MAX> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>, const MIN: usize, const MAX: usize> Deserialize<'de>
    for BoundedVec<T, MIN, MAX>
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T, const MIN: usize, const MAX: usize>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const MIN: usize, const MAX: usize> Visitor<'de> for V<T, MIN, MAX> {
            type Value = BoundedVec<T, MIN, MAX>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a list of {MIN}..={MAX} items")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MAX));
                while let Some(item) = seq.next_element()? {
                    if items.len() == MAX {
                        return Err(de::Error::custom(format_args!(
                            "list is longer than {MAX} items"
                        )));
                    }
                    items.push(item);
                }
                BoundedVec::new(items).map_err(de::Error::custom)
            }
        }
        deserializer.deserialize_seq(V::<T, MIN, MAX>(PhantomData))
    }
}

impl<T: JsonSchema, const MIN: usize, const MAX: usize> JsonSchema for BoundedVec<T, MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        format!("BoundedVec_{}_{MIN}_{MAX}", T::schema_name()).into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let items = generator.subschema_for::<T>();
        let mut schema = json_schema!({ "type": "array", "items": items });
        if MAX < usize::MAX {
            schema.insert("maxItems".into(), MAX.into());
        }
        if MIN > 0 {
            schema.insert("minItems".into(), MIN.into());
        }
        schema
    }
}

/// A list that repeats an entry where entries must be unique.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("duplicate entry {entry:?}")]
pub struct DuplicateEntry {
    /// The first entry that repeats an earlier one.
    pub entry: String,
}

/// A list of strings without duplicates, in the order given (feature names).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct UniqueStrings(Vec<String>);

impl UniqueStrings {
    /// Keeps `items` in their order; fails on the first entry that repeats an
    /// earlier one.
    pub fn new(items: Vec<String>) -> Result<Self, DuplicateEntry> {
        let mut seen = std::collections::HashSet::with_capacity(items.len());
        for item in &items {
            if !seen.insert(item.as_str()) {
                return Err(DuplicateEntry {
                    entry: item.clone(),
                });
            }
        }
        Ok(Self(items))
    }

    /// The entries, in order.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// Iterates over the entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// Whether `name` is one of the entries.
    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|s| s == name)
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for UniqueStrings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<S: Into<String>> FromIterator<S> for UniqueStrings {
    /// Collects, dropping later duplicates.
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut out: Vec<String> = Vec::new();
        for s in iter {
            let s = s.into();
            if !out.contains(&s) {
                out.push(s);
            }
        }
        Self(out)
    }
}

impl Serialize for UniqueStrings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for UniqueStrings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let items = Vec::<String>::deserialize(deserializer)?;
        Self::new(items).map_err(de::Error::custom)
    }
}

impl JsonSchema for UniqueStrings {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "UniqueStrings".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "array", "items": { "type": "string" }, "uniqueItems": true })
    }
}

/// A finite `f64` that is not negative (UI rectangle extents).
#[derive(Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct NonNegativeF64(f64);

impl NonNegativeF64 {
    /// `None` for negative, NaN or infinite input.
    pub fn new(value: f64) -> Option<Self> {
        (value.is_finite() && value >= 0.0).then_some(Self(value))
    }

    /// Negative or non-finite input becomes zero.
    pub fn saturating(value: f64) -> Self {
        Self::new(value).unwrap_or_default()
    }

    /// The value as a plain `f64`.
    pub const fn get(self) -> f64 {
        self.0
    }
}

impl fmt::Debug for NonNegativeF64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl Serialize for NonNegativeF64 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.0)
    }
}

impl<'de> Deserialize<'de> for NonNegativeF64 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(deserializer)?;
        Self::new(v).ok_or_else(|| de::Error::custom(format_args!("{v} is negative")))
    }
}

impl JsonSchema for NonNegativeF64 {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "NonNegativeF64".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "number", "format": "double", "minimum": 0.0 })
    }
}

/// Serde helpers for fields whose presence carries meaning.
pub mod presence {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// `false` is the absent form of optional boolean markers.
    pub fn is_false(value: &bool) -> bool {
        !*value
    }

    /// A JSON value that must be present (it may be `null`). Plain serde
    /// would turn a missing `serde_json::Value` field into `null`.
    pub fn required_value<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<serde_json::Value, D::Error> {
        serde_json::Value::deserialize(deserializer)
    }

    /// Three states: absent (`None`), `null` (`Some(None)`), or a value.
    pub mod tristate {
        use super::*;

        /// Writes both `None` and `Some(None)` as `null`; pair it with
        /// `skip_serializing_if = "Option::is_none"` so `None` stays absent.
        pub fn serialize<T: Serialize, S: Serializer>(
            value: &Option<Option<T>>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            match value {
                Some(inner) => inner.serialize(serializer),
                None => serializer.serialize_none(),
            }
        }

        /// Reads a member that is present: `null` becomes `Some(None)`. Pair it
        /// with `#[serde(default)]` so an absent member becomes `None`.
        pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<Option<T>>, D::Error> {
            Option::<T>::deserialize(deserializer).map(Some)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_integer_bounds() {
        assert!(serde_json::from_str::<SafeU64>("9007199254740991").is_ok());
        assert!(serde_json::from_str::<SafeU64>("9007199254740992").is_err());
        assert!(serde_json::from_str::<SafeU64>("-1").is_err());
        assert!(serde_json::from_str::<SafeU64>("1.5").is_err());
        assert!(serde_json::from_str::<SafeU64>("\"1\"").is_err());
        assert!(serde_json::from_str::<EventSequence>("0").is_err());
        assert!(serde_json::from_str::<RequestTimeoutMs>("0").is_err());
        assert!(serde_json::from_str::<PageLimit>("1000").is_ok());
        assert!(serde_json::from_str::<PageLimit>("1001").is_err());
        assert!(serde_json::from_str::<PageLimit>("0").is_err());
    }

    #[test]
    fn bounded_string_counts_scalars() {
        type S = BoundedString<1, 2>;
        assert!(serde_json::from_str::<S>("\"\u{767e}\u{5ea6}\"").is_ok());
        assert!(serde_json::from_str::<S>("\"abc\"").is_err());
        assert!(serde_json::from_str::<S>("\"\"").is_err());
        assert_eq!(
            S::truncating("abcdef").map(|s| s.into_string()),
            Some("ab".into())
        );
    }

    #[test]
    fn bounded_vec_limits() {
        type V = BoundedVec<u8, 1, 2>;
        assert!(serde_json::from_str::<V>("[]").is_err());
        assert!(serde_json::from_str::<V>("[1,2]").is_ok());
        assert!(serde_json::from_str::<V>("[1,2,3]").is_err());
    }

    #[test]
    fn unique_strings_refuse_duplicates() {
        assert!(serde_json::from_str::<UniqueStrings>("[\"a\",\"b\"]").is_ok());
        let err = serde_json::from_str::<UniqueStrings>("[\"a\",\"b\",\"a\"]")
            .err()
            .map(|e| e.to_string());
        // The text reaches clients inside invalid_params reasons.
        assert!(
            err.as_deref()
                .is_some_and(|e| e.starts_with("duplicate entry \"a\"")),
            "{err:?}"
        );
        assert_eq!(
            UniqueStrings::new(vec!["x".into(), "x".into()]),
            Err(DuplicateEntry { entry: "x".into() })
        );
    }

    #[test]
    fn non_negative_float() {
        assert!(serde_json::from_str::<NonNegativeF64>("0").is_ok());
        assert!(serde_json::from_str::<NonNegativeF64>("-0.5").is_err());
    }
}

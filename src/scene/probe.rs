//! What a scene field accepts, found by running the scene's own `Deserialize` along the
//! field's path: at the end of the path it asks for the one type the field holds.
//!
//! RON reports a value that does not fit without the field or the type ("Integer is out of
//! bounds", or "Expected comma" after the `4` of `4.5`); this turns that into "expected a whole
//! number in 0..=4294967295" for the field the position lies in, with no schema kept by hand.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};

use super::locate::Step;

/// The kind of scalar a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expected {
    /// A whole number within `min..=max`.
    Integer {
        /// The smallest value of the type.
        min: i128,
        /// The largest value of the type.
        max: u128,
    },
    /// Any number.
    Number,
    /// `true` or `false`.
    Bool,
    /// A string.
    Text,
}

impl Expected {
    /// Whether RON text `literal` is a value of this kind.
    pub(super) fn accepts(self, literal: &str) -> bool {
        let digits = literal.replace('_', "");
        match self {
            Expected::Integer { min, max } => {
                let (negative, magnitude) = match digits.strip_prefix('-') {
                    Some(m) => (true, m),
                    None => (false, digits.strip_prefix('+').unwrap_or(&digits)),
                };
                let (radix, body) = match magnitude.get(..2) {
                    Some("0x") => (16, &magnitude[2..]),
                    Some("0o") => (8, &magnitude[2..]),
                    Some("0b") => (2, &magnitude[2..]),
                    _ => (10, magnitude),
                };
                match u128::from_str_radix(body, radix) {
                    Ok(v) if negative => min < 0 && v <= min.unsigned_abs(),
                    Ok(v) => v <= max,
                    Err(_) => false,
                }
            }
            Expected::Number => digits.parse::<f64>().is_ok(),
            Expected::Bool => matches!(literal, "true" | "false"),
            Expected::Text => literal.starts_with('"') || literal.starts_with("r#") || literal.starts_with("r\""),
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Integer { min, max } => write!(f, "a whole number in {min}..={max}"),
            Expected::Number => f.write_str("a number"),
            Expected::Bool => f.write_str("`true` or `false`"),
            Expected::Text => f.write_str("a string in double quotes"),
        }
    }
}

/// What the field at `steps` of a `T` holds, when it is a scalar.
pub(super) fn expected<T: DeserializeOwned>(steps: &[Step]) -> Option<Expected> {
    let found = Cell::new(None);
    // The probe always ends the walk with an error; only what it recorded on the way counts.
    let _ = T::deserialize(Probe { steps, found: &found });
    found.get()
}

/// Ends every walk: the probe never produces a value.
#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("probe stopped")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

/// A deserializer that offers exactly the path `steps` and records what is asked for at its end.
#[derive(Clone, Copy)]
struct Probe<'s, 'a> {
    steps: &'s [Step<'a>],
    found: &'s Cell<Option<Expected>>,
}

impl Probe<'_, '_> {
    fn leaf<T>(self, kind: Option<Expected>) -> Result<T, Stop> {
        if self.steps.is_empty() {
            self.found.set(kind);
        }
        Err(Stop)
    }

    fn rest(self) -> Self {
        Probe {
            steps: &self.steps[1..],
            ..self
        }
    }
}

macro_rules! integers {
    ($($method:ident: $ty:ty),*) => {$(
        fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            self.leaf(Some(Expected::Integer { min: <$ty>::MIN as i128, max: <$ty>::MAX as u128 }))
        }
    )*};
}

macro_rules! others {
    ($($method:ident: $kind:expr),*) => {$(
        fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            self.leaf($kind)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Probe<'_, '_> {
    type Error = Stop;

    integers!(
        deserialize_i8: i8, deserialize_i16: i16, deserialize_i32: i32, deserialize_i64: i64,
        deserialize_i128: i128, deserialize_u8: u8, deserialize_u16: u16, deserialize_u32: u32,
        deserialize_u64: u64, deserialize_u128: u128
    );

    others!(
        deserialize_any: None, deserialize_bool: Some(Expected::Bool), deserialize_f32: Some(Expected::Number),
        deserialize_f64: Some(Expected::Number), deserialize_char: None, deserialize_str: Some(Expected::Text),
        deserialize_string: Some(Expected::Text), deserialize_bytes: None, deserialize_byte_buf: None,
        deserialize_unit: None, deserialize_identifier: None, deserialize_ignored_any: None
    );

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.steps.first() {
            Some(Step::Variant("Some")) => visitor.visit_some(self.rest()),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, _: V) -> Result<V::Value, Stop> {
        self.leaf(None)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.steps.first() {
            Some(Step::Index(_)) => visitor.visit_seq(Element(Some(self.rest()))),
            _ => self.leaf(None),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Stop> {
        self.leaf(None)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, _: usize, _: V) -> Result<V::Value, Stop> {
        self.leaf(None)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.steps.first() {
            Some(Step::Field(name)) => visitor.visit_map(Entry {
                key: Some(name),
                value: self.rest(),
            }),
            _ => self.leaf(None),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        match self.steps.first() {
            Some(Step::Variant(name)) => visitor.visit_enum(Variant {
                name,
                value: self.rest(),
            }),
            _ => self.leaf(None),
        }
    }
}

/// The one field of a struct the path goes through.
struct Entry<'s, 'a> {
    key: Option<&'a str>,
    value: Probe<'s, 'a>,
}

impl<'de> de::MapAccess<'de> for Entry<'_, '_> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Stop> {
        match self.key.take() {
            Some(key) => seed.deserialize(key.into_deserializer()).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Stop> {
        seed.deserialize(self.value)
    }
}

/// The one list element the path goes through (every element has the same type).
struct Element<'s, 'a>(Option<Probe<'s, 'a>>);

impl<'de> de::SeqAccess<'de> for Element<'_, '_> {
    type Error = Stop;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Stop> {
        self.0.take().map(|probe| seed.deserialize(probe)).transpose()
    }
}

/// The enum variant the path goes through.
struct Variant<'s, 'a> {
    name: &'a str,
    value: Probe<'s, 'a>,
}

impl<'s, 'a, 'de> de::EnumAccess<'de> for Variant<'s, 'a> {
    type Error = Stop;
    type Variant = Probe<'s, 'a>;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self::Variant), Stop> {
        Ok((seed.deserialize(self.name.into_deserializer())?, self.value))
    }
}

impl<'de> de::VariantAccess<'de> for Probe<'_, '_> {
    type Error = Stop;

    fn unit_variant(self) -> Result<(), Stop> {
        self.leaf(None)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Stop> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Stop> {
        self.leaf(None)
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], visitor: V) -> Result<V::Value, Stop> {
        de::Deserializer::deserialize_map(self, visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scene;

    fn at(steps: &[Step]) -> Option<Expected> {
        expected::<Scene>(steps)
    }

    #[test]
    fn scalars_are_found_through_options_lists_and_variants() {
        use Step::*;
        let u32s = Some(Expected::Integer {
            min: 0,
            max: u32::MAX.into(),
        });
        assert_eq!(at(&[Field("terrain"), Field("size")]), u32s);
        assert_eq!(at(&[Field("chains"), Field("columns")]), u32s);
        assert_eq!(
            at(&[Field("seed")]).map(|e| e.to_string()).as_deref(),
            Some("a whole number in 0..=18446744073709551615")
        );
        assert_eq!(at(&[Field("name")]), Some(Expected::Text));
        let radius = [
            Field("colonize"),
            Field("regions"),
            Index(3),
            Field("shape"),
            Variant("Sphere"),
            Field("radius"),
        ];
        assert_eq!(at(&radius), Some(Expected::Number));
        let blade = [
            Field("grass"),
            Field("species"),
            Index(0),
            Field("blade"),
            Variant("Preset"),
        ];
        assert_eq!(at(&blade), Some(Expected::Text));
        assert_eq!(at(&[Field("chains"), Field("colums")]), None);
        assert_eq!(at(&[Field("chains")]), None);
    }

    #[test]
    fn literals_are_checked_against_the_kind() {
        let u8s = Expected::Integer {
            min: 0,
            max: u8::MAX.into(),
        };
        assert!(u8s.accepts("255") && u8s.accepts("0xff") && u8s.accepts("1_0"));
        assert!(!u8s.accepts("256") && !u8s.accepts("-1") && !u8s.accepts("4.5"));
        let i8s = Expected::Integer {
            min: i8::MIN.into(),
            max: i8::MAX as u128,
        };
        assert!(i8s.accepts("-128") && !i8s.accepts("-129"));
        assert!(Expected::Number.accepts("1e-3") && Expected::Number.accepts("7") && !Expected::Number.accepts("x"));
        assert!(Expected::Bool.accepts("true") && !Expected::Bool.accepts("1"));
    }
}

//! A JSON tree that keeps the order of object members, read through serde_json.
//!
//! `serde_json::Value` sorts object keys (unless the crate-wide `preserve_order` feature is
//! on, which would change every other map in kvbench), but a result file's order carries
//! meaning: rows are listed in table order, blocks in run order, configuration in flag
//! order. So result files are parsed into [`Json`], whose objects are member lists.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// One JSON value; objects keep their members in document order (duplicates too).
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// A number that fits `u64`.
    Uint(u64),
    /// A negative whole number.
    Int(i64),
    Float(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The first member named `key`, when this is an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The members, when this is an object.
    pub fn members(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The value as a float, for any number.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Json::Uint(n) => Some(n as f64),
            Json::Int(n) => Some(n as f64),
            Json::Float(x) => Some(x),
            _ => None,
        }
    }

    /// The value as a whole non-negative number (`12`, or `12.0` as some writers put it).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Json::Uint(n) => Some(n),
            Json::Float(x) if x >= 0.0 && x.fract() == 0.0 && x < u64::MAX as f64 => Some(x as u64),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value written back as compact JSON text (a literal for the JSON writer).
    /// Floats are written as Rust prints them, which is always valid JSON for the finite
    /// values a parsed document can hold.
    pub fn to_literal(&self) -> String {
        let mut out = String::new();
        self.push_literal(&mut out);
        out
    }

    fn push_literal(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Uint(n) => out.push_str(itoa::Buffer::new().format(*n)),
            Json::Int(n) => out.push_str(itoa::Buffer::new().format(*n)),
            Json::Float(x) => {
                let x = if x.is_finite() { *x } else { 0.0 };
                let text = x.to_string();
                out.push_str(&text);
                // `1` would read back as a whole number; keep it a float.
                if !text.contains(['.', 'e', 'E']) {
                    out.push_str(".0");
                }
            }
            Json::String(s) => out.push_str(&serde_json::Value::String(s.clone()).to_string()),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.push_literal(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::String(key.clone()).to_string());
                    out.push(':');
                    value.push_literal(out);
                }
                out.push('}');
            }
        }
    }
}

/// Parses `text`; a syntax error says where: `invalid JSON at line 3, column 5: EOF while
/// parsing an object`.
pub fn parse(text: &str) -> Result<Json, String> {
    serde_json::from_str::<Json>(text).map_err(|e| {
        let full = e.to_string();
        // serde_json appends " at line L column C"; say it once, up front.
        let what = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(what, _)| what);
        format!(
            "invalid JSON at line {}, column {}: {what}",
            e.line(),
            e.column()
        )
    })
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Uint(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(if v >= 0 {
            Json::Uint(v as u64)
        } else {
            Json::Int(v)
        })
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Json>()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            members.push((key, value));
        }
        Ok(Json::Object(members))
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_document_order() {
        let v = parse(r#"{"b": 1, "a": {"z": -2, "y": 1.5}, "c": [true, null, "x"]}"#).unwrap();
        let keys: Vec<&str> = v
            .members()
            .unwrap()
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["b", "a", "c"]);
        let inner: Vec<&str> = v
            .get("a")
            .and_then(Json::members)
            .unwrap()
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(inner, ["z", "y"]);
        assert_eq!(v.get("a").and_then(|a| a.get("z")), Some(&Json::Int(-2)));
        assert_eq!(v.get("b").and_then(Json::as_u64), Some(1));
    }

    #[test]
    fn literals_read_back_the_same() {
        let text = r#"{"s":"q\"\n","n":null,"f":0.5,"w":3.0,"i":-1,"a":[1,{"k":false}]}"#;
        let v = parse(text).unwrap();
        assert_eq!(parse(&v.to_literal()).unwrap(), v);
        assert_eq!(Json::Float(3.0).to_literal(), "3.0");
        assert_eq!(Json::Float(f64::NAN).to_literal(), "0.0");
    }

    /// Found by the `resultfile` fuzz target: serde_json's default float parser may be a
    /// unit in the last place off (`55555555555555560000.0` read as 5.5555555555555566e19),
    /// so a float written back did not read back the same; kvbench enables its exact
    /// (`float_roundtrip`) parser.
    #[test]
    fn every_float_reads_back_exactly() {
        for x in [
            5.555555555555556e19,
            0.1 + 0.2,
            1e300,
            2.2250738585072014e-308,
            123.456,
        ] {
            let literal = Json::Float(x).to_literal();
            assert_eq!(parse(&literal), Ok(Json::Float(x)), "{literal}");
        }
    }

    #[test]
    fn syntax_errors_give_line_and_column_once() {
        let err = parse("{\n  \"a\": 1,\n  \"b\": }").unwrap_err();
        assert_eq!(
            err, "invalid JSON at line 3, column 8: expected value",
            "{err}"
        );
        let err = parse("{\"a\": 1").unwrap_err();
        assert!(
            err.starts_with("invalid JSON at line 1, column 7: EOF"),
            "{err}"
        );
        assert!(parse("").unwrap_err().contains("line 1, column 0"));
    }

    #[test]
    fn whole_floats_count_as_whole_numbers() {
        assert_eq!(Json::Float(12.0).as_u64(), Some(12));
        assert_eq!(Json::Float(12.5).as_u64(), None);
        assert_eq!(Json::Int(-1).as_u64(), None);
        assert_eq!(Json::Float(-0.5).as_f64(), Some(-0.5));
    }
}

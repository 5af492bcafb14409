//! Script-aware size of JSON as it goes on the wire.
//!
//! An agent's context is counted in tokens, not bytes: ASCII runs at about four
//! characters a token while each non-ASCII character costs about one token. The
//! envelope therefore compares payloads by a *weight* of `max(chars, tokens × 4)`,
//! which with fractional tokens is exactly `ascii + 4 × non_ascii`. That weight is
//! additive, so the size of a list is the sum of its elements' sizes plus
//! punctuation, and the trimmer can plan cuts with arithmetic instead of
//! re-serialising the payload for every probe.

use serde::Serialize;
use serde_json::{Map, Value};
use std::io;

/// Size of a compact JSON serialisation, split by script.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Size {
    pub ascii: usize,
    pub non_ascii: usize,
}

impl Size {
    /// The token-normalised size the budget is compared against.
    pub fn weight(self) -> usize {
        self.ascii + 4 * self.non_ascii
    }

    /// Estimated tokens: four ASCII characters a token, one token per other character.
    pub fn tokens(self) -> usize {
        self.ascii.div_ceil(4) + self.non_ascii
    }

    /// Characters, as a person would count them.
    pub fn chars(self) -> usize {
        self.ascii + self.non_ascii
    }

    pub fn of_bytes(bytes: &[u8]) -> Size {
        let mut counter = Counter::default();
        counter.count(bytes);
        counter.size
    }
}

/// Values whose compact JSON size can be computed without serialising them.
pub trait Json {
    fn json_size(&self) -> Size;
}

impl Json for Value {
    fn json_size(&self) -> Size {
        match self {
            Value::Null => Size {
                ascii: 4,
                non_ascii: 0,
            },
            Value::Bool(true) => Size {
                ascii: 4,
                non_ascii: 0,
            },
            Value::Bool(false) => Size {
                ascii: 5,
                non_ascii: 0,
            },
            Value::Number(number) => Size {
                ascii: number_len(number),
                non_ascii: 0,
            },
            Value::String(text) => text.as_str().json_size(),
            Value::Array(items) => {
                let mut size = Size {
                    ascii: 2 + items.len().saturating_sub(1),
                    non_ascii: 0,
                };
                for item in items {
                    size.add(item.json_size());
                }
                size
            }
            Value::Object(fields) => fields.json_size(),
        }
    }
}

impl Json for Map<String, Value> {
    fn json_size(&self) -> Size {
        // braces, commas between members and one colon each
        let mut size = Size {
            ascii: 2 + self.len().saturating_sub(1) + self.len(),
            non_ascii: 0,
        };
        for (key, value) in self {
            size.add(key.as_str().json_size());
            size.add(value.json_size());
        }
        size
    }
}

impl Json for str {
    fn json_size(&self) -> Size {
        let bytes = self.as_bytes();
        let mut size = Size {
            ascii: 2,
            non_ascii: 0,
        };
        if bytes
            .iter()
            .all(|b| (0x20..0x80).contains(b) && *b != b'"' && *b != b'\\')
        {
            size.ascii += bytes.len();
            return size;
        }
        for &byte in bytes {
            size.ascii += ESCAPED_LEN[byte as usize] as usize;
            size.non_ascii += usize::from(byte >= 0xC0);
        }
        size
    }
}

impl Json for String {
    fn json_size(&self) -> Size {
        self.as_str().json_size()
    }
}

impl Size {
    fn add(&mut self, other: Size) {
        self.ascii += other.ascii;
        self.non_ascii += other.non_ascii;
    }
}

/// Characters serde_json writes for each byte of a string: escapes for control
/// characters, quote and backslash; nothing for non-ASCII bytes (counted apart).
const ESCAPED_LEN: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = match byte {
            0x08 | 0x09 | 0x0A | 0x0C | 0x0D | 0x22 | 0x5C => 2,
            0x00..=0x1F => 6,
            0x20..=0x7F => 1,
            _ => 0,
        };
        byte += 1;
    }
    table
};

/// Length of a number as serde_json prints it (itoa for integers, zmij for floats:
/// the formatters serde_json itself uses, so sizes agree to the character).
fn number_len(number: &serde_json::Number) -> usize {
    if let Some(unsigned) = number.as_u64() {
        itoa::Buffer::new().format(unsigned).len()
    } else if let Some(signed) = number.as_i64() {
        itoa::Buffer::new().format(signed).len()
    } else if let Some(float) = number.as_f64() {
        zmij::Buffer::new().format_finite(float).len()
    } else {
        number.to_string().len()
    }
}

/// Size of `value` serialised as compact JSON (what `serde_json::to_vec` would produce).
pub fn measure<T: Json + ?Sized>(value: &T) -> Size {
    value.json_size()
}

/// Weight of `value` serialised as compact JSON.
pub fn weight<T: Json + ?Sized>(value: &T) -> usize {
    value.json_size().weight()
}

/// Size of any serialisable value, by serialising it into a counter.
pub fn measure_serialized<T: Serialize + ?Sized>(value: &T) -> Size {
    let mut counter = Counter::default();
    // Serialising into a counter cannot fail on I/O; a custom Serialize that
    // errors is measured as far as it got.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.size
}

/// An `io::Write` that only counts, so measuring never allocates the text.
#[derive(Default)]
struct Counter {
    size: Size,
}

impl Counter {
    fn count(&mut self, bytes: &[u8]) {
        // Most text is ASCII: whole chunks are checked at once and only chunks
        // holding other characters are counted byte by byte. Continuation bytes
        // (0x80..0xC0) belong to a character already counted by its lead byte.
        for chunk in bytes.chunks(64) {
            if chunk.is_ascii() {
                self.size.ascii += chunk.len();
                continue;
            }
            for &byte in chunk {
                self.size.ascii += usize::from(byte < 0x80);
                self.size.non_ascii += usize::from(byte >= 0xC0);
            }
        }
    }
}

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.count(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Weight of a JSON string literal holding the first `chars` characters of `text`
/// followed by `suffix`, without building it.
pub fn truncated_string_weight(text: &str, chars: usize, suffix: &str) -> usize {
    let cut = char_boundary(text, chars);
    2 + escaped_weight(&text[..cut]) + escaped_weight(suffix)
}

/// Byte offset of the end of the first `chars` characters of `text`.
pub fn char_boundary(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map(|(offset, _)| offset)
        .unwrap_or(text.len())
}

/// Weight of `text` inside a JSON string literal: the same escape table the
/// sizer uses, and four per non-ASCII character.
fn escaped_weight(text: &str) -> usize {
    let size = text.json_size();
    size.weight() - 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ascii_weight_is_length() {
        let value = json!({"a": "hello", "n": [1, 2.5, null, true]});
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(weight(&value), text.len());
        assert_eq!(measure(&value).chars(), text.chars().count());
    }

    #[test]
    fn direct_size_equals_serialised_size() {
        let value = json!({
            "q\"uote": "tab\tnew\nline\u{1}ctl\\slash",
            "uni": "héllo 漢字 😀", "n": [0, -17, 18446744073709551615u64, 1.5, 1e-7, 3.0e300, -0.0],
            "nested": {"a": [], "b": {}, "c": [null, true, false]}
        });
        let text = serde_json::to_vec(&value).unwrap();
        assert_eq!(measure(&value), Size::of_bytes(&text));
        assert_eq!(measure_serialized(&value), Size::of_bytes(&text));
    }

    #[test]
    fn non_ascii_counts_four_per_char() {
        let value = json!("日本語");
        // two quotes plus three characters of weight four
        assert_eq!(weight(&value), 2 + 12);
        assert_eq!(measure(&value).tokens(), 1 + 3);
    }

    #[test]
    fn truncated_string_weight_matches_serialisation() {
        let text = "ab\"c\ndé\u{1}fg 漢字";
        for n in 0..=text.chars().count() {
            let cut: String = text.chars().take(n).collect::<String>() + "…[truncated]";
            assert_eq!(
                truncated_string_weight(text, n, "…[truncated]"),
                weight(&cut),
                "n={n}"
            );
        }
    }
}

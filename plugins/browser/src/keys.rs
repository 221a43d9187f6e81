//! The keys `pressKey` accepts and their DevTools key events.

use crate::cdp::input::KeyStroke;

/// Named keys: (name, DOM `code`, Windows virtual key code, text).
const NAMED: [(&str, &str, u32, Option<&str>); 14] = [
    ("Enter", "Enter", 13, Some("\r")),
    ("Tab", "Tab", 9, None),
    ("Escape", "Escape", 27, None),
    ("Backspace", "Backspace", 8, None),
    ("Delete", "Delete", 46, None),
    ("ArrowLeft", "ArrowLeft", 37, None),
    ("ArrowUp", "ArrowUp", 38, None),
    ("ArrowRight", "ArrowRight", 39, None),
    ("ArrowDown", "ArrowDown", 40, None),
    ("Home", "Home", 36, None),
    ("End", "End", 35, None),
    ("PageUp", "PageUp", 33, None),
    ("PageDown", "PageDown", 34, None),
    ("Space", "Space", 32, Some(" ")),
];

/// The names `pressKey` documents (besides single characters).
pub(crate) fn named_keys() -> Vec<&'static str> {
    NAMED.iter().map(|k| k.0).collect()
}

/// The stroke for `key`: a named key or exactly one character.
pub(crate) fn stroke(key: &str) -> Option<KeyStroke> {
    if let Some((name, code, key_code, text)) = NAMED.iter().find(|k| k.0 == key) {
        let dom_key = if *name == "Space" { " " } else { name };
        return Some(KeyStroke {
            key: dom_key.to_owned(),
            code: (*code).to_owned(),
            key_code: *key_code,
            text: text.map(str::to_owned),
        });
    }
    let mut chars = key.chars();
    let c = chars.next()?;
    if chars.next().is_some() || c.is_control() {
        return None;
    }
    let (code, key_code) = if c.is_ascii_alphabetic() {
        (
            format!("Key{}", c.to_ascii_uppercase()),
            u32::from(c.to_ascii_uppercase()),
        )
    } else if c.is_ascii_digit() {
        (format!("Digit{c}"), u32::from(c))
    } else if c == ' ' {
        ("Space".to_owned(), 32)
    } else {
        (String::new(), 0)
    };
    Some(KeyStroke {
        key: c.to_string(),
        code,
        key_code,
        text: Some(c.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_single_characters() {
        let enter = stroke("Enter").expect("Enter");
        assert_eq!((enter.key_code, enter.text.as_deref()), (13, Some("\r")));
        assert_eq!(stroke("Tab").expect("Tab").text, None);
        let a = stroke("a").expect("a");
        assert_eq!((a.code.as_str(), a.key_code), ("KeyA", 65));
        assert_eq!(stroke("é").expect("é").text.as_deref(), Some("é"));
        assert!(stroke("").is_none());
        assert!(stroke("ab").is_none());
        assert!(stroke("\n").is_none());
        assert!(stroke("enter").is_none());
    }
}

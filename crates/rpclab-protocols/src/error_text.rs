//! Text for error messages: a refusal or a wrong reply is one line that
//! names the value at fault, never a whole request or reply, and says what
//! there is instead. Every error cuts values and lists names the same way.

/// `text` cut to its first `max` characters, with `…` where it was cut
/// (at a character boundary, so any UTF-8 text is safe).
pub(crate) fn shorten(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// Names as an error lists what there is instead: `a, b, c`, or `none`.
pub(crate) fn listed<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let mut names = names.into_iter();
    let Some(first) = names.next() else {
        return "none".to_owned();
    };
    names.fold(first.as_ref().to_owned(), |mut out, name| {
        out.push_str(", ");
        out.push_str(name.as_ref());
        out
    })
}

#[cfg(test)]
mod tests {
    use super::{listed, shorten};

    #[test]
    fn names_are_listed_with_commas_and_none_is_said() {
        assert_eq!(listed(["a", "b", "c"]), "a, b, c");
        assert_eq!(listed(vec!["only".to_owned()]), "only");
        assert_eq!(listed(Vec::<String>::new()), "none");
    }

    #[test]
    fn cuts_at_a_character_boundary_and_marks_the_cut() {
        assert_eq!(shorten("abc".to_owned(), 3), "abc");
        assert_eq!(shorten("abcd".to_owned(), 3), "abc…");
        assert_eq!(shorten("ééé€".to_owned(), 2), "éé…");
        assert_eq!(shorten(String::new(), 0), "");
    }
}

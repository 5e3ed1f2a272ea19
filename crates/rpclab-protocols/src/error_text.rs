//! Text cut short for error messages: a refusal or a wrong reply is one
//! line that names the value at fault, never a whole request or reply.
//! Every error of the generic calls and the templates cuts the same way.

/// `text` cut to its first `max` characters, with `…` where it was cut
/// (at a character boundary, so any UTF-8 text is safe).
pub(crate) fn shorten(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::shorten;

    #[test]
    fn cuts_at_a_character_boundary_and_marks_the_cut() {
        assert_eq!(shorten("abc".to_owned(), 3), "abc");
        assert_eq!(shorten("abcd".to_owned(), 3), "abc…");
        assert_eq!(shorten("ééé€".to_owned(), 2), "éé…");
        assert_eq!(shorten(String::new(), 0), "");
    }
}

//! Whether Go's `net/mail.ParseAddress` takes a string: govalidator's
//! `IsEmail`, which kube-openapi registers for the `email` format (it also
//! wants a non-empty address, which a parsed address always has).
//!
//! Ported from Go 1.24's `src/net/mail/message.go` and, for RFC 2047
//! encoded words, `src/mime/encodedword.go`. A domain literal is Go 1.24's:
//! any IPv4 or IPv6 address between the brackets, without RFC 5321's
//! `IPv6:` tag, which a later Go requires instead.
//!
//! Only acceptance is ported: names are never decoded, and an address is
//! only counted. Input is a `&str`, so Go's invalid UTF-8 errors cannot
//! arise.

use std::net::IpAddr;

/// Whether `value` is one RFC 5322 address (`a@b.c`, `Name <a@b.c>`,
/// `a@b.c (Name)`, or a group holding exactly one of them).
pub(super) fn parses(value: &str) -> bool {
    let mut parser = Parser { s: value };
    parser.address(true) == Some(1) && parser.skip_cfws() && parser.s.is_empty()
}

/// What is left to parse. Every cut is made after an ASCII byte or at a
/// character boundary `str` hands out, so slicing never panics.
struct Parser<'a> {
    s: &'a str,
}

impl<'a> Parser<'a> {
    /// Go's `parseAddress`: how many mailboxes the address names (a group
    /// may name none or several), or `None` where Go errs.
    fn address(&mut self, groups: bool) -> Option<usize> {
        self.skip_space();
        if self.s.is_empty() {
            return None;
        }
        // A bare addr-spec is tried first; a comment after it is its name.
        if self.addr_spec() {
            self.skip_space();
            if self.peek() == Some(b'(') {
                self.display_name_comment()?;
            }
            return Some(1);
        }
        if self.peek() != Some(b'<') {
            self.phrase()?;
        }
        self.skip_space();
        if groups && self.consume(b':') {
            return self.group_list();
        }
        (self.consume(b'<') && self.addr_spec() && self.consume(b'>')).then_some(1)
    }

    /// Go's `consumeGroupList`, after the `:`: mailboxes (no nested
    /// groups) separated by commas, up to a `;`.
    fn group_list(&mut self) -> Option<usize> {
        self.skip_space();
        if self.consume(b';') {
            return self.skip_cfws().then_some(0);
        }
        let mut count = 0;
        loop {
            self.skip_space();
            count += self.address(false)?;
            if !self.skip_cfws() {
                return None;
            }
            if self.consume(b';') {
                return self.skip_cfws().then_some(count);
            }
            if !self.consume(b',') {
                return None;
            }
        }
    }

    /// Go's `consumeAddrSpec`: `local@domain`, the local part a dot-atom
    /// or a non-empty quoted string, the domain a dot-atom or a domain
    /// literal. On failure nothing is consumed.
    fn addr_spec(&mut self) -> bool {
        let start = self.s;
        let parsed = self.local_part() && self.consume(b'@') && self.domain();
        if !parsed {
            self.s = start;
        }
        parsed
    }

    fn domain(&mut self) -> bool {
        self.skip_space();
        match self.peek() {
            None => false,
            Some(b'[') => self.domain_literal(),
            Some(_) => self.atom(true, false).is_some(),
        }
    }

    fn local_part(&mut self) -> bool {
        self.skip_space();
        match self.peek() {
            None => false,
            Some(b'"') => self.quoted_string().is_some_and(|local| !local.is_empty()),
            Some(_) => self.atom(true, false).is_some(),
        }
    }

    /// Go's `consumePhrase`: words (atoms, with dots, or quoted strings),
    /// comments allowed after the first. A word that fails ends the phrase,
    /// which is an error only if it has no word yet; an atom that is an
    /// encoded word in a charset Go cannot decode fails, though it is
    /// consumed.
    fn phrase(&mut self) -> Option<()> {
        let mut words = 0;
        loop {
            if words > 0 && !self.skip_cfws() {
                return None;
            }
            self.skip_space();
            if self.s.is_empty() {
                return Some(());
            }
            let word = if self.peek() == Some(b'"') {
                self.quoted_string().is_some()
            } else {
                self.atom(true, true)
                    .is_some_and(|atom| !undecodable_word(atom.as_bytes()))
            };
            if !word {
                return (words > 0).then_some(());
            }
            words += 1;
        }
    }

    /// Go's `consumeQuotedString`, at a `"`: qtext, spaces and tabs, and
    /// backslash-escaped visible characters or whitespace, up to the
    /// closing `"`. Returns the unquoted text.
    fn quoted_string(&mut self) -> Option<String> {
        let body = self.s.get(1..)?;
        let mut text = String::new();
        let mut escaped = false;
        for (at, c) in body.char_indices() {
            if escaped {
                if !is_vchar(c) && !is_wsp(c) {
                    return None;
                }
                text.push(c);
                escaped = false;
            } else if is_qtext(c) || is_wsp(c) {
                text.push(c);
            } else if c == '"' {
                self.s = &body[at + 1..];
                return Some(text);
            } else if c == '\\' {
                escaped = true;
            } else {
                return None;
            }
        }
        None
    }

    /// Go's `consumeAtom`: a run of atext (and dots, with `dot`). Unless
    /// `permissive`, the dots must separate non-empty atoms. Consumes the
    /// run even when it then fails.
    fn atom(&mut self, dot: bool, permissive: bool) -> Option<&'a str> {
        let end = self.s.find(|c| !is_atext(c, dot)).unwrap_or(self.s.len());
        if end == 0 {
            return None;
        }
        let (atom, rest) = self.s.split_at(end);
        self.s = rest;
        let dots_fit = !atom.starts_with('.') && !atom.contains("..") && !atom.ends_with('.');
        (permissive || dots_fit).then_some(atom)
    }

    /// Go's `consumeDomainLiteral`, at a `[`: dtext up to `]`, which must
    /// be an IP address as Go's `net.ParseIP` reads one (no zone).
    fn domain_literal(&mut self) -> bool {
        if !self.consume(b'[') {
            return false;
        }
        let Some(end) = self.s.find(|c| !is_dtext(c)) else {
            return false;
        };
        let (dtext, rest) = self.s.split_at(end);
        let Some(rest) = rest.strip_prefix(']') else {
            return false;
        };
        self.s = rest;
        dtext.parse::<IpAddr>().is_ok()
    }

    /// Go's `consumeDisplayNameComment`: a comment after an addr-spec,
    /// whose words may be encoded words; one in a charset Go cannot decode
    /// is an error.
    fn display_name_comment(&mut self) -> Option<()> {
        if !self.consume(b'(') {
            return None;
        }
        let comment = self.comment()?;
        let undecodable = comment
            .split(|&b| b == b' ' || b == b'\t')
            .any(undecodable_word);
        (!undecodable).then_some(())
    }

    /// Go's `skipCFWS`: spaces and tabs, and comments among them; false
    /// for an unclosed comment.
    fn skip_cfws(&mut self) -> bool {
        self.skip_space();
        while self.consume(b'(') {
            if self.comment().is_none() {
                return false;
            }
            self.skip_space();
        }
        true
    }

    /// Go's `consumeComment`, after a `(`: up to the matching `)`, nested
    /// parentheses counted, a backslash taking the next byte literally.
    /// Returns the text inside (without the escaping backslashes), or
    /// `None` when the comment does not close.
    fn comment(&mut self) -> Option<Vec<u8>> {
        let bytes = self.s.as_bytes();
        let mut depth = 1_usize;
        let mut text = Vec::new();
        let mut at = 0;
        while at < bytes.len() && depth > 0 {
            let mut c = bytes[at];
            if c == b'\\' && at + 1 < bytes.len() {
                at += 1;
                c = bytes[at];
            } else if c == b'(' {
                depth += 1;
            } else if c == b')' {
                depth -= 1;
            }
            if depth > 0 {
                text.push(c);
            }
            at += 1;
        }
        // Go walks bytes, but stops only after an ASCII `)` or at the end,
        // both character boundaries.
        self.s = self.s.get(at..)?;
        (depth == 0).then_some(text)
    }

    fn skip_space(&mut self) {
        self.s = self.s.trim_start_matches([' ', '\t']);
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().first().copied()
    }

    /// Consumes the ASCII byte `c` if the text starts with it.
    fn consume(&mut self, c: u8) -> bool {
        match self.s.strip_prefix(char::from(c)) {
            Some(rest) => {
                self.s = rest;
                true
            }
            None => false,
        }
    }
}

/// The one way Go's `decodeRFC2047Word` fails: a well-formed encoded word
/// (`=?charset?B|Q?text?=`) whose text decodes, in a charset Go's
/// `mime.WordDecoder` does not handle itself (`net/mail` gives it no
/// charset reader). A malformed encoded word is just a word.
fn undecodable_word(word: &[u8]) -> bool {
    let well_formed = word.len() >= 8
        && word.starts_with(b"=?")
        && word.ends_with(b"?=")
        && word.iter().filter(|&&b| b == b'?').count() == 4;
    if !well_formed {
        return false;
    }
    let mut fields = word[2..word.len() - 2].splitn(3, |&b| b == b'?');
    let (Some(charset), Some(encoding), Some(text)) = (fields.next(), fields.next(), fields.next())
    else {
        return false;
    };
    let decodes = match encoding {
        b"B" | b"b" => base64_decodes(text),
        b"Q" | b"q" => q_decodes(text),
        _ => false,
    };
    decodes && !charset.is_empty() && !native_charset(charset)
}

/// The charsets `mime.WordDecoder` converts without a charset reader,
/// compared as Go's `strings.EqualFold` does: by Unicode simple case
/// folding, under which only `s` among these names' letters has a
/// non-ASCII partner, `ſ` (U+017F).
fn native_charset(charset: &[u8]) -> bool {
    let Ok(charset) = std::str::from_utf8(charset) else {
        return false;
    };
    ["utf-8", "iso-8859-1", "us-ascii"].iter().any(|name| {
        charset.chars().count() == name.len()
            && charset
                .chars()
                .zip(name.chars())
                .all(|(c, n)| c.eq_ignore_ascii_case(&n) || (c == 'ſ' && n == 's'))
    })
}

/// Whether Go's `base64.StdEncoding.DecodeString` takes `text` (padding
/// required, line breaks skipped, trailing bits ignored): the decoder
/// typed fields already use for Go's `[]byte`.
fn base64_decodes(text: &[u8]) -> bool {
    std::str::from_utf8(text)
        .is_ok_and(|text| crate::openapi::go_values::base64_error_offset(text).is_none())
}

/// Whether Go's `qDecode` takes `text`: printable ASCII, tab, CR and LF,
/// with `=` starting two hex digits (either case).
fn q_decodes(text: &[u8]) -> bool {
    let mut at = 0;
    while at < text.len() {
        match text[at] {
            b'=' => {
                let hex_pair = text
                    .get(at + 1..at + 3)
                    .is_some_and(|pair| pair.iter().all(u8::is_ascii_hexdigit));
                if !hex_pair {
                    return false;
                }
                at += 3;
            }
            b' '..=b'~' | b'\t' | b'\n' | b'\r' => at += 1,
            _ => return false,
        }
    }
    true
}

/// RFC 5322 atext (RFC 6532 adds non-ASCII), and `.` where `dot`.
fn is_atext(c: char, dot: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' => false,
        _ => is_vchar(c),
    }
}

fn is_qtext(c: char) -> bool {
    c != '\\' && c != '"' && is_vchar(c)
}

fn is_dtext(c: char) -> bool {
    !matches!(c, '[' | ']' | '\\') && is_vchar(c)
}

/// Visible ASCII, or any non-ASCII character (RFC 6532).
fn is_vchar(c: char) -> bool {
    c.is_ascii_graphic() || !c.is_ascii()
}

fn is_wsp(c: char) -> bool {
    c == ' ' || c == '\t'
}

#[cfg(test)]
mod tests {
    use super::parses;

    /// Cases from Go's message_test.go (TestAddressParsingError,
    /// TestAddressParsing, TestAddressParser, TestAddressString,
    /// TestAddressParsingAndFormatting, TestEmptyAddress), as
    /// ParseAddress answers them in Go 1.24.
    #[test]
    fn follows_go_parse_address() {
        for (value, expected) in [
            // TestAddressParsingError
            (
                "=?iso-8859-2?Q?Bogl=E1rka_Tak=E1cs?= <unknown@gmail.com>",
                false,
            ),
            ("a@gmail.com b@gmail.com", false),
            ("\"\x00\" <null@example.net>", false),
            ("\"\\\x00\" <escaped-null@example.net>", false),
            ("John Doe", false),
            ("<jdoe#machine.example>", false),
            ("John <middle> Doe <jdoe@machine.example>", false),
            ("cfws@example.com (", false),
            ("empty group: ;", false),
            ("root group: embed group: null@example.com;", false),
            ("group not closed: null@example.com", false),
            ("group: first@example.com, second@example.com;", false),
            ("john.doe", false),
            ("john.doe@", false),
            ("John Doe@foo.bar", false),
            (" group: null@example.com; (asd", false),
            (" group: ; (asd", false),
            ("(John) Doe <jdoe@machine.example>", false),
            ("<jdoe@[[192.168.0.1]>", false),
            ("<jdoe@[192.168.0.1>", false),
            ("<jdoe@[256.0.0.1]>", false),
            // TestAddressParsing
            ("jdoe@machine.example", true),
            ("John Doe <jdoe@machine.example>", true),
            ("\"Joe Q. Public\" <john.q.public@example.com>", true),
            ("John (middle) Doe <jdoe@machine.example>", true),
            ("\"John (middle) Doe\" <jdoe@machine.example>", true),
            ("\"John <middle> Doe\" <jdoe@machine.example>", true),
            (
                "Mary Smith <mary@x.test>, jdoe@example.org, Who? <one@y.test>",
                false,
            ),
            ("Joe Q. Public <john.q.public@example.com>", true),
            ("group1: groupaddr1@example.com;", true),
            (
                "A Group:Ed Jones <c@a.test>,joe@where.test,John <jdoe@one.test>;",
                false,
            ),
            (" , joe@where.test,,John <jdoe@one.test>,", false),
            ("=?iso-8859-1?q?J=F6rg_Doe?= <joerg@example.com>", true),
            ("=?us-ascii?q?J=6Frg_Doe?= <joerg@example.com>", true),
            ("=?utf-8?q?J=C3=B6rg_Doe?= <joerg@example.com>", true),
            (
                "=?utf-8?q?J=C3=B6rg?=  =?utf-8?q?Doe?= <joerg@example.com>",
                true,
            ),
            ("=?ISO-8859-1?Q?Andr=E9?= Pirard <PIRARD@vm1.ulg.ac.be>", true),
            ("=?ISO-8859-1?B?SvZyZw==?= <joerg@example.com>", true),
            ("=?UTF-8?B?SsO2cmc=?= <joerg@example.com>", true),
            ("Asem H. <noreply@example.com>", true),
            ("\"Gø Pher\" <gopher@example.com>", true),
            ("µ <micro@example.com>", true),
            ("Micro <µ@example.com>", true),
            ("Micro <micro@µ.example.com>", true),
            ("\"\" <emptystring@example.com>", true),
            ("<cfws@example.com> (CFWS (cfws))  (another comment)", true),
            ("john@example.com (John Doe)", true),
            ("John Doe <john@example.com> (Joey)", true),
            ("john@example.com(John Doe)", true),
            ("asjo@example.com (Adam =?utf-8?Q?Sj=C3=B8gren?=)", true),
            ("asjo@example.com (Adam\t=?utf-8?Q?Sj=C3=B8gren?=)", true),
            (
                "asjo@example.com (Adam =?utf-8?Q?Sj=C3=B8gren?= (Debian))",
                true,
            ),
            ("group (comment:): a@example.com;", true),
            ("x(:\"):\"@a.example;(\"@b.example;", true),
            ("jdoe@[192.168.0.1]", true),
            ("John Doe <jdoe@[192.168.0.1]>", true),
            // TestAddressParser's charsets, which need a charset reader.
            ("=?ISO-8859-15?Q?J=F6rg_Doe?= <joerg@example.com>", false),
            ("=?windows-1252?q?Andr=E9?= Pirard <PIRARD@vm1.ulg.ac.be>", false),
            ("=?ISO-8859-15?B?SvZyZw==?= <joerg@example.com>", false),
            // TestAddressString's round trips
            ("<\"my@idiot@address\"@example.com>", true),
            ("=?utf-8?b?QsO2YiwgSmFjw7Zi?= <bob@example.com>", true),
            ("\"=??Q?x?=\" <hello@world.com>", true),
            ("=?utf-8?q?=ED=A0=80?= <invalid-utf8@example.net>", true),
            // TestAddressParsingAndFormatting
            ("<\".bob\"@example.com>", true),
            ("<\" \"@example.com>", true),
            ("<\"very.unusual.@.unusual.com\"@example.com>", true),
            ("<admin@mailserver1>", true),
            ("<#!$%&'*+-/=?^_`{}|~@example.org>", true),
            (
                "<\"very.(),:;<>[]\\\".VERY.\\\"very@\\\\ \\\"very\\\".unusual\"@strange.example.com>",
                true,
            ),
            ("<\"Abc\\\\@def\"@example.com>", true),
            ("<\"0:\"@0>", true),
            ("<Bob@[192.168.0.1]>", true),
            ("<Abc.example.com>", false),
            ("<A@b@c@example.com>", false),
            ("<a\"b(c)d,e:f;g<h>i[j\\k]l@example.com>", false),
            ("<just\"not\"right@example.com>", false),
            ("<this is\"not\\allowed@example.com>", false),
            ("<this\\ still\\\"not\\\\allowed@example.com>", false),
            ("<john..doe@example.com>", false),
            ("<john.doe@example..com>", false),
            ("<john.doe.@example.com>", false),
            ("<.john.doe@example.com>", false),
            ("<@example.com>", false),
            ("<test@.>", false),
            ("< @example.com>", false),
            ("<\"\"test\"\"blah\"\"@example.com>", false),
            ("<\"\"@0>", false),
            // TestEmptyAddress
            ("", false),
            // The rest of the parser's rules.
            ("Barry Gibbs <bg@example.com>", true),
            ("a@b@c", false),
            ("a@b (=?x-unknown?q?a?=)", false),
            ("a@b (=?x-unknown?q?a=?=)", true),
            ("a@b (=?x-unknown?B?YQ\n==?=)", false),
            ("a@b (=?x-unknown?B?YQ=?=)", true),
            ("a@b (=?x-unknown?B?YR==?=)", false),
            ("a@b (=??q?a?=)", true),
            ("a@b (=?UTF-8?q?a?=)", true),
            ("a@b (=?uſ-aſcii?q?a?=)", true),
            ("Name =?x-unknown?q?a?= <a@b>", true),
            ("a@[::1]", true),
            ("a@[IPv6:::1]", false),
            ("a@[1.2.3.04]", false),
            ("a@b (unclosed", false),
            ("  a@b  ", true),
            ("a @ b", false),
            ("a@ b", true),
            ("a@b.", false),
            ("\"a\"@b", true),
            ("\"\"@b", false),
            ("a@b,", false),
            ("g: a@b; (c)", true),
        ] {
            assert_eq!(parses(value), expected, "{value:?}");
        }
    }
}

//! An XML document (gzip-compressed or not) as a tree of elements: local
//! names, attributes and children; syntax errors name their line. Amalthea
//! files are XMI: every value is an attribute, so text content is dropped.

use crate::error::{FieldError, FieldResult};
use flate2::read::GzDecoder;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use std::io::Read;

/// Deepest element nesting read (Amalthea needs about ten; the limit keeps
/// a hostile file from exhausting memory through the open-element stack).
const MAX_DEPTH: usize = 256;

#[derive(Debug, Clone, Default)]
pub struct Element {
    /// Local name (`tasks`, `runnableItems`).
    pub name: String,
    /// `xsi:type` without its prefix (`Periodic`, `LabelAccess`).
    pub kind: Option<String>,
    /// Other attributes by local name, in document order.
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
}

impl Element {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Children named `name`.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// Every element named `name` below this one, at any depth, in document order.
    pub fn descendants<'a>(&'a self, name: &'a str, out: &mut Vec<&'a Element>) {
        for c in &self.children {
            if c.name == name {
                out.push(c);
            }
            c.descendants(name, out);
        }
    }

    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }
}

/// The root element of `bytes`, gunzipped first when they start with the gzip magic.
pub fn document(bytes: &[u8]) -> FieldResult<Element> {
    let inflated;
    let xml: &[u8] = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        GzDecoder::new(bytes).read_to_end(&mut out).map_err(|e| FieldError::new("(file)", format!("not a readable gzip file: {e}")))?;
        inflated = out;
        &inflated
    } else {
        bytes
    };
    let text = std::str::from_utf8(xml).map_err(|e| FieldError::new("(file)", format!("not valid UTF-8 text (byte {})", e.valid_up_to())))?;
    parse(text)
}

fn parse(text: &str) -> FieldResult<Element> {
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    // Lines are counted incrementally: the reader's position only grows.
    let (mut line, mut counted) = (1usize, 0usize);
    let mut line_at = |pos: usize| {
        let pos = pos.min(text.len());
        if pos < counted {
            // An error reported behind the last element: count from the start.
            (line, counted) = (1, 0);
        }
        line += text.as_bytes()[counted..pos].iter().filter(|&&b| b == b'\n').count();
        counted = pos;
        line
    };
    loop {
        let start = reader.buffer_position() as usize;
        let event = reader.read_event().map_err(|e| {
            let at = reader.error_position() as usize;
            FieldError::new(format!("line {}", line_at(at)), format!("invalid XML: {e}"))
        })?;
        match event {
            Event::Start(e) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(FieldError::new(format!("line {}", line_at(start)), format!("elements nested deeper than {MAX_DEPTH} levels")));
                }
                stack.push(element(&e, || line_at(start))?);
            }
            Event::Empty(e) => {
                let el = element(&e, || line_at(start))?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => return Ok(el),
                }
            }
            Event::End(_) => {
                let el = stack.pop().expect("the reader checks that end tags match");
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => return Ok(el),
                }
            }
            Event::Eof => return Err(FieldError::new("(file)", "no XML root element (empty or cut-off file)")),
            _ => {}
        }
    }
}

/// An element without its children; `line` is asked for only to name a bad attribute.
fn element(e: &BytesStart, mut line: impl FnMut() -> usize) -> FieldResult<Element> {
    let name = text_of(e.local_name().as_ref());
    let mut out = Element { name, ..Element::default() };
    for a in e.attributes() {
        let a = a.map_err(|err| FieldError::new(format!("line {}", line()), format!("invalid XML attribute: {err}")))?;
        let key = text_of(a.key.local_name().as_ref());
        let value = a
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|err| FieldError::new(format!("line {}", line()), format!("invalid XML attribute value: {err}")))?
            .into_owned();
        let prefix = a.key.prefix().map(|p| text_of(p.as_ref()));
        if key == "type" && prefix.as_deref() == Some("xsi") {
            out.kind = Some(value.rsplit(':').next().unwrap_or_default().to_string());
        } else if prefix.as_deref() != Some("xmlns") || key == "am" {
            out.attrs.push((key, value));
        }
    }
    Ok(out)
}

/// A name quick-xml hands over (bytes or text, by version) as a String.
fn text_of<T: AsRef<[u8]> + ?Sized>(name: &T) -> String {
    String::from_utf8_lossy(name.as_ref()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_xml_keeps_attributes_kinds_lines_and_children() {
        let root = document(b"<?xml version=\"1.0\"?>\n<a:R xmlns:a=\"u\" xmlns:xsi=\"x\">\n  <t xsi:type=\"a:Periodic\" name=\"P&amp;Q\"/>\n  <u><v/></u>\n</a:R>").unwrap();
        assert_eq!(root.name, "R");
        assert_eq!(root.children.len(), 2);
        let t = &root.children[0];
        assert_eq!((t.kind(), t.attr("name")), ("Periodic", Some("P&Q")));
        assert_eq!(root.child("u").unwrap().children[0].name, "v");
    }

    #[test]
    fn import_xml_errors_name_the_line() {
        let e = document(b"<a>\n<b>\n</a>").unwrap_err();
        assert_eq!(e.field, "line 3", "{e:?}");
        assert_eq!(document(b"<a>\n\n<b c=\"1\" c=\"2\"/></a>").unwrap_err().field, "line 3");
        assert!(e.reason.starts_with("invalid XML"), "{e:?}");
        assert_eq!(document(b"").unwrap_err().reason, "no XML root element (empty or cut-off file)");
        assert!(document(&[0x1f, 0x8b, 0, 1]).unwrap_err().reason.starts_with("not a readable gzip file"));
    }
}

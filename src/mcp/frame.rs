//! What an MCP answer is written as: a JSON-RPC frame around a result kept in pieces (text built
//! for the answer, compiled in, a cached page or a cached `tools/call` result) so a large shared
//! result is written out without being copied, and the error frame beside it. The dispatcher
//! (`server`) decides what to answer; this module only writes it.

use std::borrow::Cow;

use serde_json::{json, Value};

use super::caching::CacheHint;
use super::era;

/// A JSON-RPC failure: code, message and, for the errors that carry one, `data`.
#[derive(Debug)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: crate::error::bounded(crate::secrets::redact(&message.into()).into_owned()),
            data: None,
        }
    }

    /// `data`, every string in it past what an error echoes cut to its start and its length
    /// (a 500 KB URI is not repeated whole).
    pub(crate) fn with_data(mut self, mut data: Value) -> Self {
        fn bound(value: &mut Value) {
            match value {
                Value::String(text) => *text = crate::error::cut_echo(text),
                Value::Array(items) => items.iter_mut().for_each(bound),
                Value::Object(map) => map.values_mut().for_each(bound),
                _ => {}
            }
        }
        bound(&mut data);
        self.data = Some(data);
        self
    }
}

/// A result's text as an answer holds it: built for this answer, compiled in, or shared with a
/// per-generation cache, with fixed text around it. Kept in pieces so a large shared result
/// (`resources/list` of a big layer) is written out without being copied.
pub struct Body {
    pub(super) before: &'static str,
    pub(super) text: Text,
    pub(super) after: Cow<'static, str>,
    /// The result has a `_meta` of its own (a tool's error): a modern result puts the server's
    /// identity there instead of adding a second one.
    pub(super) own_meta: bool,
    /// A modern result's own fields, written before the members of the text.
    pub(super) lead: String,
    /// Bytes of an owned text left unwritten: its opening brace, when `lead` opened the result.
    pub(super) skip: usize,
    /// How long the result stays fresh and for whom, when its method's results are cacheable.
    pub(super) hint: Option<CacheHint>,
}

pub(super) enum Text {
    Owned(String),
    Static(&'static str),
    /// Text several answers share (a selection's `tools/list`).
    Shared(std::sync::Arc<str>),
    /// One page of a generation's `resources/list` or `skills/list`.
    Page(std::sync::Arc<crate::resolve::Pages>, usize),
    /// A `tools/call` result as the executor's cache keeps it written.
    Answer(std::sync::Arc<crate::executor::Shared>),
}

impl Body {
    pub(super) fn owned(text: String) -> Self {
        Self::around("", Text::Owned(text), "")
    }

    pub(super) fn around(
        before: &'static str,
        text: Text,
        after: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            before,
            text,
            after: after.into(),
            own_meta: false,
            lead: String::new(),
            skip: 0,
            hint: None,
        }
    }

    pub(super) fn parts(&self) -> [&str; 3] {
        let text = match &self.text {
            Text::Owned(s) => &s[self.skip..],
            Text::Static(s) => &s[self.skip..],
            Text::Shared(s) => &s[self.skip..],
            Text::Page(pages, page) => pages.pages[*page].text.as_str(),
            Text::Answer(answer) => &answer.written(tool_result)[self.skip..],
        };
        [self.before, text, &self.after]
    }

    pub(super) fn hinted(mut self, hint: CacheHint) -> Self {
        self.hint = Some(hint);
        self
    }

    /// A modern result: the era's fields first (`lead`, written after the frame head's opening
    /// brace), then this result's own members.
    pub(super) fn modern(mut self, hint: Option<CacheHint>) -> Self {
        const META: &str = "\"_meta\":{";
        let mut meta_merged = false;
        if self.own_meta {
            if let Text::Owned(text) = &mut self.text {
                if let Some(at) = text.find(META) {
                    text.insert_str(at + META.len(), &format!("{},", era::server_info_entry()));
                    meta_merged = true;
                }
            }
        }
        let mut lead = era::result_fields(hint, !meta_merged);
        // The result's own opening brace gives way to the frame head's.
        // It is skipped when written, not removed: a large result is not copied.
        let rest = if self.before.is_empty() {
            match &self.text {
                Text::Owned(text) => &text[1..],
                Text::Static(text) => &text[1..],
                Text::Shared(text) => &text[1..],
                Text::Answer(answer) => &answer.written(tool_result)[1..],
                Text::Page(..) => "",
            }
        } else {
            &self.before[1..]
        };
        let closes = rest.starts_with('}');
        if self.before.is_empty() {
            self.skip = 1;
        } else {
            self.before = &self.before[1..];
        }
        if closes {
            lead.pop();
        }
        self.lead = lead;
        self
    }
}

/// One frame to send back: the JSON-RPC envelope around a result (or a whole error frame).
pub struct Frame {
    head: String,
    body: Option<Body>,
}

impl Frame {
    /// A frame already written out whole (the transport's own parse errors).
    pub(crate) fn whole(text: String) -> Self {
        Self {
            head: text,
            body: None,
        }
    }

    pub(super) fn error(id: &str, error: &RpcError) -> Self {
        Self {
            head: error_frame(id, error),
            body: None,
        }
    }

    pub(super) fn result(id: &str, body: Body) -> Self {
        let mut head = String::with_capacity(id.len() + 32 + body.lead.len());
        head.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
        head.push_str(id);
        head.push_str(",\"result\":");
        if !body.lead.is_empty() {
            head.push('{');
            head.push_str(&body.lead);
        }
        Self {
            head,
            body: Some(body),
        }
    }

    /// The frame's text, in order, without a line end.
    pub(crate) fn pieces(&self) -> impl Iterator<Item = &str> {
        let body = self.body.as_ref().map(Body::parts).unwrap_or(["", "", ""]);
        let tail = if self.body.is_some() { "}" } else { "" };
        std::iter::once(self.head.as_str())
            .chain(body)
            .chain(std::iter::once(tail))
            .filter(|piece| !piece.is_empty())
    }

    /// The length of the frame's line, its line end included.
    pub(crate) fn line_len(&self) -> usize {
        self.pieces().map(str::len).sum::<usize>() + 1
    }

    /// Writes the frame and its line end as one vectored write: a large shared result is not
    /// copied, and a result larger than the writer's buffer leaves in one `writev` with the
    /// envelope around it, so the reader is not woken for a 40-byte head before the page.
    pub(crate) fn write_line_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut slices: Vec<std::io::IoSlice<'_>> = self
            .pieces()
            .chain(std::iter::once("\n"))
            .map(|piece| std::io::IoSlice::new(piece.as_bytes()))
            .collect();
        let mut rest = &mut slices[..];
        while !rest.is_empty() {
            match out.write_vectored(rest) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => std::io::IoSlice::advance_slices(&mut rest, n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The whole frame as one string.
    pub(crate) fn into_text(self) -> String {
        if self.body.is_none() {
            return self.head;
        }
        let mut text = String::with_capacity(self.pieces().map(str::len).sum());
        self.pieces().for_each(|piece| text.push_str(piece));
        text
    }
}

/// A successful `tools/call` result: the answer's compact JSON as the text block and, the same
/// bytes, as `structuredContent`. Built in one buffer: the text (written once per answer, a cache
/// hit reuses it) is escaped into the text block and spliced in as `structuredContent`.
pub(super) fn tool_result(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len() * 2 + 96);
    out.extend_from_slice(br#"{"content":[{"type":"text","text":"#);
    // A `str` always serialises (to a JSON string); nothing here can fail.
    let _ = serde_json::to_writer(&mut out, text);
    out.extend_from_slice(br#"}],"structuredContent":"#);
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(br#","isError":false}"#);
    String::from_utf8(out).unwrap_or_default()
}

/// `id` is JSON text, echoed as is.
pub(super) fn error_frame(id: &str, error: &RpcError) -> String {
    let mut error_value = json!({ "code": error.code, "message": error.message });
    if let Some(data) = &error.data {
        error_value["data"] = data.clone();
    }
    let error = error_value;
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that takes at most `step` bytes a call, across the slices it is given, as a
    /// pipe under pressure or an interrupted `writev` may.
    struct Trickle {
        step: usize,
        written: Vec<u8>,
        calls: usize,
    }

    impl std::io::Write for Trickle {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.write_vectored(&[std::io::IoSlice::new(bytes)])
        }

        fn write_vectored(&mut self, slices: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls % 3 == 0 {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let mut left = self.step;
            for slice in slices {
                let take = slice.len().min(left);
                self.written.extend_from_slice(&slice[..take]);
                left -= take;
                if left == 0 {
                    break;
                }
            }
            Ok(self.step - left)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_line_written_in_parts_is_the_frame_and_its_line_end_byte_for_byte() {
        let page = format!(
            "[{}]",
            vec!["{\"uri\":\"skill://a/SKILL.md\"}"; 50].join(",")
        );
        let expected =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"skills\":{page},\"nextCursor\":\"c\"}}}}\n");
        let frame = Frame::result(
            "7",
            Body::around("{\"skills\":", Text::Owned(page), ",\"nextCursor\":\"c\"}"),
        );
        assert_eq!(frame.line_len(), expected.len());
        for step in [1, 5, 64, expected.len(), expected.len() + 10] {
            let mut out = Trickle {
                step,
                written: Vec::new(),
                calls: 0,
            };
            frame.write_line_to(&mut out).expect("written");
            assert_eq!(
                String::from_utf8_lossy(&out.written),
                expected,
                "step {step}"
            );
        }
    }
}

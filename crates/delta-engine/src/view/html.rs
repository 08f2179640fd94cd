//! What both pages share: HTML escaping, the document frame that inlines `page.css` and
//! `page.js`, and how a status, a cost and a duration are shown.

use std::fmt::Write as _;

use crate::run::RunStatus;

/// `text` escaped for HTML text and attribute values.
pub(super) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// The document's start: everything up to and including `<body>`.
pub(super) fn head(html: &mut String, title: &str, extra_head: &str) {
    let _ = write!(
        html,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\">{extra_head}<title>{}</title>\
         <style>{}</style></head><body>",
        esc(title),
        include_str!("page.css")
    );
}

/// The document's end: the script and the closing tags.
pub(super) fn tail(html: &mut String) {
    let _ = writeln!(
        html,
        "<script>{}</script></body></html>",
        include_str!("page.js")
    );
}

/// The CSS class of a status.
pub(super) fn status_class(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Completed => "status-ok",
        RunStatus::Failed => "status-bad",
        RunStatus::Interrupted | RunStatus::WaitingForInput | RunStatus::Running => "status-warn",
    }
}

/// `$0.0012`.
pub(super) fn cost_text(cost: f64) -> String {
    format!("${cost:.4}")
}

/// `850 ms`, `12.3 s`, `4 min 05 s`.
pub(super) fn duration_text(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} min {:02} s", ms / 60_000, (ms % 60_000) / 1000),
    }
}

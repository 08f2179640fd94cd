//! What both pages share: HTML escaping, the document frame that inlines `page.css` and
//! `page.js`, and how a status, a cost and a duration are shown.

use std::fmt::Write as _;

use delta_engine::run::RunStatus;

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

/// The page's script, inlined by [`tail`].
const SCRIPT: &str = include_str!("page.js");

/// The document's start: everything up to and including `<body>`.
///
/// The Content-Security-Policy lets the page run its own script (by its hash) and its own
/// style, and nothing else: no other script, no fetch, no image, whatever run content
/// (a model's answer, a tool's output) might smuggle in past the escaping.
pub(super) fn head(html: &mut String, title: &str, extra_head: &str) {
    let digest = ring::digest::digest(&ring::digest::SHA256, SCRIPT.as_bytes());
    let hash = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, digest);
    let _ = write!(
        html,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'sha256-{hash}'; base-uri 'none'; \
         form-action 'none'\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\">{extra_head}<title>{}</title>\
         <style>{}</style></head><body>",
        esc(title),
        include_str!("page.css")
    );
}

/// The document's end: the script and the closing tags.
pub(super) fn tail(html: &mut String) {
    let _ = writeln!(html, "<script>{SCRIPT}</script></body></html>");
}

/// The CSS class of a status.
pub(super) fn status_class(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Completed => "status-ok",
        RunStatus::Failed => "status-bad",
        RunStatus::Interrupted | RunStatus::WaitingForInput | RunStatus::Running => "status-warn",
    }
}

/// `$0.0012`; below a cent with three significant digits (`$0.0000135`, where four
/// decimals showed `$0.0000`); `$0` for nothing.
pub(super) fn cost_text(cost: f64) -> String {
    if cost == 0.0 || !cost.is_finite() {
        return "$0".to_owned();
    }
    if cost.abs() >= 0.01 {
        return format!("${cost:.4}");
    }
    // Two digits after the first significant one.
    let leading_zeros = (-cost.abs().log10()).floor();
    let decimals = usize::try_from(leading_zeros as i64 + 3)
        .unwrap_or(4)
        .min(12);
    let text = format!("{cost:.decimals$}");
    format!("${}", text.trim_end_matches('0').trim_end_matches('.'))
}

/// A point in time for people: `2026-11-24 21:21:39 UTC` (the page keeps it on one line).
pub(super) fn time_text(time: delta_engine::run::Timestamp) -> String {
    time.as_datetime()
        .format("%Y-%m-%d %H:%M:%S UTC")
        .to_string()
}

/// `850 ms`, `12.3 s`, `4 min 05 s`.
pub(super) fn duration_text(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} min {:02} s", ms / 60_000, (ms % 60_000) / 1000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_below_a_cent_keep_their_digits() {
        for (cost, shown) in [
            (0.0, "$0"),
            (0.000_013_5, "$0.0000135"),
            (0.000_253_8, "$0.000254"),
            (0.000_1, "$0.0001"),
            (0.009_99, "$0.00999"),
            (0.012_345, "$0.0123"),
            (1.5, "$1.5000"),
        ] {
            assert_eq!(cost_text(cost), shown, "{cost}");
        }
    }
}

//! The model's text as Markdown, safely: whatever the model wrote (it may repeat a web
//! page, or a prompt injection) can format the page but never run in it or load
//! anything. Raw HTML is shown as text, links keep only `http`, `https`, `mailto` and
//! relative targets, and images become links (the page loads nothing). The page's
//! Content-Security-Policy ([`super::html`]) is the second wall.

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, html};

/// `text` rendered as HTML.
#[must_use]
pub fn to_html(text: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM;
    let events = Parser::new_ext(text, options).map(|event| match event {
        // Raw HTML is text: escaped by the writer like any other.
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        // An image would be fetched when the page opens; it is a link to it instead.
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) => Event::Start(Tag::Link {
            link_type: LinkType::Inline,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other @ (Event::Start(_)
        | Event::End(_)
        | Event::Text(_)
        | Event::Code(_)
        | Event::InlineMath(_)
        | Event::DisplayMath(_)
        | Event::FootnoteReference(_)
        | Event::SoftBreak
        | Event::HardBreak
        | Event::Rule
        | Event::TaskListMarker(_)) => other,
    });
    let mut out = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

/// `url` when it cannot run anything (http, https, mailto, or no scheme: a relative
/// link or an anchor), else `#`.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let trimmed = url.trim_start();
    let scheme = trimmed
        .split_once(':')
        .map(|(scheme, _)| scheme)
        .filter(|scheme| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        });
    match scheme.map(str::to_ascii_lowercase).as_deref() {
        None | Some("http" | "https" | "mailto") => url,
        Some(_) => CowStr::Borrowed("#"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_formatted() {
        assert_eq!(
            to_html("**bold** and `code`\n\n- one\n- two\n"),
            "<p><strong>bold</strong> and <code>code</code></p>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n"
        );
    }

    #[test]
    fn html_scripts_and_images_cannot_run_or_load() {
        let html = to_html(
            "<script>alert(1)</script>\n\nhi <img src=x onerror=alert(2)> \
             [a](javascript:alert(3)) [b](JavaScript:alert(4)) ![c](http://x/y.png) \
             [d](https://example.org/) [e](#top) [f](data:text/html,hi)",
        );
        for bad in [
            "<script",
            "<img",
            "href=\"javascript",
            "href=\"JavaScript",
            "href=\"data:",
        ] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(html.contains("<a href=\"http://x/y.png\">c</a>"), "{html}");
        assert!(
            html.contains("<a href=\"https://example.org/\">d</a>"),
            "{html}"
        );
        assert!(html.contains("<a href=\"#top\">e</a>"), "{html}");
    }
}

package results

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Runner-written text (partial reasons, failure reasons, values from a result document)
// reaches status, conditions, Events and report.md. A runner or its script may write
// anything there; these helpers make it one bounded line that cannot fake structure.

// MaxLineLength bounds a runner-written line once made safe (OneLine's usual limit).
const MaxLineLength = 1024

// OneLine returns s as one line of at most limit bytes: invalid UTF-8 dropped, line breaks,
// tabs and every other control or format character (bidi overrides included) replaced by a
// space, runs of spaces collapsed, and the text cut on a rune boundary with "…" when longer.
func OneLine(s string, limit int) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(s, "") {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) || r == utf8.RuneError {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		if b.Len() > limit {
			break
		}
	}
	out := b.String()
	if len(out) <= limit {
		return out
	}
	cut := limit - len("…")
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return out[:max(cut, 0)] + "…"
}

// mdEscaper escapes what Markdown or HTML would read as structure. '_' is left alone:
// scenario names (get_then_update) keep their text, and an intraword '_' is no emphasis; so
// is '>', which opens nothing once '<' is escaped and the text is not at a line's start
// ("p99 12 ms > 10ms" stays as written).
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "[", `\[`, "]", `\]`, "|", `\|`, "#", `\#`, "~", `\~`, "!", `\!`,
	"<", "&lt;", "&", "&amp;",
)

// MarkdownText is s made safe to put inside a Markdown line or table cell: one line
// (OneLine with MaxLineLength), Markdown punctuation backslash-escaped and < and &
// written as HTML entities, so neither a heading, a link, a table break nor raw HTML
// (<script>) can come out of it.
func MarkdownText(s string) string {
	return mdEscaper.Replace(OneLine(s, MaxLineLength))
}

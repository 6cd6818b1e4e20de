package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The manual has one text: docs/usage.md. Each man page carries, after
// the flags cobra lists, the sections of usage.md about its command and
// those every page needs (files, exit statuses), turned into roff here;
// TestManPages then fails when docs/man is not what usage.md gives.

// usagePath is docs/usage.md, from this package.
const usagePath = "../../docs/usage.md"

// manSection is a "## " section of usage.md, and the man page section it
// becomes.
type manSection struct{ heading, title string }

var (
	filesSection = manSection{"Files and environment", "FILES AND ENVIRONMENT"}
	exitSection  = manSection{"Exit statuses", "EXIT STATUS"}
	fstabSection = manSection{"mount(8) and `/etc/fstab`", "FSTAB"}
	logsSection  = manSection{"Logs", "LOGS"}
	holdSection  = manSection{"`rsfs hold DIR` and `rsfs release DIR`", "DETAILS"}
	cacheSection = manSection{"`rsfs cache list` and `rsfs cache prune`", "DETAILS"}
)

// manSections are the sections of usage.md each page carries, in order.
var manSections = map[string][]manSection{
	"rsfs.1":             {fstabSection, filesSection, exitSection, logsSection},
	"rsfs-mount.1":       {{"`rsfs mount URL DIR`", "DETAILS"}, fstabSection, {"What you see", "WHAT YOU SEE"}, {"Extended attributes", "EXTENDED ATTRIBUTES"}, logsSection, filesSection, exitSection},
	"rsfs-inspect.1":     {{"`rsfs inspect URL`", "DETAILS"}, exitSection},
	"rsfs-status.1":      {{"`rsfs status DIR`", "DETAILS"}, exitSection},
	"rsfs-poll.1":        {{"`rsfs poll DIR`", "DETAILS"}, exitSection},
	"rsfs-hold.1":        {holdSection, filesSection, exitSection},
	"rsfs-release.1":     {holdSection, filesSection, exitSection},
	"rsfs-audit.1":       {{"`rsfs audit URL|DIR`", "DETAILS"}, filesSection, exitSection},
	"rsfs-cache.1":       {cacheSection, filesSection, exitSection},
	"rsfs-cache-list.1":  {cacheSection, filesSection, exitSection},
	"rsfs-cache-prune.1": {cacheSection, filesSection, exitSection},
	"rsfs-version.1":     {{"`rsfs version` and `rsfs completion SHELL`", "DETAILS"}, exitSection},
	"rsfs-warm.1":        {{"`rsfs warm PATH...`", "DETAILS"}, {"Offline", "OFFLINE"}, exitSection},
}

// addManual adds to each page the sections of usage.md manSections names,
// before its SEE ALSO.
func addManual(t *testing.T, pages map[string][]byte) {
	t.Helper()
	md, err := os.ReadFile(usagePath)
	require.NoError(t, err)
	sections := usageSections(string(md))
	for name, want := range manSections {
		page, ok := pages[name]
		require.True(t, ok, "manSections names %s, which no command has", name)
		var b strings.Builder
		for _, s := range want {
			body, ok := sections[s.heading]
			require.True(t, ok, "docs/usage.md has no section %q (for %s)", s.heading, name)
			fmt.Fprintf(&b, ".SH %s\n%s\n", s.title, mdToRoff(body))
		}
		head, tail, ok := strings.Cut(string(page), ".SH SEE ALSO")
		require.True(t, ok, "%s has no SEE ALSO", name)
		pages[name] = []byte(head + b.String() + ".SH SEE ALSO" + tail)
	}
}

// usageSections splits usage.md at its "## " headings: each heading's
// text, up to the next.
func usageSections(md string) map[string]string {
	out := map[string]string{}
	var heading string
	var body []string
	flush := func() {
		if heading != "" {
			out[heading] = strings.Join(body, "\n")
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			flush()
			heading, body = h, nil
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

// mdToRoff turns the Markdown usage.md is written in into man(7) roff:
// paragraphs, indented code, lists, tables (a flag a tagged paragraph)
// and "### " headings; inline code bold, links their text.
func mdToRoff(md string) string {
	var b strings.Builder
	for _, block := range strings.Split(strings.Trim(md, "\n"), "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		switch first := lines[0]; {
		case strings.HasPrefix(first, "### "):
			fmt.Fprintf(&b, ".SS %s\n", inline(strings.TrimPrefix(first, "### ")))
			if len(lines) > 1 {
				fmt.Fprintf(&b, ".PP\n%s\n", text(lines[1:]))
			}
		case strings.HasPrefix(first, "    "):
			b.WriteString(".PP\n.RS 4\n.nf\n")
			for _, l := range lines {
				b.WriteString(lineStart(roffEscape(strings.TrimPrefix(l, "    "))) + "\n")
			}
			b.WriteString(".fi\n.RE\n")
		case strings.HasPrefix(first, "|"):
			table(&b, lines)
		case listItem.MatchString(first):
			list(&b, lines)
		default:
			fmt.Fprintf(&b, ".PP\n%s\n", text(lines))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// listItem is the first line of an item of a list: "- ", or "1. ".
var listItem = regexp.MustCompile(`^(- |\d+\. )`)

// list writes each item of a Markdown list as an indented paragraph.
func list(b *strings.Builder, lines []string) {
	var item []string
	mark := ""
	flush := func() {
		if len(item) > 0 {
			fmt.Fprintf(b, ".IP %s 4\n%s\n", mark, text(item))
		}
	}
	for _, l := range lines {
		if m := listItem.FindString(l); m != "" {
			flush()
			mark, item = strings.TrimSpace(m), []string{strings.TrimPrefix(l, m)}
			if mark == "-" {
				mark = `\(bu`
			}
			continue
		}
		item = append(item, strings.TrimSpace(l))
	}
	flush()
}

// table writes a Markdown table, header and rule aside, as tagged
// paragraphs: the first cell the tag; with three columns (flag, default,
// meaning) the default leads the text.
func table(b *strings.Builder, lines []string) {
	for _, row := range lines[min(2, len(lines)):] {
		row = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(row), "|"), "|")
		cells := strings.Split(row, "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		desc := strings.Join(cells[1:], "; ")
		if len(cells) == 3 {
			desc = cells[2]
			if cells[1] != "" {
				desc = "(default: " + cells[1] + ") " + desc
			}
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", text([]string{cells[0]}), text([]string{desc}))
	}
}

// text is the lines of a paragraph in roff, each line its own; inline
// Markdown may span lines.
func text(lines []string) string {
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	out := strings.Split(inline(strings.Join(lines, "\n")), "\n")
	for i, l := range out {
		out[i] = lineStart(l)
	}
	return strings.Join(out, "\n")
}

var (
	mdLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdCode = regexp.MustCompile("`([^`]*)`")
	mdBold = regexp.MustCompile(`\*\*([^*]*)\*\*`)
)

// inline turns a line's Markdown into roff: links their text, code and
// bold in bold.
func inline(s string) string {
	s = roffEscape(mdLink.ReplaceAllString(s, "$1"))
	s = mdCode.ReplaceAllString(s, `\fB$1\fR`)
	return mdBold.ReplaceAllString(s, `\fB$1\fR`)
}

// roffEscape escapes roff's escape character.
func roffEscape(s string) string { return strings.ReplaceAll(s, `\`, `\e`) }

// lineStart keeps a line that starts with a control character (. or ')
// a line of text.
func lineStart(s string) string {
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		return `\&` + s
	}
	return s
}

// TestManPagesCarryTheManual checks what a reader of the pages needs:
// rsfs-mount(1) has the signals, the fstab line, the logs, the files and
// the exit statuses, and the default block size, and every page the exit
// statuses.
func TestManPagesCarryTheManual(t *testing.T) {
	pages := manPages(t, manDate(t))
	mount := string(pages["rsfs-mount.1"])
	for _, want := range []string{
		".SH DETAILS", "SIGHUP", ".SH FSTAB", "fuse.rsfs ro,_netdev", ".SH LOGS", "logrotate",
		".SH FILES AND ENVIRONMENT", "XDG_CACHE_HOME", ".SH EXIT STATUS", "exits 2",
		`\fB--block-size\fP="1MiB"`, ".SS Flags", ".TP\n\\fB--cache-size\\fR\n(default: \\fB256MiB\\fR)",
	} {
		assert.Contains(t, mount, want)
	}
	assert.NotContains(t, mount, "](", "a Markdown link left as it is")
	for name := range manSections {
		assert.Contains(t, string(pages[name]), ".SH EXIT STATUS", name)
	}
}

func TestMdToRoff(t *testing.T) {
	got := mdToRoff("A `code` and [a link](x.md#y).\n.starts with a dot\n\n    $ rsfs a\\b\n\n- one\n  more\n- two\n\n| f | d | m |\n|---|---|---|\n| `--x` | `1` | what |\n| `--y` | | a `b` d |\n\nA `code\nspan` ends.")
	assert.Equal(t, `.PP
A \fBcode\fR and a link.
\&.starts with a dot
.PP
.RS 4
.nf
$ rsfs a\eb
.fi
.RE
.IP \(bu 4
one
more
.IP \(bu 4
two
.TP
\fB--x\fR
(default: \fB1\fR) what
.TP
\fB--y\fR
a \fBb\fR d
.PP
A \fBcode
span\fR ends.`, got)
}

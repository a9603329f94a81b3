// Package docread turns files into document events' text: Markdown and plain text as
// they are, HTML to Markdown-flavoured text (headings kept, scripts and navigation
// dropped), PDF to its text layer. A title comes from the document itself (an HTML
// title, a Markdown heading, a short first line) or else from the file name. It is THE
// reader: `graphrag publish` reads files from disk with it and the query service's
// upload route reads multipart files with it, so a file gives the same document either
// way.
package docread

package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
	"text/template"
)

// The page's parts, inlined into every page.
var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/VERSION
	uplotVersion string
	//go:embed page.js
	pageJS string
	//go:embed page.css
	pageCSS string
	//go:embed page.html.tmpl
	pageTemplate string
)

var pageTmpl = template.Must(template.New("page").Parse(pageTemplate))

// DataJSON returns a page's data JSON (what the page inlines), indented for golden files.
func DataJSON(page any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", " ")
	if err := enc.Encode(page); err != nil {
		return nil, fmt.Errorf("report: data: %w", err)
	}
	return b.Bytes(), nil
}

// writePage writes the HTML page of data (a *RunPage or *ComparePage) titled title.
func writePage(w io.Writer, title string, data any) error {
	b, err := json.Marshal(data) // escapes <, > and &: the data cannot close its script element
	if err != nil {
		return fmt.Errorf("report: data: %w", err)
	}
	version, _, _ := strings.Cut(uplotVersion, "\n")
	err = pageTmpl.Execute(w, map[string]string{"Title": html.EscapeString(title), "Data": string(b),
		"UPlotJS": uplotJS, "UPlotCSS": uplotCSS, "CSS": pageCSS, "PageJS": pageJS, "UPlotVersion": version})
	if err != nil {
		return fmt.Errorf("report: page: %w", err)
	}
	return nil
}

// WriteRun writes the run page (report.html) of in.
func WriteRun(w io.Writer, in RunInput) error {
	p := BuildRun(in)
	return writePage(w, p.Title, p)
}

// PageData returns the data JSON a page inlines (its <script id="data"> element): what the
// page draws, for a reader or a test to hold against the exports.
func PageData(page []byte) ([]byte, error) {
	const open, end = `<script id="data" type="application/json">`, `</script>`
	_, rest, ok := bytes.Cut(page, []byte(open))
	if !ok {
		return nil, fmt.Errorf("report: page: no %s element", open)
	}
	data, _, ok := bytes.Cut(rest, []byte(end))
	if !ok {
		return nil, fmt.Errorf("report: page: the data element does not end")
	}
	return data, nil
}
